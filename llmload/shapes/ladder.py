"""The concurrency ladder: hold each user count for a step, measure only its steady window.

``--ladder 1,5,10,20,30,50 --step-time 5m --step-warmup 30s`` runs 1 user for 5 minutes,
then 5, then 10, ... Each step starts with a warm-up (users spawn, queues fill, caches
warm) that is not measured; requests that *start* in the rest of the step — its steady
window — are recorded under the step's index as well as in the run's totals. The master
broadcasts every step change to its workers (custom message ``llmload_step``), so records
made anywhere carry the right step.

Optionally the ladder begins with a single-request baseline (``--baseline-requests N``:
one user sends N requests, step index ``-1``), and ``--stop-on-breach`` ends the test at
the first step whose steady figures break the safe-concurrency limits.

:class:`LadderShape` is a plain Locust ``LoadTestShape``: it runs on the master only, and
the web UI shows it (start the test from the UI; the LLM tab shows the current step).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from locust import LoadTestShape

from llmload.errors import ConfigError

__all__ = ["BASELINE_STEP", "LadderPlan", "LadderShape", "StepWindow", "parse_ladder"]

BASELINE_STEP = -1


def parse_ladder(text: str) -> tuple[int, ...]:
    """``"1,5,10"`` → (1, 5, 10): positive, strictly increasing user counts."""
    try:
        levels = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise ConfigError(f"--ladder {text!r}: must be user counts separated by commas, e.g. 1,5,10,20") from None
    if not levels or any(n < 1 for n in levels):
        raise ConfigError(f"--ladder {text!r}: every step needs at least 1 user, e.g. 1,5,10,20")
    if any(b <= a for a, b in zip(levels, levels[1:], strict=False)):
        raise ConfigError(f"--ladder {text!r}: user counts must increase from step to step")
    return levels


@dataclass(frozen=True, slots=True)
class LadderPlan:
    """The ladder's settings, validated once (see ``llmload.config``)."""

    levels: tuple[int, ...]
    step_s: float
    warmup_s: float
    stop_on_breach: bool = False
    baseline_requests: int = 0
    spawn_rate: float | None = None  # users per second; None = each step's users within ~1 s

    def __post_init__(self) -> None:
        if self.step_s <= 0:
            raise ConfigError("--step-time: must be > 0, e.g. 5m")
        if not 0 <= self.warmup_s < self.step_s:
            raise ConfigError(f"--step-warmup {self.warmup_s:g}s: must be shorter than --step-time {self.step_s:g}s")

    def rate_for(self, users: int) -> float:
        return self.spawn_rate or float(max(users, 1))


@dataclass(slots=True)
class StepWindow:
    """When a step ran (wall clock, seconds since the epoch)."""

    index: int
    users: int
    started_at: float
    steady_from: float | None = None
    ended_at: float | None = None
    breach: dict[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        end = self.ended_at
        return {
            "index": self.index,
            "users": self.users,
            "started_at": round(self.started_at, 3),
            "steady_from": round(self.steady_from, 3) if self.steady_from else None,
            "ended_at": round(end, 3) if end else None,
            "steady_s": round(end - self.steady_from, 3) if end and self.steady_from else 0.0,
        }


class LadderShape(LoadTestShape):
    """Locust shape driving the ladder in ``environment.llmload.ladder`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._baseline_done_at: float | None = None

    def _runtime(self) -> Any:
        return self.runner.environment.llmload

    def tick(self) -> tuple[int, float] | None:
        runtime = self._runtime()
        plan: LadderPlan | None = runtime.ladder
        if plan is None:
            return None
        t = self.get_run_time()
        tracker = runtime.steps
        if plan.baseline_requests and self._baseline_done_at is None:
            if tracker.baseline_complete(plan.baseline_requests):
                self._baseline_done_at = t
            else:
                tracker.enter(BASELINE_STEP, 1, steady=True)
                return 1, 1.0
        t -= self._baseline_done_at or 0.0
        i = int(t // plan.step_s)
        if i >= len(plan.levels) or (plan.stop_on_breach and tracker.breached):
            tracker.close()
            return None
        users = plan.levels[i]
        tracker.enter(i, users, steady=t - i * plan.step_s >= plan.warmup_s)
        return users, plan.rate_for(users)
