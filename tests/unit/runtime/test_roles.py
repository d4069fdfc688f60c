"""The three roles: the parts each builds and the behaviour each needs (what the runtime no longer branches on)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from locust.runners import STATE_CLEANUP

from llmload.config import RunConfig, read
from llmload.ladder import StepTracker
from llmload.runtime.roles import DONE_REPORT, SCHEDULE_LEAD_S, Master, Standalone, Worker, make_role
from tests.helpers.runtime import FakeLocal, FakeMaster, FakeWorker, environment


def role(runner, *args: str):
    env = environment(runner, *args)
    return make_role(env, StepTracker(), clock=lambda: 100.0), env


def config(env, **flags) -> RunConfig:
    return RunConfig.from_values({**read(env.parsed_options), **flags})


def test_each_runner_gets_its_role_and_its_parts():
    standalone, _ = role(FakeLocal())
    master, _ = role(FakeMaster())
    worker, _ = role(FakeWorker())
    assert isinstance(standalone, Standalone) and isinstance(master, Master) and isinstance(worker, Worker)
    assert (standalone.name, master.name, worker.name) == ("standalone", "master", "worker")
    assert standalone.load is not None and standalone.drain is not None and not standalone.coordinator.master
    assert master.load is None and master.drain is None and master.coordinator.master
    assert worker.load is not None and worker.drain is not None and worker.coordinator is None
    assert worker.options._worker and not master.options._worker  # a worker reads what its master forwards


def test_a_signal_always_ends_a_workers_test_and_a_headless_ones_elsewhere():
    for runner in (FakeLocal(), FakeMaster()):
        assert not role(runner)[0].arms_interrupt() and role(runner, "--headless")[0].arms_interrupt()
    assert role(FakeWorker())[0].arms_interrupt()


def test_a_second_signal_quits_a_master_stops_one_process_now_and_is_the_drain_guards_on_a_worker(caplog):
    assert role(FakeWorker())[0].give_up() is None
    master_runner = FakeMaster()
    master, _ = role(master_runner)
    with caplog.at_level(logging.WARNING, logger="llmload"):
        master.give_up()()
    assert (master_runner.stop_called, master_runner.quit_called) == (0, 1) and "not waiting for the workers" in caplog.text
    runner = FakeLocal()
    runner.state = STATE_CLEANUP  # a graceful stop under way: its users are stopped at once
    stopped = []
    runner.user_greenlets = [SimpleNamespace(args=(SimpleNamespace(stop=lambda force: stopped.append(force)),))]
    standalone, env = role(runner)
    env.stop_timeout = 30.0
    standalone.give_up()()
    assert (runner.stop_called, runner.quit_called, env.stop_timeout, stopped) == (1, 1, 0, [True])


def test_only_a_worker_takes_a_share_of_the_arrivals(caplog):
    assert role(FakeLocal())[0].schedule() == (0, 1, None)
    runner = FakeWorker(worker_index=3)
    runner.client_id = "w2"
    worker, _ = role(runner)
    assert worker.worker_index() == 3 and role(FakeLocal())[0].worker_index() is None
    with caplog.at_level(logging.WARNING, logger="llmload"):
        assert worker.schedule() is None  # joined after the master handed out the shares
    assert "joined after the open-loop test started" in caplog.text
    worker.options.forward_schedule(["w1", "w2"], 123.0)  # as the master's spawn message brings it
    assert worker.schedule() == (1, 2, 123.0)


def test_a_master_of_an_open_loop_run_forwards_the_strides_and_starts_the_schedule_ahead(caplog):
    runner = FakeMaster()
    runner.clients = SimpleNamespace(all=[], ready=[SimpleNamespace(id="b")], running=[SimpleNamespace(id="a")], spawning=[])
    runner.target_user_count = 1
    master, env = role(runner)
    closed, open_loop = config(env), config(env, arrival="poisson", rate=10.0)
    assert master.schedule_lead_s(closed) == 0.0 and master.schedule_lead_s(open_loop) == SCHEDULE_LEAD_S
    assert role(FakeLocal())[0].schedule_lead_s(open_loop) == 0.0  # one process: nothing to send first
    master.forward_schedule(closed)
    assert master.options.schedule("a") is None  # a closed loop without --warmup: nothing to share
    with caplog.at_level(logging.WARNING, logger="llmload"):
        master.forward_schedule(open_loop)
    assert master.options.schedule("a")[:2] == (0, 2) and master.options.schedule("b")[:2] == (1, 2)
    assert "-u 1 is below the 2 workers" in caplog.text


def test_a_workers_trace_share_done_goes_to_the_master_at_once():
    runner = FakeWorker()
    worker, env = role(runner)
    worker.load.configure(config(env))
    worker.report_done()
    ((kind, data),) = runner.sent
    assert kind == DONE_REPORT and data["llmload"]["final"] is False
