"""The load generator watching itself: CPU ratio and loop lag on clocks the test moves."""

from __future__ import annotations

import gevent
import pytest

from llmload.metrics.selfcheck import PROBE_S, ProcessMonitor


class Clocks:
    def __init__(self) -> None:
        self.cpu, self.wall = 10.0, 100.0
        self.late = 0.0  # how late the next wake-up of the probe comes

    def sleep(self, seconds: float) -> None:
        self.wall += seconds + self.late


def test_cpu_ratio_is_cpu_time_over_wall_time_since_the_last_sample():
    c = Clocks()
    m = ProcessMonitor(cpu=lambda: c.cpu, wall=lambda: c.wall, sleep=c.sleep)
    c.cpu += 0.9
    c.wall += 1.0
    assert m.sample() == (0.9, 0.0)  # busy: 90 % of a core
    c.cpu += 0.05
    c.wall += 0.5
    assert m.sample() == (0.1, 0.0)  # a new interval each sample
    assert m.sample() == (0.0, 0.0)  # no time passed: no ratio


def test_loop_lag_is_the_worst_late_wake_up_since_the_last_sample():
    c = Clocks()
    m = ProcessMonitor(cpu=lambda: c.cpu, wall=lambda: c.wall, sleep=c.sleep)
    for late in (0.002, 0.3, 0.01):  # the loop was blocked 0.3 s once
        c.late = late
        m.probe_once()
    ratio, lag = m.sample()
    assert lag == pytest.approx(0.3) and ratio == 0.0
    c.late = 0.0
    m.probe_once()
    assert m.sample()[1] == 0.0  # the next interval starts clean


def test_start_runs_the_probe_on_its_own_greenlet_until_stop():
    c = Clocks()
    naps = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        c.wall += seconds
        gevent.sleep(0)  # yield to the loop like a real sleep

    m = ProcessMonitor(cpu=lambda: c.cpu, wall=lambda: c.wall, sleep=sleep)
    m.start()
    m.start()  # once only
    while len(naps) < 3:
        gevent.sleep(0)
    m.stop()  # kills without waiting: the kill lands at its next switch
    for _ in range(3):
        gevent.sleep(0)
    n = len(naps)
    for _ in range(5):
        gevent.sleep(0)
    assert len(naps) == n and m._greenlet is None and set(naps) == {PROBE_S}  # probing stopped; it slept PROBE_S each time
