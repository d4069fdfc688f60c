"""The ladder as a Locust ``LoadTestShape`` (master or standalone only; the web UI shows it).

Locust creates the shape itself (no constructor arguments), so :func:`llmload.plugin.install`
hands it its :class:`~llmload.ladder.plan.LadderDriver` with :meth:`LadderShape.attach`;
without one (llmload not installed) the shape ends at once. The shape reads Locust's common
options (``use_common_options``): the web UI form keeps its user count, spawn rate and run
time, which run when no ladder is set (and cap a rate ladder's requests in flight), so
the one shape runs what the form says, ladder or not. The LLM tab shows the current step.

**The ladder's clock starts at the shape run's first tick** (the runner still in its init
state), not at Locust's ``get_run_time``: a master resets that clock again inside the first
tick (its ``start`` fires ``test_start``, then ``reset_time``), after which every later tick
read about a second short of the time since the first, and each step changed one tick
(Locust's 1 s) late. Counted from the first tick, the n-th tick reads n seconds or a little
more (Locust sleeps 1 s less the tick's own time), so a step changes at the first tick at or
after its time. The first tick also starts the run's step windows afresh
(:meth:`LadderDriver.begin`): it comes before ``test_start``, which keeps the step it entered.

**A headless master stops its workers before the shape ends.** Locust ends a finished shape
on a headless master with ``quit()``, which neither stops the workers nor waits for them:
with a ladder's stop timeout (its requests in flight finish, then count in their step) the
workers got only the quit, after the master had written its summary and exited, and went on
finishing those requests unreported, orphans of a finished command, for up to the request
timeout. The shape calls the master's ``stop()`` first (it sends the workers ``stop`` and waits
for them, as the web UI's end of a shape does); the quit that follows finds them stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from locust import LoadTestShape
from locust.runners import STATE_INIT, MasterRunner

from llmload.ladder.plan import LadderDriver

__all__ = ["LadderShape"]


class LadderShape(LoadTestShape):
    """Holds each ``--ladder`` user count for ``--step-time``, or ``-u``/``-r`` without a ladder (:mod:`llmload.ladder.plan`)."""

    use_common_options = True
    _driver: LadderDriver | None = None
    _origin: float | None = None  # perf_counter() of this shape run's first tick
    clock: Callable[[], float] = staticmethod(time.perf_counter)
    _headless: Callable[[], bool] = staticmethod(lambda: False)

    def attach(self, driver: LadderDriver, headless: Callable[[], bool] = lambda: False) -> None:
        """``headless``: Locust's ``--headless`` now (read through llmload's options, the one door)."""
        self._driver = driver
        self._headless = headless

    def tick(self) -> tuple[int, float] | None:
        if self._driver is None:
            return None
        now = self.clock()
        if self._origin is None or (self.runner is not None and self.runner.state == STATE_INIT):
            self._origin = now  # a new shape run (Locust's start_shape puts the runner in its init state)
            self._driver.begin()
        load = self._driver.tick(now - self._origin)
        if load is None and isinstance(self.runner, MasterRunner) and self._headless():
            self.runner.stop()  # from the shape's greenlet: Locust's stop does not kill it
        return load
