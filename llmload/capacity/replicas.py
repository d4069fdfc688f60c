"""How many replicas a load needs: search the replica count with predict on the virtual clock.

A :class:`Goal` is either SLOs (each class's, as ``llmload run --slo``) with an attainment
target: the share of finished requests that are good; or, without SLOs, the ladder's
safe-concurrency rule: TTFT and TPOT p50 within ``(1 + degradation)`` x the baseline (one user
alone on one replica). :func:`search` evaluates every count 1, 2, 3, ... until one meets the goal,
then ``K + 1`` too: attainment is not monotonic in the replicas behind a round-robin router (a
replica's share of a closed loop's requests drifts above its slots in some phases: 24 users on
replicas of 4 slots, 8 replicas 98.7 %, 10 replicas 88.9 %), so bisecting could skip the fewest
that meet. The answer comes with its margin, what one replica less gives, and a note for every
larger count evaluated that predicts worse (:func:`worse_above`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llmload.results.model import Stats
from llmload.results.setup import DEFAULT_DEGRADATION, DEFAULT_SLO_ATTAINMENT

__all__ = ["Goal", "Trial", "answer_line", "describe", "search", "trial_of", "worse_above"]

_LAT = {"ttft_ms": ("TTFT", "ttft"), "tpot_ms": ("TPOT", "tpot"), "e2e_ms": ("E2E", "e2e")}


@dataclass(frozen=True, slots=True)
class Goal:
    """SLO mode (``slo`` set: every class's default limits, ms) or baseline mode (``baseline_*`` set)."""

    target: float = DEFAULT_SLO_ATTAINMENT  # SLO mode: the attainment to reach
    slo: tuple[tuple[str, float], ...] = ()  # the --slo limits, e.g. (("ttft_ms", 1000.0),)
    degradation: float = DEFAULT_DEGRADATION  # baseline mode: p50s within (1 + this) x the baseline
    baseline_ttft_ms: float | None = None
    baseline_tpot_ms: float | None = None

    @property
    def slo_mode(self) -> bool:
        return self.baseline_ttft_ms is None


@dataclass(frozen=True, slots=True)
class Trial:
    """What ``replicas`` engines give the load (its measured window), and whether it meets the goal."""

    replicas: int
    meets: bool
    requests: int
    attainment: float | None
    failed_slo: str | None
    p50_ms: dict[str, float | None]  # "ttft", "tpot", "e2e" -> p50
    p99_ms: dict[str, float | None]
    ok_per_s: float


def trial_of(replicas: int, s: Stats, goal: Goal) -> Trial:
    """The :class:`Trial` of ``s``, the statistics of the measured window on ``replicas`` engines."""
    p50 = {m: s.lat(m).p50 for m in ("ttft", "tpot", "e2e")}
    p99 = {m: s.lat(m).p99 for m in ("ttft", "tpot", "e2e")}
    g = s.goodput
    attainment = g.attainment if g is not None else None
    failed = None
    if goal.slo_mode:
        meets = attainment is not None and attainment >= goal.target
        if g is not None and not meets:
            missed = sorted(g.missed.items(), key=lambda kv: -kv[1])
            failed = (
                "errors" if s.errors and (not missed or s.errors > missed[0][1]) else (missed[0][0] if missed else None)
            )
    else:
        limit = 1.0 + goal.degradation
        meets = (
            all(
                v is not None and b is not None and v <= limit * b
                for v, b in ((p50["ttft"], goal.baseline_ttft_ms), (p50["tpot"], goal.baseline_tpot_ms))
            )
            and not s.errors
        )
    return Trial(replicas, meets, s.requests, attainment, failed, p50, p99, s.requests_per_s)


def search(evaluate: Callable[[int], Trial], max_replicas: int) -> tuple[Trial | None, list[Trial]]:
    """The fewest replicas (<= ``max_replicas``) that meet the goal (None: none does), and every trial, by count.

    Every count from 1 up to the first that meets is evaluated (no bisection: attainment can fall when a replica
    is added), then the next count, to confirm the answer holds one replica up."""
    trials: list[Trial] = []
    for k in range(1, max_replicas + 1):
        trials.append(evaluate(k))
        if trials[-1].meets:
            best = trials[-1]
            if k < max_replicas:
                trials.append(evaluate(k + 1))
            return best, trials
    return None, trials


def worse_above(best: Trial, trials: list[Trial], goal: Goal) -> list[str]:
    """A note for every count above ``best`` evaluated that predicts worse: a lower attainment (SLO mode, by
    0.1 point or more) or a miss, e.g. ``note: 10 replicas predict 88.9 % (round-robin phase effects)``."""
    out = []
    for t in trials:
        if t.replicas <= best.replicas:
            continue
        if goal.slo_mode and t.attainment is not None and best.attainment is not None:
            if round(1000 * t.attainment) < round(1000 * best.attainment):
                verdict = "misses the goal" if not t.meets else "still meets the goal"
                out.append(f"{t.replicas} replicas predict {_pct(t.attainment)}, below {best.replicas} replicas' "
                           f"{_pct(best.attainment)}: {verdict} (round-robin phase effects: a replica's share drifts "
                           "above its slots; --router least-loaded is steadier)")  # fmt: skip
        elif not t.meets:
            out.append(f"{t.replicas} replicas miss the goal: {describe(t, goal)} (round-robin phase effects; "
                       "--router least-loaded is steadier)")  # fmt: skip
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f} ms"


def describe(t: Trial, goal: Goal) -> str:
    """``3 replicas: TTFT p99 640 ms (SLO 1000), attainment 99.6 %`` (SLO mode) or the p50s against the limit."""
    head = f"{t.replicas} replica{'s' if t.replicas != 1 else ''}: "
    if goal.slo_mode:
        lat = [f"{name} p99 {_ms(t.p99_ms[m])} (SLO {limit:g})" for key, limit in goal.slo
               for name, m in [_LAT[key]]]  # fmt: skip
        return head + ", ".join([*lat, f"attainment {_pct(t.attainment)}"])
    limit = 1.0 + goal.degradation
    parts = []
    for name, m, b in (("TTFT", "ttft", goal.baseline_ttft_ms), ("TPOT", "tpot", goal.baseline_tpot_ms)):
        parts.append(f"{name} p50 {_ms(t.p50_ms[m])} (limit {limit * (b or 0):.0f})")
    return head + ", ".join(parts)


def answer_line(best: Trial | None, trials: list[Trial], goal: Goal, max_replicas: int) -> str:
    """The answer: the fewest replicas that meet the goal, its margin, and what one less gives."""
    if best is None:
        top = trials[-1]
        return f"no replica count up to {max_replicas} meets it: {describe(top, goal)}"
    line = describe(best, goal)
    if goal.slo_mode and best.attainment is not None:
        line += f" (target {100 * goal.target:g} %, margin {100 * (best.attainment - goal.target):+.1f} pt)"
    below = next((t for t in trials if t.replicas == best.replicas - 1), None)
    if below is not None:
        if goal.slo_mode:
            missed = f", mostly {below.failed_slo}" if below.failed_slo else ""
            line += f"; {below.replicas} replica{'s' if below.replicas != 1 else ''}: {_pct(below.attainment)}{missed}"
        else:
            line += f"; {describe(below, goal)}"
    return line
