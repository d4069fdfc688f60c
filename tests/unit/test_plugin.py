"""The wiring: activate() adds the flags, install() builds the runtime and is the one place listeners are registered."""

from __future__ import annotations

import pytest
from locust import events as global_events
from locust.argument_parser import get_parser
from locust.env import Environment

from llmload.config import add_arguments
from llmload.ladder.shape import LadderShape
from llmload.plugin import activate, install
from llmload.runtime import Runtime
from llmload.users import LLMUser
from llmload.users.context import context_of
from llmload.web.tables import LIVE_TAB, install_web_ui
from tests.helpers.runtime import FakeMaster, FakeWorker, environment
from tests.unit.runtime.test_coordinator import report

EVENTS = ("test_start", "test_stop", "quitting", "spawning_complete", "report_to_master", "worker_report")


class U(LLMUser):
    pass


class Ladder(LadderShape):
    pass


def handlers(events) -> dict[str, int]:
    return {name: len(getattr(events, name)._handlers) for name in EVENTS}


def real_env(monkeypatch, *args: str, web_ui: bool = False, shape=None) -> Environment:
    monkeypatch.setattr("sys.argv", ["locust"])  # the web UI reads extra options from argv
    parser = get_parser()
    add_arguments(parser)
    opts = parser.parse_args(["--host", "http://127.0.0.1:9", "--model", "m", "--no-preflight", "--web-port", "0", *args])
    env = Environment(user_classes=[U], host=opts.host, parsed_options=opts, events=type(global_events)(),
                      shape_class=shape)  # fmt: skip
    env.create_local_runner()
    if web_ui:
        env.create_web_ui("127.0.0.1", 0)
    return env


@pytest.fixture
def envs():
    made = []
    yield made
    for env in made:
        if isinstance(getattr(env, "llmload", None), Runtime):
            env.llmload.on_quitting()
        if getattr(env, "web_ui", None) is not None and env.web_ui.greenlet is not None:
            env.web_ui.greenlet.kill(block=False)
        if env.runner is not None and hasattr(env.runner, "greenlet") and env.runner.greenlet is not None:
            env.runner.quit()


def test_activate_adds_the_flags_with_the_locustfiles_defaults_and_installs_on_init():
    events = type(global_events)()
    activate(events, api="stream", ladder="1,2")
    parser = get_parser()
    events.init_command_line_parser.fire(parser=parser)
    opts = parser.parse_args([])
    assert (opts.api, opts.ladder) == ("stream", "1,2")
    assert len(events.init._handlers) == 1


def test_install_builds_the_runtime_and_registers_each_listener_once(monkeypatch, envs):
    env = real_env(monkeypatch, web_ui=True, shape=Ladder())
    envs.append(env)
    before = handlers(env.events)
    runtime = install(env)
    assert env.llmload is runtime and context_of(env) is runtime.load
    after = handlers(env.events)
    assert {k: after[k] - before[k] for k in EVENTS} == dict.fromkeys(EVENTS, 1)
    assert len(env.events.llmload_request._handlers) == 1  # the recorder
    assert env.shape_class._driver is runtime.coordinator.driver
    assert [t["key"] for t in env.web_ui.template_args["extended_tabs"]][0] == LIVE_TAB
    again = handlers(env.events)
    install_web_ui(env, runtime.coordinator.views)  # the web UI module registers no listener of its own
    assert handlers(env.events) == again


def test_records_reach_the_recorder_through_the_event(monkeypatch, envs):
    from tests.unit.runtime.test_load_role import finished

    env = real_env(monkeypatch)
    envs.append(env)
    runtime = install(env)
    env.events.llmload_request.fire(record=finished(), environment=env)
    assert runtime.load.recorder.snapshot().overall().counters["ok"] == 1


def test_bad_flags_exit_2_with_one_line(monkeypatch, envs, capsys):
    env = real_env(monkeypatch, "--extra-body", "{x")
    envs.append(env)
    with pytest.raises(SystemExit) as e:
        install(env)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("llmload: error: --extra-body: not valid JSON")


def test_a_bad_value_from_the_environment_names_the_variable(monkeypatch, envs, capsys):
    monkeypatch.setenv("LLMLOAD_TTFT_TIMEOUT", "abc")
    events = type(global_events)()
    activate(events)
    parser = get_parser()
    events.init_command_line_parser.fire(parser=parser)  # what Locust's get_parser() does
    opts = parser.parse_args(["--host", "http://127.0.0.1:9", "--model", "m", "--no-preflight"])
    env = Environment(user_classes=[U], host=opts.host, parsed_options=opts, events=events)
    env.create_local_runner()
    envs.append(env)
    with pytest.raises(SystemExit) as e:
        events.init.fire(environment=env, runner=env.runner, web_ui=None)
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "llmload: error: LLMLOAD_TTFT_TIMEOUT=abc: --ttft-timeout 'abc': must be a duration such as 30s, 2m, 1h30m "
        "or 250ms"
    ]


def test_a_worker_takes_the_masters_step_messages():
    runner = FakeWorker()
    env = environment(runner)
    runtime = install(env)
    assert runtime.role == "worker" and runtime.coordinator is None
    handler = runner.handlers["llmload_step"]
    handler(type("Msg", (), {"data": {"i": 4, "steady": True}})())
    assert runtime.load.steady_step == 4
    runtime.on_quitting()


def test_a_master_takes_its_workers_stop_and_done_reports():
    runner = FakeMaster()
    env = environment(runner, "--runs-dir", "")
    runtime = install(env)
    assert "llmload_step" not in runner.handlers
    for kind in ("llmload_stop_report", "llmload_done_report"):
        runner.handlers[kind](type("Msg", (), {"node_id": "w1", "data": {"llmload": report(n=2)}})())
    assert runtime.coordinator.views.snapshot().run.overall().counters["ok"] == 4
    runtime.on_quitting()
