"""Safe concurrency: the largest ladder step that holds the baseline's latencies.

With ``d`` = ``--degradation`` (default 0.5) and the baseline ``B`` (:mod:`.baseline`),
each ladder step is judged in order against::

    TTFT p50 <= (1 + d) · B.TTFT p50      TPOT p50 <= (1 + d) · B.TPOT p50      error rate < 1 %

**Embeddings and rerank** (``--api openai-embeddings``, ``rerank``; a baseline whose requests carried batched inputs): a
request is one JSON answer, with no TTFT or TPOT of its own, so the limits are on latency (E2E)
instead: ``E2E p50 <= (1 + d) · B.E2E p50`` (metric ``e2e_p50``; ``e2e_p99`` on p99), and the
verdict's ``limits`` are ``e2e_p50_ms`` and ``error_rate`` (docs/embeddings.md).

**A ladder over sessions** (every request a conversation or agent turn, :mod:`.sessions`) is judged
the same way; its notes name steps in sessions (``40 sessions``), and the writers read its safe
step as the max sessions (:mod:`.sessions`).

The first step that breaks one of them is the **breach**; the **safe** level is the step
before it (steps above a breach are not judged: a later recovery is noise, not capacity).
When a step breaks several limits at once, the breach names the one exceeded by the
largest factor ``value / limit`` (the others are listed under ``also``). The baseline's own
step is judged on its error rate only. A step with fewer than
:data:`~llmload.analysis.baseline.MIN_REQUESTS` finished requests ends the judgement
(status ``insufficient_data``, the safe level so far kept).

The same judgement is repeated:

* on p99 (``TTFT p99``/``TPOT p99`` against ``(1 + d)`` times the baseline's p99): ``p99``;
* per request class, each against its own baseline figures: ``per_class``;
* twice on 95 % intervals of each ratio ``step p50 / baseline p50``: with ``h_s``, ``h_b``
  the log half-widths of the two p50s' intervals (:func:`~llmload.results.build.median_ci`),
  ``h = sqrt(h_s² + h_b²)``, the *pessimistic* pass judges ``p50 · e^h`` and the
  *optimistic* one ``p50 · e^-h`` against the same limits. Their safe levels are the
  confidence band ``[low, high]`` (error rates are taken as measured in both; a step
  without an interval counts as exact).

**Rate ladders** (``--rate-ladder``): the steps are offered rates at a fixed in-flight cap,
and a step must also *achieve* its rate: requests started per second of its steady window
>= :data:`ACHIEVED_SHARE` x offered (else the breach's metric is ``achieved_rate``, its value
the achieved rate and its limit 95 % of the offered one). ``safe_rate`` is the offered rate
of the safe step; the breach carries its step's ``rate``.

**Recommended gateway concurrency limit**: the concurrency of the safe step, or of the
band's low end when that is lower (a wide band: the safe level may be luck); with no step
safe even pessimistically, the baseline's. Concurrency is the step's users, or its mean
in-flight requests rounded up when users kept fewer than 80 % of themselves busy (think
time, an agent's tool time) or more than one request each (sub-agent fan-out: a session's
children run at once while it waits, so its requests in flight can outnumber the sessions;
:func:`~llmload.analysis.steps.per_user`). The limit counts requests in flight, never sessions. A rate ladder's steps share one ``-u``: its band and its recommended step are read by
offered rate, and ``recommended_rate`` is that step's offered rate (a gateway rate limit); its
sentences name steps by rate (``2 req/s``), never by the cap. Statuses: ``ok`` (no step breached: the service holds at least the top step),
``breach``, ``insufficient_data``, ``no_baseline``, ``no_ladder``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from llmload.analysis.baseline import MIN_REQUESTS, Baseline
from llmload.analysis.steps import Perf, StepView
from llmload.results.judgement import Breach, Confidence, PassVerdict, Verdict

__all__ = ["ACHIEVED_SHARE", "ERROR_RATE_LIMIT", "Pass", "concurrency_of", "judge_pass", "judge_steps", "no_verdict"]

#: A step is unsafe from this share of failed requests.
ERROR_RATE_LIMIT = 0.01
#: A rate step is unsafe when it achieved less than this share of its offered rate.
ACHIEVED_SHARE = 0.95
#: In-flight below this share of the users means think time: the limit counts requests, not users.
BUSY_SHARE = 0.8
P50 = ("ttft_p50", "tpot_p50")
P99 = ("ttft_p99", "tpot_p99")
#: What an embeddings or rerank ladder is judged on (one JSON answer per request: no TTFT/TPOT of their own).
LATENCY_P50, LATENCY_P99 = ("e2e_p50",), ("e2e_p99",)


def _metrics(perf: Perf) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(p50, p99) metrics a baseline is judged on: latency (E2E) for batched inputs (embeddings, rerank), else TTFT and TPOT."""
    return (LATENCY_P50, LATENCY_P99) if perf.batched else (P50, P99)

PerfOf = Callable[[StepView], "Perf | None"]
ValueOf = Callable[[StepView, str], "float | None"]


@dataclass(frozen=True, slots=True)
class Pass:
    """One judgement over the ladder: the last safe step, the breach, or why it stopped early."""

    safe: StepView | None
    breach: Breach | None
    stopped: str | None = None


def _users(n: int, unit: str = "user") -> str:
    """``1 user``, ``4 users`` (``unit`` ``session``: ``4 sessions``, a ladder over sessions)."""
    return f"1 {unit}" if n == 1 else f"{n} {unit}s"


def _level(s: StepView, bare: bool = False, unit: str = "user") -> str:
    """A step as the verdict's sentences name it: ``4 users`` (``4`` when ``bare``), or a rate step's ``2 req/s``."""
    if s.rate_offered is not None:
        return s.label
    return str(s.users) if bare else _users(s.users, unit)


def _size(s: StepView) -> float:
    """What orders a ladder's steps: a rate step's offered rate, else its users."""
    return s.rate_offered if s.rate_offered is not None else s.users


def judge_pass(
    steps: list[StepView],
    baseline: StepView,
    limits: dict[str, float | None],
    value: ValueOf,
    perf_of: PerfOf = lambda s: s.perf,
    unit: str = "user",
) -> Pass:
    """Judge the ladder steps (index >= 0) in order: ``value(step, metric) > limits[metric]`` or errors >= 1 %;
    ``unit`` names the steps in a note (``session``: a ladder over sessions)."""
    safe: StepView | None = None
    base_perf = perf_of(baseline)
    for s in (s for s in steps if s.index is not None and s.index >= 0):
        p = perf_of(s)
        if p is None or p.finished < MIN_REQUESTS:
            n = p.finished if p is not None else 0
            return Pass(
                safe, None, f"the step of {_level(s, unit=unit)} finished only {n} requests (at least {MIN_REQUESTS} needed)"
            )
        over: list[tuple[str, float, float]] = []
        if p.error_rate is not None and p.error_rate >= ERROR_RATE_LIMIT:
            over.append(("error_rate", p.error_rate, ERROR_RATE_LIMIT))
        if s.rate_offered is not None and s.rate_achieved is not None:
            floor = ACHIEVED_SHARE * s.rate_offered
            if s.rate_achieved < floor:  # "over" by how far it fell short: ranked by floor / achieved
                over.append(("achieved_rate", s.rate_achieved, floor))
        if s.index != baseline.index:
            for metric, limit in limits.items():
                v = value(s, metric)
                if limit is not None and v is not None and v > limit:
                    over.append((metric, v, limit))
        if over:
            over.sort(key=_excess, reverse=True)
            metric, v, limit = over[0]
            if metric == "achieved_rate":
                base = baseline.rate_achieved
            else:
                base = 0.0 if metric == "error_rate" else (base_perf.value(metric) if base_perf else None)
            ratio = v / base if base else None
            also = tuple(m for m, _, _ in over[1:])
            return Pass(safe, Breach(s.index, s.users, metric, v, limit, base, ratio, also, s.rate_offered))
        safe = s
    return Pass(safe, None)


def _excess(over: tuple[str, float, float]) -> float:
    """How far a limit was broken: value / limit, or limit / value for the achieved rate (a floor)."""
    metric, v, limit = over
    if metric == "achieved_rate":
        return limit / v if v > 0 else math.inf
    return v / limit if limit else math.inf


def _limits(perf: Perf, metrics: tuple[str, ...], factor: float) -> dict[str, float | None]:
    return {m: (v * factor if (v := perf.value(m)) is not None else None) for m in metrics}


def concurrency_of(step: StepView) -> int:
    """The step's concurrency for a gateway limit (requests in flight): its users, or its in-flight mean rounded up
    when users idled (think or tool time) or held more than one request each (sub-agent fan-out)."""
    f = step.perf.in_flight
    if f is not None and (f < BUSY_SHARE * step.users or f > step.users):
        return max(1, math.ceil(f))
    return step.users


def _log_half_width(s: StepView, metric: str) -> float:
    """Half the width of ``s``'s p50 interval on a log scale (0 without one)."""
    ci = s.interval(metric)
    if ci is None or ci[0] <= 0 or ci[1] <= 0:
        return 0.0
    return (math.log(ci[1]) - math.log(ci[0])) / 2.0


def _band(steps: list[StepView], base: StepView, limits: dict[str, float | None], unit: str = "user") -> tuple[Pass, Pass]:
    """(pessimistic, optimistic) passes: each step's p50 moved to the edge of the 95 % interval of its ratio to the baseline.

    ``h = sqrt(h_step² + h_base²)`` (log half-widths add in quadrature: independent
    samples); pessimistic value ``p50 · e^h``, optimistic ``p50 · e^-h``, same limits.
    """
    out = []
    for sign in (1.0, -1.0):

        def value(s: StepView, m: str, sign: float = sign) -> float | None:
            v = s.perf.value(m)
            name = m.split("_")[0]
            h = math.hypot(_log_half_width(s, name), _log_half_width(base, name))
            return v * math.exp(sign * h) if v is not None else None

        out.append(judge_pass(steps, base, limits, value, unit=unit))
    return out[0], out[1]


def _summary_of(p: Pass, limits: dict[str, float | None]) -> PassVerdict:
    status = "breach" if p.breach else ("insufficient_data" if p.stopped else "ok")
    return PassVerdict(
        status=status,
        limits={f"{m}_ms": v for m, v in limits.items()} | {"error_rate": ERROR_RATE_LIMIT},
        safe_step=p.safe.index if p.safe else None,
        safe_users=p.safe.users if p.safe else None,
        breach=p.breach,
        note=p.stopped or None,
    )


def _class_value(name: str, s: StepView, metric: str) -> float | None:
    return s.classes[name].value(metric) if name in s.classes else None


def _class_perf(name: str, s: StepView) -> Perf | None:
    return s.classes.get(name)


def _per_class(steps: list[StepView], baseline: Baseline, factor: float, unit: str = "user") -> dict[str, PassVerdict]:
    out: dict[str, PassVerdict] = {}
    for name in baseline.step.classes:
        base = baseline.class_perf(name)
        if base is None or base.ttft_p50 is None:
            n = baseline.step.classes[name].ok
            note = f"{n} successful requests of this class in the baseline (at least {MIN_REQUESTS} needed)"
            out[name] = PassVerdict("no_baseline", None, None, None, None, note)
            continue
        limits = _limits(base, _metrics(base)[0], factor)
        p = judge_pass(steps, baseline.step, limits, partial(_class_value, name), partial(_class_perf, name), unit)
        out[name] = _summary_of(p, limits)
    return out


def _recommend(safe: StepView | None, low: Pass, baseline: StepView, by_rate: bool,
               unit: str = "user") -> tuple[StepView | None, str]:  # fmt: skip
    """The step the recommended limit is read from (its concurrency; a rate ladder's: also its offered rate), and why."""
    if safe is None:
        what = "rate" if by_rate else "concurrency"
        return None, f"no step is safe: no {what} limit can be recommended"
    if low.safe is not None and _size(low.safe) < _size(safe):
        return low.safe, (
            f"the confidence band is wide (safe for certain only up to {_level(low.safe, unit=unit)}): "
            f"the limit is set at its low end"
        )
    if low.safe is None:
        return baseline, "no step above the baseline is safe for certain: the limit is the baseline's"
    return safe, "the safe step's offered rate" if by_rate else "the safe step's concurrency"


def _band_note(low: Pass, high: Pass, unit: str = "user") -> str:
    spread = "given the sampling spread of each step's p50"
    if high.safe is None:
        return f"no step is safe even at the favourable end, {spread}"
    if low.safe is None:
        return f"no step is safe for certain; possibly up to {_level(high.safe, unit=unit)}, {spread}"
    if low.safe.index == high.safe.index:
        return f"{_level(low.safe, unit=unit)} either way, {spread}"
    return (f"safe for certain up to {_level(low.safe, unit=unit)}, possibly up to {_level(high.safe, bare=True)}, "
            f"{spread}")  # fmt: skip


def no_verdict(status: str, note: str, degradation: float, top_users: int | None = None) -> Verdict:
    """A verdict that could not be reached (``no_ladder``, ``no_baseline``, ``insufficient_data``)."""
    return Verdict(status, note, degradation, top_users=top_users, confidence=Confidence(note=note), recommended_note=note)


def judge_steps(steps: list[StepView], baseline: Baseline, degradation: float, unit: str = "user") -> Verdict:
    """The verdict (module docstring; schema in docs/summary-schema.md); ``unit`` what a step's users are in its
    notes: ``user``, or ``session`` for a ladder over sessions (:mod:`llmload.analysis.sessions`)."""
    factor = 1.0 + degradation
    ladder = [s for s in steps if s.index is not None and s.index >= 0]
    base = baseline.step
    p50, p99_metrics = _metrics(base.perf)
    limits = _limits(base.perf, p50, factor)
    main = judge_pass(steps, base, limits, lambda s, m: s.perf.value(m), unit=unit)
    limits99 = _limits(base.perf, p99_metrics, factor)
    p99 = judge_pass(steps, base, limits99, lambda s, m: s.perf.value(m), unit=unit)
    low, high = _band(steps, base, limits, unit)
    by_rate = any(s.rate_offered is not None for s in ladder)
    chosen, why = _recommend(main.safe, low, base, by_rate, unit)
    top = ladder[-1].users if ladder else base.users
    if main.breach:
        status, note = "breach", ""
    elif main.stopped:
        status, note = "insufficient_data", main.stopped + ": lengthen --step-time"
    else:
        status = "ok"
        note = f"no step broke the limits: the service holds at least {_users(top, unit)}; extend --ladder to find its limit"
        if ladder and ladder[-1].rate_offered is not None:
            note = (f"no step broke the limits: the service holds at least {ladder[-1].label} at -u {top}; "
                    "extend --rate-ladder to find its limit")  # fmt: skip
    with_ci = sum(1 for s in ladder if s.ci)
    method = (
        "95% intervals of each step's p50 / baseline p50 (order statistics of each step's own samples, exact "
        "binomial ranks; log half-widths added in quadrature): low = the safe level with every ratio at the top of its "
        "interval, high = at the bottom"
    )
    if not with_ci:
        method = "no per-step confidence intervals in this summary: the band is the verdict itself"
    return Verdict(
        status=status,
        note=note,
        degradation=degradation,
        limits={**{f"{m}_ms": limits[m] for m in p50}, "error_rate": ERROR_RATE_LIMIT},
        safe_step=main.safe.index if main.safe else None,
        safe_users=main.safe.users if main.safe else None,
        top_users=top,
        steps_judged=len(ladder),
        breach=main.breach,
        p99=_summary_of(p99, limits99),
        confidence=Confidence(
            band_users=(low.safe.users if low.safe else None, high.safe.users if high.safe else None),
            band_steps=(low.safe.index if low.safe else None, high.safe.index if high.safe else None),
            method=method,
            note=_band_note(low, high, unit),
        ),
        recommended_limit=concurrency_of(chosen) if chosen is not None else None,
        recommended_note=why,
        per_class=_per_class(steps, baseline, factor, unit),
        safe_rate=main.safe.rate_offered if main.safe else None,
        rate_ladder=by_rate,
        recommended_rate=chosen.rate_offered if chosen is not None and by_rate else None,
    )
