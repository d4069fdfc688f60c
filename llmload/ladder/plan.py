"""What the ladder runs when: the schedule of a :class:`~llmload.config.ladder.LadderConfig`, and its driver.

``--ladder 1,5,10,20,30,50 --step-time 5m --step-warmup 30s`` runs 1 user for 5 minutes,
then 5, then 10, ... Each step starts with a warm-up (users spawn, queues fill, caches
warm) that is not measured; requests that *start* in the rest of the step — its steady
window — are recorded under the step's index as well as in the run's totals.

Optionally the ladder begins with a single-request baseline (``--baseline-requests N``:
one user sends N requests, step index -1, until N of them succeeded), and
``--stop-on-breach`` ends the test at the first step whose steady figures break the
safe-concurrency limits (:class:`~llmload.ladder.judge.LiveJudge`).

A rate ladder (``--rate-ladder 1,2,4,8``) runs the same steps with ``-u`` users each (the
in-flight cap of an open loop); each load process's dispatcher offers the rate of the step the
tracker says runs (:meth:`llmload.runtime.load_role.LoadProcess`), so rates change with the step
windows.

:class:`LadderDriver` is the shape's logic without Locust: each tick, from the time since
the ladder started, it tells the :class:`~llmload.ladder.tracker.StepTracker` which step
runs and returns Locust's ``(users, spawn rate)`` or None (the end). Without a ladder it
holds Locust's own ``-u``/``-r`` (:class:`FixedLoad`, read anew each tick: the web UI
form's values, also when a running test is edited), so one shape runs whatever the form
says, as the command line would. A run time (``-t``, the form's) ends either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from llmload.config.ladder import LadderConfig
from llmload.ladder.judge import LiveJudge
from llmload.ladder.tracker import StepTracker, StepWindow
from llmload.results.model import BASELINE_STEP

__all__ = ["FixedLoad", "LadderDriver", "StepAt", "cut_short", "step_at"]


@dataclass(frozen=True, slots=True)
class StepAt:
    """Where a ladder is at a time: the step, its users, and whether its warm-up is over."""

    index: int
    users: int
    steady: bool


def step_at(plan: LadderConfig, t: float) -> StepAt | None:
    """The step running ``t`` seconds after the ladder's first step started (None: the ladder is over)."""
    i = int(t // plan.step_s)
    if i >= len(plan.levels):
        return None
    return StepAt(i, plan.levels[i], t - i * plan.step_s >= plan.warmup_s)


#: A step whose steady window ran less than this share of its planned length (less one shape tick,
#: Locust's 1 s, by which a warm-up's end can come late) was cut short.
CUT_SHARE = 0.9
TICK_S = 1.0


def _label(plan: LadderConfig, i: int) -> str:
    if plan.by_rate:
        return f"{plan.rates[i]:g} req/s"
    return "1 user" if plan.levels[i] == 1 else f"{plan.levels[i]} users"


def cut_short(plan: LadderConfig | None, windows: list[StepWindow]) -> str | None:
    """A warning when the ladder ended before it had run all of its steps (a stop from the web UI, ``-t``,
    ``--stop-on-breach``), or its last step's steady window was cut short; None when it ran in full."""
    ran = [w for w in windows if w.index >= 0]
    if plan is None or not ran:
        return None
    steady = plan.step_s - plan.warmup_s
    last = ran[-1]
    held = (last.ended_at - last.steady_from) if last.steady_from is not None and last.ended_at is not None else 0.0
    cut = held + TICK_S < CUT_SHARE * steady
    if last.index + 1 >= len(plan.levels) and not cut:
        return None
    said = [f"the ladder ended at step {last.index + 1} of {len(plan.levels)} ({_label(plan, last.index)})"]
    if cut:
        said.append(f"that step was steady for {held:.1f} s of {steady:g} s")
    if last.index + 1 < len(plan.levels):
        unrun = ", ".join(_label(plan, i) for i in range(last.index + 1, len(plan.levels)))
        said.append(f"never ran: {unrun}")
    why = " (the test was stopped, -t ended it, or --stop-on-breach did): the verdict covers the steps that ran"
    return "; ".join(said) + why


class FixedLoad(NamedTuple):
    """Locust's ``-u``, ``-r`` and ``-t`` (seconds; None: no limit) as they are now."""

    users: int
    spawn_rate: float
    run_time: float | None = None


class LadderDriver:
    """Drives ``tracker`` through the configured plan; see the module docstring.

    ``fixed_load``: Locust's own load options now (None: none to hold), what runs without a plan.
    ``clock``: wall time, for :attr:`step_ends_at`.
    """

    def __init__(
        self,
        tracker: StepTracker,
        baseline_ok: Callable[[], int],
        fixed_load: Callable[[], FixedLoad | None] = lambda: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tracker = tracker
        self._baseline_ok = baseline_ok  # successful requests of the pre-run so far
        self._fixed_load = fixed_load
        self._clock = clock
        self.plan: LadderConfig | None = None
        self.judge: LiveJudge | None = None
        self._baseline_done_at: float | None = None
        self._end_now = False
        self.step_ends_at: float | None = None  # wall clock: when the running step ends (None: no step running)

    def configure(self, plan: LadderConfig | None, judge: LiveJudge | None) -> None:
        """The plan and the judge of the next test (the web UI form may change them); its pre-run is still to come."""
        self.plan, self.judge = plan, judge
        self._baseline_done_at = self.step_ends_at = None

    def begin(self) -> None:
        """A shape run's first tick is next: the run's step windows start afresh (the last test's are gone)."""
        self._tracker.reset()
        self._end_now = False

    def end_now(self) -> None:
        """End the test at the next tick, as its plan's end would (a headless master's Ctrl-C)."""
        self._end_now = True

    def tick(self, run_time: float) -> tuple[int, float] | None:
        plan, tracker, t = self.plan, self._tracker, run_time
        fixed = self._fixed_load()
        if self._end_now or (fixed is not None and fixed.run_time and t >= fixed.run_time):  # -t ends a ladder too
            tracker.close()
            self.step_ends_at = None
            return None
        if plan is None:
            return (fixed.users, fixed.spawn_rate) if fixed is not None else None
        if plan.baseline_requests and self._baseline_done_at is None:
            if self._baseline_ok() >= plan.baseline_requests:
                self._baseline_done_at = t
            else:
                tracker.enter(BASELINE_STEP, 1, steady=True)
                return 1, 1.0
        ladder_t = t - (self._baseline_done_at or 0.0)
        at = step_at(plan, ladder_t)
        # Judged every tick (a step once, when it has closed): the verdict so far for the LLM tab, and the stop.
        breach = self.judge.check(tracker.windows) if self.judge is not None else None
        if at is None or (plan.stop_on_breach and breach is not None):
            tracker.close()
            self.step_ends_at = None
            return None
        tracker.enter(at.index, at.users, at.steady, plan.rate_at(at.index))
        self.step_ends_at = self._clock() + (at.index + 1) * plan.step_s - ladder_t
        return at.users, plan.rate_for(at.users)
