"""The tests' one fake clock: time that moves only when the test moves it.

llmload takes its clocks as arguments (``clock=time.monotonic``, ``clock=time.perf_counter_ns``);
a test passes a :class:`FakeClock` instead and sets or moves the time by hand, so nothing waits
for (or asserts on) the wall clock.
"""

from __future__ import annotations

NS_PER_S = 1_000_000_000


class FakeClock:
    """A stand-in for ``time.monotonic`` (seconds, the default) or ``time.perf_counter_ns`` (``FakeClock(ns=...)``).

    Calling it reads the time: ``t`` (seconds), or ``ns`` (nanoseconds, an int) when it was built with ``ns``.
    The test moves it by setting either directly (``clock.t += 2.0``) or with :meth:`advance`.
    """

    def __init__(self, t: float = 1000.0, *, ns: int | None = None) -> None:
        self.t = t
        self.ns = ns

    def __call__(self) -> float:
        return self.t if self.ns is None else self.ns

    def advance(self, seconds: float) -> None:
        """Move the time ``seconds`` ahead (whole nanoseconds on a nanosecond clock)."""
        if self.ns is None:
            self.t += seconds
        else:
            self.ns += int(seconds * NS_PER_S)
