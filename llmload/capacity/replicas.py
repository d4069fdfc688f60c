"""How many replicas a load needs: search the replica count with predict on the virtual clock.

A :class:`Goal` is either SLOs (each class's, as ``llmload run --slo``) with an attainment
target: the share of finished requests that are good; or, without SLOs, the ladder's
safe-concurrency rule: TTFT and TPOT p50 within ``(1 + degradation)`` x the baseline (one user
alone on one replica). :func:`search` evaluates 1, 2, 4, ... replicas until one meets the goal,
then bisects between the last that missed and the first that met (attainment does not fall
when replicas are added), so the answer ``K`` and ``K - 1`` are both evaluated: the answer
comes with its margin and with what one replica less would give.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llmload.results.model import Stats
from llmload.results.setup import DEFAULT_DEGRADATION, DEFAULT_SLO_ATTAINMENT

__all__ = ["Goal", "Trial", "answer_line", "describe", "search", "trial_of"]

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
    """The fewest replicas (<= ``max_replicas``) that meet the goal (None: none does), and every trial, by count."""
    seen: dict[int, Trial] = {}

    def at(k: int) -> Trial:
        if k not in seen:
            seen[k] = evaluate(k)
        return seen[k]

    lo, k = 0, 1  # lo: the largest count known to miss (0: none)
    while not at(k).meets:
        if k >= max_replicas:
            return None, [seen[x] for x in sorted(seen)]
        lo, k = k, min(2 * k, max_replicas)
    hi = k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid).meets:
            hi = mid
        else:
            lo = mid
    return seen[hi], [seen[x] for x in sorted(seen)]


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
