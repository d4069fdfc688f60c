"""The load generator watching itself: CPU use and gevent event-loop lag of this process.

A Locust process that is short of CPU, or whose event loop wakes up late, delays every
timestamp it takes: its TTFT and ITL then measure the client, not the server.
:class:`ProcessMonitor` measures both cheaply so each report can say so:

* CPU ratio = process CPU time / wall time since the previous sample (1.0 = one core);
* loop lag = how late a greenlet sleeping :data:`PROBE_S` wakes up; the worst lag since
  the previous sample is reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import gevent

__all__ = ["PROBE_S", "ProcessMonitor"]

PROBE_S = 0.1


class ProcessMonitor:
    """See the module docstring. The clocks and the probe's sleep are injectable (tests move them by hand)."""

    def __init__(
        self,
        cpu: Callable[[], float] = time.process_time,
        wall: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = gevent.sleep,
    ) -> None:
        self._cpu, self._wall, self._sleep = cpu, wall, sleep
        self._cpu0 = cpu()
        self._wall0 = wall()
        self._lag_max = 0.0
        self._greenlet: gevent.Greenlet | None = None

    def start(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._probe)

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None

    def _probe(self) -> None:
        while True:
            self.probe_once()

    def probe_once(self) -> None:
        """Sleep :data:`PROBE_S` and keep how late the wake-up came (the probe greenlet's loop)."""
        t0 = self._wall()
        self._sleep(PROBE_S)
        lag = self._wall() - t0 - PROBE_S
        if lag > self._lag_max:
            self._lag_max = lag

    def sample(self) -> tuple[float, float]:
        """(CPU ratio, worst loop lag in s) since the previous sample; starts a new interval."""
        cpu, wall = self._cpu(), self._wall()
        ratio = (cpu - self._cpu0) / (wall - self._wall0) if wall > self._wall0 else 0.0
        lag, self._lag_max = max(self._lag_max, 0.0), 0.0
        self._cpu0, self._wall0 = cpu, wall
        return round(ratio, 4), round(lag, 6)
