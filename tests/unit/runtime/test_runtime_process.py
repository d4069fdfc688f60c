"""Which roles a Locust process plays, its configuration per test, and the events routed to the roles."""

from __future__ import annotations

import pytest
from runtime_helpers import FakeLocal, FakeMaster, FakeWorker, environment

from llmload.errors import ConfigError
from llmload.runtime import process as process_module
from llmload.runtime.process import Runtime, role_of


def test_roles_follow_the_runner():
    assert role_of(None) == "standalone" and role_of(FakeLocal()) == "standalone"
    assert role_of(FakeMaster()) == "master" and role_of(FakeWorker()) == "worker"
    standalone = Runtime(environment(FakeLocal()))
    assert standalone.load is not None and standalone.coordinator is not None  # standalone composes both
    master = Runtime(environment(FakeMaster()))
    assert master.load is None and master.coordinator is not None
    worker = Runtime(environment(FakeWorker()))
    assert worker.load is not None and worker.coordinator is None
    for r in (standalone, master, worker):
        r.on_quitting()


def test_bad_input_is_a_config_error_before_any_load():
    with pytest.raises(ConfigError, match="--ttft-timeout 'soon'"):
        Runtime(environment(FakeLocal(), "--ttft-timeout", "soon"))
    with pytest.raises(ConfigError, match="nope"):
        Runtime(environment(FakeWorker(), "--profile", "nope"))


def test_the_model_is_discovered_once_by_the_coordinator_and_forwarded(monkeypatch):
    asked = []
    monkeypatch.setattr(process_module, "discover_model", lambda host, key: asked.append(host) or "served-model")
    env = environment(FakeMaster())
    env.parsed_options.model = ""
    r = Runtime(env)
    assert r.config.adapter.model == "served-model" and not r.config.model_auto
    assert env.parsed_options.model == "served-model" and asked == ["http://127.0.0.1:9"]
    r.configure()  # the next test start: the forwarded model is read back, not asked again
    assert asked == ["http://127.0.0.1:9"]
    worker_env = environment(FakeWorker())
    worker_env.parsed_options.model = ""
    assert Runtime(worker_env).config.model_auto and len(asked) == 1  # workers never ask


def test_a_bad_value_at_a_test_start_ends_the_test_with_exit_code_2():
    runner = FakeLocal()
    env = environment(runner)
    r = Runtime(env)
    env.parsed_options.stall_timeout = "later"  # as the web UI form would hand it over
    r.on_test_start()
    assert env.process_exit_code == 2 and runner.quit_called == 1
    r.on_quitting()


def test_a_standalone_test_folds_its_own_reports_and_summarises():
    env = environment(FakeLocal(users=1), "--runs-dir", "")
    r = Runtime(env)
    r.on_test_start()
    assert r.load.dump is None
    from test_runtime_load import finished

    r.load.on_record(finished())
    r.on_spawned(1)
    r.on_test_stop()
    assert r.coordinator.last_summary["overall"]["ok"] == 1
    r.on_quitting()


def test_workers_ship_reports_and_masters_merge_them():
    from test_runtime_load import finished

    worker_env = environment(FakeWorker(users=2))
    worker = Runtime(worker_env)
    worker.load.on_record(finished())
    data: dict = {}
    worker.on_report_to_master(data)
    assert data["llmload"]["g"]["users"] == 2 and data["llmload"]["final"] is False
    master = Runtime(environment(FakeMaster()))
    master.on_worker_report("w1", data)
    master.on_worker_report("w2", {})  # a worker without llmload: nothing to merge
    assert master.coordinator.snapshot().run.overall().counters["ok"] == 1
    worker.on_step_message(type("Msg", (), {"data": {"i": 0, "steady": True}})())
    assert worker.load.steady_step == 0
    for r in (worker, master):
        r.on_quitting()
