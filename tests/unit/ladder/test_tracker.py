"""The step tracker: windows on the master, the steady step everywhere, changes broadcast once."""

from __future__ import annotations

from llmload.ladder import StepTracker
from tests.helpers.clock import FakeClock


def test_steps_open_and_close_windows_and_broadcast_only_changes():
    clock, sent = FakeClock(10.0), []
    t = StepTracker(broadcast=sent.append, clock=clock)
    t.enter(0, 1, steady=False)
    clock.t = 12.0
    t.enter(0, 1, steady=False)  # no change: nothing sent, nothing recorded
    assert sent == [{"i": 0, "steady": False}] and t.steady_step is None
    clock.t = 15.0
    t.enter(0, 1, steady=True)
    assert t.steady_step == 0 and t.current() == (0, 1, True)
    clock.t = 20.0
    t.enter(1, 4, steady=False)
    assert t.steady_step is None and t.current() == (1, 4, False)
    clock.t = 30.0
    t.close()
    assert [(w.index, w.users, w.started_at, w.steady_from, w.ended_at) for w in t.windows] == [
        (0, 1, 10.0, 15.0, 20.0),
        (1, 4, 20.0, None, 30.0),  # never steady
    ]
    assert sent[-1] == {"i": None, "steady": False} and t.current() is None and t.steady_step is None
    t.close()  # idempotent: nothing more sent
    assert len(sent) == 4


def test_a_worker_follows_the_masters_messages():
    worker = StepTracker()
    worker.on_message({"i": 2, "steady": True})
    assert worker.steady_step == 2 and worker.windows == []  # workers keep no windows
    worker.on_message({"i": 2, "steady": False})
    assert worker.steady_step is None
    worker.on_message({"i": None, "steady": True})
    assert worker.steady_step is None


def test_reset_forgets_the_last_test():
    t = StepTracker(clock=FakeClock())
    t.enter(0, 1, steady=True)
    t.reset()
    assert t.windows == [] and t.steady_step is None and t.current() is None


def test_listeners_hear_every_step_change_and_windows_keep_a_rate():
    from llmload.ladder.tracker import StepTracker

    heard = []
    t = StepTracker(clock=lambda: 100.0)
    t.listeners.append(lambda index, steady: heard.append((index, steady)))
    t.enter(0, 8, False, rate=2.0)
    t.enter(0, 8, True, rate=2.0)
    t.enter(1, 8, False, rate=4.0)
    t.close()
    t.on_message({"i": 3, "steady": True})  # a worker: the master's message
    assert heard == [(0, False), (0, True), (1, False), (None, False), (3, True)]
    assert [(w.index, w.rate) for w in t.windows] == [(0, 2.0), (1, 4.0)]
