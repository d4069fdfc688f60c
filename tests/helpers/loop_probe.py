"""The event loop's own timer lateness while a run shares the box (:class:`LoopProbe`)."""

from __future__ import annotations

import time

import gevent
import numpy as np


class LoopProbe:
    """The event loop's own timer lateness while a run shares it: a greenlet that asks to wake every
    ``period_s`` and keeps how late it woke (s). Sends are timer wakes on the same loop, so what a
    busy box does to them it does to the probe at the same moments: the tests judge the sends
    against this spread, measured in the same run, instead of a margin that holds on a quiet box
    only (a constant 50/s run's gap CV was 0.48 with the CPUs twice oversubscribed)."""

    def __init__(self, period_s: float = 0.004) -> None:
        self.period_s = period_s
        self.late: list[float] = []
        self._g = gevent.spawn(self._run)

    def _run(self) -> None:
        while True:
            due = time.perf_counter() + self.period_s
            gevent.sleep(self.period_s)
            self.late.append(max(0.0, time.perf_counter() - due))

    def stop(self) -> np.ndarray:
        self._g.kill()
        return np.array(self.late, dtype=np.float64)
