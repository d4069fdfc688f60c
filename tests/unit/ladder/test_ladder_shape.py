"""The Locust shape is a thin door to its driver: no driver, no ladder; with one, the driver's ticks."""

from __future__ import annotations

from ladder_helpers import FakeClock

from llmload.config import LadderConfig
from llmload.ladder import LadderDriver, StepTracker
from llmload.ladder.shape import LadderShape


class Shape(LadderShape):
    pass


def test_without_a_driver_the_shape_ends_at_once():
    assert Shape().tick() is None


def test_the_shape_asks_its_driver_with_locusts_run_time(monkeypatch):
    tracker = StepTracker(clock=FakeClock())
    driver = LadderDriver(tracker, baseline_ok=lambda: 0)
    driver.configure(LadderConfig(levels=(2, 6), step_s=10.0, warmup_s=1.0), None)
    shape = Shape()
    shape.attach(driver)
    monkeypatch.setattr(shape, "get_run_time", lambda: 12.0)
    assert shape.tick() == (6, 6.0) and tracker.current() == (1, 6, True)
    monkeypatch.setattr(shape, "get_run_time", lambda: 20.0)
    assert shape.tick() is None
