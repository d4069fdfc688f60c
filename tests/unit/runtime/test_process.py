"""Which roles a Locust process plays, its configuration per test, and the events routed to the roles."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import gevent
import pytest

from llmload.errors import ConfigError
from llmload.runtime import process as process_module
from llmload.runtime.process import Runtime, role_of
from tests.helpers.runtime import FakeLocal, FakeMaster, FakeWorker, environment


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
    from tests.unit.runtime.test_load_role import finished

    r.load.on_record(finished())
    r.on_spawned(1)
    r.on_test_stop()
    assert r.coordinator.last_summary["overall"]["ok"] == 1
    r.on_quitting()


def test_workers_ship_reports_and_masters_merge_them():
    from tests.unit.runtime.test_load_role import finished

    worker_env = environment(FakeWorker(users=2))
    worker = Runtime(worker_env)
    worker.load.on_record(finished())
    data: dict = {}
    worker.on_report_to_master(data)
    assert data["llmload"]["g"]["users"] == 2 and data["llmload"]["final"] is False
    master = Runtime(environment(FakeMaster()))
    master.on_worker_report("w1", data)
    master.on_worker_report("w2", {})  # a worker without llmload: nothing to merge
    assert master.coordinator.views.snapshot().run.overall().counters["ok"] == 1
    worker.on_step_message(type("Msg", (), {"data": {"i": 0, "steady": True}})())
    assert worker.load.steady_step == 0
    for r in (worker, master):
        r.on_quitting()


def _trace_file(tmp_path, times_ms=(0, 5, 10)):
    from llmload.workload.traces import TraceEntry, trace_lines

    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines([TraceEntry(float(t), 600, 3, (7,) if i else ()) for i, t in enumerate(times_ms)]))
    return path


def test_a_trace_replay_sends_each_entry_and_ends_the_test_once_all_are_answered(tmp_path):
    """Entry i's request comes with ticket i; the test stops (headless: quits) only after the last answer."""
    import gevent

    from llmload.workload.traces import TRACE_CLASS

    path = _trace_file(tmp_path)
    runner = FakeLocal(users=2)
    env = environment(runner, "--headless", "--runs-dir", "", "--trace", str(path), "--trace-speedup", "2")
    r = Runtime(env)
    assert r.coordinator.setup.profile.class_names == (TRACE_CLASS,) and r.coordinator.setup.trace is not None
    r.on_test_start()
    sampler = r.load.new_sampler()
    tickets = [r.load.take_ticket() for _ in range(3)]  # released 0, 2.5, 5 ms after the start
    samples = [r.load.ticket_sample(t, sampler) for t in tickets]
    assert [t.index for t in tickets] == [0, 1, 2] and [s.class_name for s in samples] == [TRACE_CLASS] * 3
    assert [s.input_tokens for s in samples] == [600, 600, 600] and samples[1].prompt[:200] == samples[2].prompt[:200]
    gevent.sleep(0.01)  # the dispatcher's loop returns after the last entry
    from tests.unit.runtime.test_load_role import finished

    for i, t in enumerate(tickets):
        r.plays.merge_local()
        r.plays.end_replay()
        assert runner.quit_called == 0, f"stopped with {3 - i} requests unanswered"
        rec = finished()
        rec.class_name, rec.intended_ns, rec.arrival_index = TRACE_CLASS, t.intended_ns, t.index
        r.load.finish(rec)
        r.load.on_record(rec)
    r.plays.merge_local()
    r.plays.end_replay()
    assert runner.quit_called == 1
    r.on_test_stop()
    arrival = r.coordinator.last_summary["arrival"]
    assert arrival["mode"] == "trace" and arrival["arrivals"] == 3
    assert arrival["trace"] == {"file": str(path), "entries": 3, "speedup": 2.0, "span_s": 0.005, "block_reuse": 0.5,
                                "sent": 3, "complete": True}  # fmt: skip
    assert arrival["offered_rate"] == 600.0  # 3 entries over the 5 ms span
    r.on_quitting()


def test_a_session_trace_schedules_first_turns_and_ends_only_when_every_session_has(tmp_path):
    """A trace of one single entry and one session of two turns: two arrivals; the session's ticket is the whole
    session, replayed by its user, and the replay ends after its last turn, not its first."""
    from llmload.workload.replay_session import ReplaySession
    from llmload.workload.trace_sessions import SessionTurn
    from llmload.workload.traces import TraceEntry, trace_lines
    from tests.unit.runtime.test_load_role import finished

    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines([TraceEntry(0.0, 50, 3), TraceEntry(4.0, 20, 3, (), SessionTurn("s", 1, user_tokens=20)),
                                  TraceEntry(60_000.0, 40, 3, (), SessionTurn("s", 2, wait_ms=1.0, user_tokens=9))]))  # fmt: skip
    runner = FakeLocal(users=2)
    r = Runtime(environment(runner, "--headless", "--runs-dir", "", "--trace", str(path)))
    r.on_test_start()
    sampler = r.load.new_sampler()
    single, first = r.load.take_ticket(), r.load.take_ticket()  # the second turn, a minute later, is no arrival
    assert (single.index, first.index) == (0, 1)
    gevent.sleep(0.01)
    assert r.load.dispatcher.exhausted
    rec = finished()
    rec.intended_ns = single.intended_ns
    r.load.finish(rec)  # the single entry's answer
    replay = r.load.ticket_sample(first, sampler)
    assert isinstance(replay, ReplaySession) and replay.id == "s"
    sent = []

    def send(sample, **fields):
        rec = finished()
        rec.intended_ns, rec.arrival_index, rec.turn = fields["intended_ns"], fields["arrival_index"], sample.turn
        r.load.finish(rec)
        r.plays.merge_local()
        r.plays.end_replay()
        sent.append((sample.turn, fields["arrival_index"], runner.quit_called))
        return rec

    replay.run(send, lambda s: None, first.intended_ns)
    assert sent == [(1, 1, 0), (2, 2, 0)]  # neither answer ended the replay: the session had not ended yet
    r.plays.merge_local()
    r.plays.end_replay()
    assert runner.quit_called == 1
    r.on_test_stop()
    trace = r.coordinator.last_summary["arrival"]["trace"]
    assert trace["entries"] == 2 and trace["sent"] == 2 and trace["complete"]  # arrivals: a single entry, a session
    r.on_quitting()


def test_a_trace_replay_cut_short_says_how_much_was_sent(tmp_path):
    path = _trace_file(tmp_path, (0, 60_000))  # the second entry a minute later
    env = environment(FakeLocal(users=1), "--runs-dir", "", "--trace", str(path))
    r = Runtime(env)
    r.on_test_start()
    r.load.take_ticket()
    r.on_test_stop()
    summary = r.coordinator.last_summary
    assert summary["arrival"]["trace"]["sent"] == 1 and not summary["arrival"]["trace"]["complete"]
    assert any("the trace was not replayed to its end: 1 of its 2 entries were sent" in w for w in summary["warnings"])
    r.on_quitting()


def test_a_bad_trace_is_one_line_before_any_load(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0, "input_length": 5}\n')
    with pytest.raises(ConfigError, match=r"^trace '.*bad.jsonl': line 1: missing 'output_length'"):
        Runtime(environment(FakeLocal(), "--trace", str(bad)))


def test_a_worker_sends_its_stop_report_before_locust_says_it_stopped_and_is_ready_at_once():
    """Locust's worker sends client_stopped after test_stop and then sleeps stop_timeout (600 s after a
    ladder) before client_ready: the master would have no worker for the next test."""
    from tests.unit.runtime.test_load_role import finished

    runner = FakeWorker(users=2)
    env = environment(runner)
    worker = Runtime(env)
    env.stop_timeout = 600.0  # a ladder's, from the spawn message
    worker.on_test_start()
    worker.load.on_record(finished())
    worker.on_test_stop()
    assert env.stop_timeout == 0.0
    ((kind, data),) = runner.sent
    assert kind == process_module.STOP_REPORT and data["llmload"]["final"] is True
    master = Runtime(environment(FakeMaster()))
    master.on_test_start()
    master.on_stop_report("w1", data)
    assert master.coordinator.views.snapshot().run.overall().counters["ok"] == 1
    for r in (worker, master):
        r.on_quitting()


def test_a_master_test_started_before_the_last_summary_was_written_keeps_both_apart(monkeypatch, tmp_path):
    """The web UI: stop, then start again within FINAL_REPORT_WAIT_S; each test's summary holds its own counts
    (the waiting write used to summarise the new test a few seconds in, and the stopped one never)."""
    from llmload.runtime import coordinator as coordinator_module
    from tests.unit.runtime.test_coordinator import report

    monkeypatch.setattr(coordinator_module, "FINAL_REPORT_WAIT_S", 0.0)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    env = environment(FakeMaster(), "--runs-dir", "", "--summary-json", str(first))
    master = Runtime(env)
    master.on_test_start()
    master.on_spawned(4)
    master.on_worker_report("w1", {"llmload": report(n=3)})
    master.on_test_stop()  # no stop report from w1 (e.g. an older worker): the summary waits
    env.parsed_options.summary_json = str(second)  # the form of the next test
    master.on_test_start()
    master.on_spawned(1)
    gevent.sleep(0.01)  # the first test's waiting write is due (FINAL_REPORT_WAIT_S is 0 here)
    master.on_worker_report("w1", {"llmload": report(n=2)})
    master.on_stop_report("w1", {"llmload": report(n=0)})
    master.on_test_stop()
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    assert (a["overall"]["ok"], a["users_max"]) == (3, 4) and (b["overall"]["ok"], b["users_max"]) == (2, 1)
    master.on_quitting()


def test_a_workers_trace_share_done_is_reported_at_once_and_the_master_ends_the_replay(tmp_path):
    """Not at the worker's next 3 s report and the master's next 3 s check: a 3.2 s replay read 8.0 s."""
    from tests.unit.runtime.test_load_role import finished

    path = _trace_file(tmp_path)
    runner = FakeWorker(users=2)
    runner.client_id = "w1"
    worker = Runtime(environment(runner, "--trace", str(path)))
    worker.options.forward_schedule(["w1"], time.time())  # as the master's spawn message brings it
    worker.on_test_start()
    tickets = [worker.load.take_ticket() for _ in range(3)]
    gevent.sleep(0.01)  # the dispatcher's loop returns after the last entry
    for i, t in enumerate(tickets):
        rec = finished()
        rec.intended_ns, rec.arrival_index = t.intended_ns, t.index
        worker.load.finish(rec)
        worker.load.on_record(rec)
        gevent.sleep(0)
        assert [kind for kind, _ in runner.sent] == ([process_module.DONE_REPORT] if i == 2 else []), i
    ((_, data),) = runner.sent
    assert data["llmload"]["g"]["schedule_done"] is True
    master_runner = FakeMaster()
    master_runner.clients = SimpleNamespace(all=[], ready=[], running=[], spawning=[])
    master = Runtime(environment(master_runner, "--headless", "--runs-dir", "", "--trace", str(path)))
    master.on_test_start()
    master.on_done_report("w1", data)
    gevent.sleep(0)
    assert master_runner.quit_called == 1 and master.coordinator.views.snapshot().run.overall().counters["ok"] == 3
    for r in (worker, master):
        r.on_quitting()


def test_workers_gone_after_the_test_stopped_are_not_lost():
    """A quit (headless) or a stop (web UI) takes the workers out of Locust's clients: not a lost worker."""
    from locust.runners import STATE_RUNNING, STATE_STOPPING

    from tests.unit.runtime.test_coordinator import report

    runner = FakeMaster()
    master = Runtime(environment(runner))
    master.on_worker_report("w1", {"llmload": report(n=1)})
    runner.state = STATE_STOPPING
    master.plays.check_workers()
    assert not any(w.lost for w in master.coordinator.views.snapshot().workers)
    runner.state = STATE_RUNNING
    master.plays.check_workers()
    assert all(w.lost for w in master.coordinator.views.snapshot().workers)
    master.on_quitting()


def test_a_worker_locust_marks_missing_after_the_test_is_lost():
    """Killed late in a test, a worker is marked missing (~4 s without heartbeat) often only after the test's
    end, while the master waits for the last reports: the summary still names it (a CI run read none)."""
    from locust.runners import STATE_STOPPED

    from tests.unit.runtime.test_coordinator import report

    runner = FakeMaster()
    master = Runtime(environment(runner))
    master.on_worker_report("w1", {"llmload": report(n=1)})
    master.on_worker_report("w2", {"llmload": report(n=1)})
    runner.state = STATE_STOPPED
    runner.clients = SimpleNamespace(all=[SimpleNamespace(id="w1", state="missing")])  # w2 quit: not listed
    master.plays.check_workers()
    lost = {w.worker_id: w.lost for w in master.coordinator.views.snapshot().workers}
    assert lost == {"w1": True, "w2": False}
    master.on_quitting()


def test_the_test_stop_checks_for_missing_workers_before_the_summary():
    """A headless master quits 0.5 s after its test stop: a worker marked missing since the last 3 s check
    must be lost in that summary."""
    from locust.runners import STATE_STOPPING

    from tests.unit.runtime.test_coordinator import report

    runner = FakeMaster()
    master = Runtime(environment(runner, "--runs-dir", ""))
    master.on_test_start()
    master.on_worker_report("w1", {"llmload": report(n=1)})
    master.on_worker_report("w2", {"llmload": report(n=1)})
    runner.state = STATE_STOPPING
    runner.clients = SimpleNamespace(
        all=[SimpleNamespace(id="w1", state="missing"), SimpleNamespace(id="w2", state="running")]
    )
    master.on_stop_report("w2", {"llmload": report(n=0)})
    master.on_test_stop()  # w2's stop report is in and w1 is lost: the summary is written now
    s = master.coordinator.last_summary
    assert s is not None and s["workers_lost"] == ["w1"] and s["overall"]["ok"] == 2
    master.on_quitting()


def test_a_signal_on_a_headless_standalone_run_ends_the_test_gracefully_then_quits():
    """Ctrl-C/SIGTERM on one process was Locust's: a quit at once (the requests in flight in no count, the last
    second's records in the file only); now it is taken at the test start and ends the test as its end does."""
    import signal

    runner = FakeLocal(users=1)
    r = Runtime(environment(runner, "--headless", "--runs-dir", ""))
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    r.on_test_start()
    try:
        assert signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM) == r.interrupt._on_sigint
        r.interrupt._on_sigint(signal.SIGTERM, None)
        gevent.sleep(0)
        assert (runner.stop_called, runner.quit_called) == (1, 1)
    finally:
        r.on_quitting()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_quitting_during_a_test_stops_it_first_and_the_summary_holds_the_last_report():
    """Locust's own quit (a third Ctrl-C, the web UI process's SIGTERM) fires quitting before it stops the users:
    the summary was written without what finished since the last fold (records file: 1, summary: 0)."""
    from tests.unit.runtime.test_load_role import finished

    runner = FakeLocal(users=1)
    r = Runtime(environment(runner, "--runs-dir", ""))
    r.on_test_start()
    r.load.on_record(finished())

    def stop():  # as Locust's: test_stopping, the users stop, test_stop
        r.on_test_stopping()
        runner.state = process_module.STATE_STOPPED
        r.on_test_stop()

    runner.stop = stop
    r.on_quitting()
    assert r.coordinator.last_summary["overall"]["ok"] == 1
