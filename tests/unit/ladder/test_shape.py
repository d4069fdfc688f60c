"""The Locust shape is a thin door to its driver: no driver, no ladder; with one, the driver's ticks,
timed from the shape run's first tick (not Locust's run time, which a master resets inside that tick)."""

from __future__ import annotations

from types import SimpleNamespace

from locust.runners import STATE_INIT, STATE_RUNNING, STATE_SPAWNING, STATE_STOPPED, MasterRunner

from llmload.config import LadderConfig
from llmload.ladder import LadderDriver, StepTracker
from llmload.ladder.shape import LadderShape
from tests.helpers.clock import FakeClock


class Shape(LadderShape):
    pass


def ladder(wall: FakeClock, headless: bool = False) -> tuple[Shape, StepTracker, FakeClock]:
    tracker = StepTracker(clock=wall)
    driver = LadderDriver(tracker, baseline_ok=lambda: 0)
    driver.configure(LadderConfig(levels=(2, 6), step_s=10.0, warmup_s=1.0), None)
    shape, mono = Shape(), FakeClock(500.0)
    shape.clock = mono
    shape.runner = SimpleNamespace(state=STATE_INIT)
    shape.attach(driver, headless=lambda: headless)
    return shape, tracker, mono


def test_without_a_driver_the_shape_ends_at_once():
    assert Shape().tick() is None


def test_steps_change_on_time_although_a_master_resets_locusts_clock_after_the_first_tick():
    wall = FakeClock(1000.0)
    shape, tracker, mono = ladder(wall)
    shape.reset_time()  # Locust's start_shape
    assert shape.tick() == (2, 2.0) and tracker.current() == (0, 2, False)
    shape.runner.state = STATE_SPAWNING
    shape.reset_time()  # a master's start(): test_start, then reset_time, inside the first tick
    for n in range(1, 10):  # Locust ticks every second after the first
        mono.t, wall.t = 500.0 + n + 0.002, 1000.0 + n + 0.002
        shape.runner.state = STATE_RUNNING
        assert shape.tick() == (2, 2.0) and tracker.current() == (0, 2, True)
    mono.t, wall.t = 510.003, 1010.003  # Locust's run time reads ~10.0 - the first tick's own time: before, still step 0
    assert shape.tick() == (6, 6.0) and tracker.current() == (1, 6, False)
    assert [(w.index, round(w.started_at, 3)) for w in tracker.windows] == [(0, 1000.0), (1, 1010.003)]
    mono.t = 520.004
    assert shape.tick() is None


def test_a_new_shape_run_starts_the_clock_and_the_windows_afresh():
    wall = FakeClock(1000.0)
    shape, tracker, mono = ladder(wall)
    shape.tick()
    shape.runner.state = STATE_RUNNING
    mono.t, wall.t = 512.0, 1012.0  # 12 s later
    assert shape.tick() == (6, 6.0)
    shape.runner.state = STATE_STOPPED  # stopped from the web UI; the next test's start_shape:
    tracker.close()
    shape.runner.state = STATE_INIT
    mono.t, wall.t = 600.0, 1100.0
    assert shape.tick() == (2, 2.0)
    assert [(w.index, w.started_at) for w in tracker.windows] == [(0, 1100.0)]  # the last test's are gone


def test_a_headless_master_stops_its_workers_before_the_shape_ends():
    """Locust follows a finished shape on a headless master with quit(), which does not wait for the workers."""
    stops: list[str] = []

    class Master(MasterRunner):  # no sockets, no greenlets: only what the shape reads
        def __init__(self) -> None:
            self.state = STATE_INIT

        def stop(self, send_stop_to_client: bool = True) -> None:
            stops.append("stop")

        def __del__(self) -> None:
            pass

    for headless, expected in ((True, ["stop"]), (False, [])):
        shape, _, mono = ladder(FakeClock(), headless)
        shape.runner = runner = Master()
        assert shape.tick() == (2, 2.0) and stops == []
        runner.state, mono.t = STATE_RUNNING, mono.t + 20.0
        assert shape.tick() is None and stops == expected
        stops.clear()
