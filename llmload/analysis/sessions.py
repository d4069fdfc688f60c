"""A ladder over sessions: when each user is a conversation or agent session, the verdict counts sessions.

A conversation or agent class (:mod:`llmload.workload.conversation`, :mod:`llmload.workload.agent`)
keeps one session per Locust user: the user holds it through think and tool time, so a
ladder step of N users is N concurrently active sessions. A set of figures is **over
sessions** (:func:`over_sessions`) when every request in it was a conversation turn: the
requests counted per turn (:mod:`llmload.metrics.parts.turns`, an agent's turns included;
with the child requests of its sub-agents, :mod:`llmload.workload.fanout`) add up to all its requests. A run whose figures mix single requests in is a ladder over users,
as before.

The verdicts of such a ladder, :func:`session_verdicts`, read it as *the most concurrent sessions
the service holds*, first on the SLOs when the run has them, then on the baseline's limits:

* **on SLOs** (``--slo``, a class's ``slo``): the SLO verdict's safe step
  (:mod:`llmload.analysis.slo_verdict`: attainment >= ``--slo-attainment``) is the max
  sessions under SLO; beside it, per SLO key, the step's latency percentile at the target
  (:func:`target_quantile`: p99 for a target above 0.9, p90 above 0.5, else p50) against the
  limit, and the attainment; the failed step names the SLO most of its requests missed with
  the same figure;
* **on the baseline's limits** (every ladder): the safe-concurrency verdict (:mod:`llmload.analysis.verdict`, each step
  within ``(1 + d)`` of the baseline): its safe step, with the p50 figures against its limits,
  and its breach.

Per session, at each of those steps (:func:`per_session`): the session duration p50 and the
turns per session of the agent classes' ended sessions (:mod:`llmload.metrics.parts.agents`),
or, for conversation classes, turns per session = turn requests / first turns (sessions started).
No summary key holds this: the writers derive it from the summary's steps and verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from llmload.metrics.parts.agents import AgentFigures
from llmload.results.judgement import Verdict
from llmload.results.model import RunResult, Stats, StepResult
from llmload.results.setup import DEFAULT_DEGRADATION

__all__ = ["Figure", "SessionLevel", "SessionVerdict", "over_sessions", "per_session", "result_over_sessions",
           "session_verdicts", "target_quantile"]  # fmt: skip

#: SLO key -> the latency it limits.
_SLO_METRIC = {"ttft_ms": "ttft", "tpot_ms": "tpot", "e2e_ms": "e2e"}


def _turn_requests(s: Stats) -> int:
    """Requests of session turns: ``by_turn``'s, and the sub-agents' (a parent session's own; in no ``by_turn``)."""
    fan = s.part(AgentFigures).fanout
    return sum(t.requests for t in s.by_turn.values()) + (fan.requests if fan is not None else 0)


def over_sessions(stats: Iterable[Stats]) -> bool:
    """True when some of ``stats`` had requests and every request of them was a conversation (or agent) turn."""
    seen = False
    for s in stats:
        if not s.requests:
            continue
        if _turn_requests(s) < s.requests:
            return False
        seen = True
    return seen


def result_over_sessions(result: RunResult) -> bool:
    """A ladder run whose every request was a session's turn (the whole run's figures)."""
    return bool(result.steps) and over_sessions([result.overall])


def target_quantile(target: float) -> str:
    """The percentile that must be within a limit for ``target`` of the requests to meet it: p50, p90 or p99."""
    return "p99" if target > 0.9 else "p90" if target > 0.5 else "p50"


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure beside a level: ``metric`` (``ttft_p99``, ``attainment``, ``error_rate``), its value and limit.

    Latencies in ms; ``attainment`` and ``error_rate`` as ratios. ``limit`` None: shown without one.
    """

    metric: str
    value: float | None
    limit: float | None = None


@dataclass(frozen=True, slots=True)
class SessionLevel:
    """A judged step: its sessions (users), the figures it was judged on, and per session its duration and turns."""

    step: int | None
    sessions: int
    figures: tuple[Figure, ...] = ()
    duration_p50_ms: float | None = None
    turns_per_session: float | None = None


@dataclass(frozen=True, slots=True)
class SessionVerdict:
    """The verdict of a ladder over sessions (module docstring).

    ``basis``: ``slo`` or ``degradation``; ``status``: ``ok`` (no step broke: at least ``top``
    sessions), ``breach`` or ``insufficient_data``; ``held`` the largest step within the
    limits (None: none), ``failed`` the first that broke them, ``missed`` what it broke first
    (an SLO key or ``errors``; a verdict metric such as ``ttft_p50``); ``target`` the
    attainment target (``slo`` only); ``note`` why the judgement stopped (insufficient data).
    """

    basis: str
    status: str
    held: SessionLevel | None
    failed: SessionLevel | None = None
    missed: str | None = None
    target: float | None = None
    degradation: float = DEFAULT_DEGRADATION
    top: int | None = None
    baseline_sessions: int = 1
    note: str | None = None


def per_session(s: Stats) -> tuple[float | None, float | None]:
    """(session duration p50 in ms, turns per session) of ``s``: its agent sessions, else its conversation turns."""
    a = s.part(AgentFigures).sessions
    if a.sessions:
        return a.duration.p50, a.turns_mean
    first = s.by_turn.get("1")
    if first is None or not first.requests:
        return None, None
    return None, _turn_requests(s) / first.requests


def _level(st: StepResult, figures: tuple[Figure, ...]) -> SessionLevel:
    duration, turns = per_session(st.overall)
    return SessionLevel(st.index, st.users, figures, duration, turns)


def _slo_figures(st: StepResult, slos: dict[str, dict[str, float]], target: float,
                 only: str | None = None) -> tuple[Figure, ...]:  # fmt: skip
    """Per SLO key (``only``: that one), the step's percentile at the target against the limit; then the attainment.

    One class, or every class with the same limits: the step's overall figures; else each class's own, as
    ``class:metric``.
    """
    q = target_quantile(target)
    limits = [dict(v) for v in slos.values() if v]
    same = all(lim == limits[0] for lim in limits) if limits else True
    out: list[Figure] = []
    scopes = [("", st.overall, limits[0] if limits else {})] if same else [
        (f"{n}:", st.classes[n], dict(lim)) for n, lim in slos.items() if lim and n in st.classes]  # fmt: skip
    for prefix, s, lim in scopes:
        for key, limit in lim.items():
            metric = _SLO_METRIC.get(key)
            if metric is None or (only is not None and key != only):
                continue
            out.append(Figure(f"{prefix}{metric}_{q}", getattr(s.lat(metric), q), float(limit)))
    g = st.overall.goodput
    out.append(Figure("attainment", g.attainment if g is not None else None, target))
    return tuple(out)


def _by_slo(result: RunResult) -> SessionVerdict | None:
    v = result.judgement.verdict if result.judgement is not None else None
    slo = v.slo if v is not None else None
    if slo is None:
        return None
    o = slo.overall
    if o.status not in ("ok", "breach", "insufficient_data"):
        return None
    slos = {n: dict(x) for n, x in slo.slos.items()}
    held = result.step(o.safe_step) if o.safe_step is not None else None
    failed = result.step(o.failed_step) if o.failed_step is not None else None
    missed = o.failed_slo
    failed_figs: tuple[Figure, ...] = ()
    if failed is not None:
        only = missed if missed in _SLO_METRIC else ""
        failed_figs = _slo_figures(failed, slos, slo.target, only)
        if missed == "errors":
            failed_figs = (Figure("error_rate", failed.overall.error_rate), *failed_figs)
    return SessionVerdict(
        "slo", o.status,
        _level(held, _slo_figures(held, slos, slo.target)) if held is not None else None,
        _level(failed, failed_figs) if failed is not None else None,
        missed, slo.target, v.degradation if v is not None else DEFAULT_DEGRADATION, _top(result), 1, o.note,
    )  # fmt: skip


def _verdict_figures(st: StepResult, v: Verdict) -> tuple[Figure, ...]:
    """The safe step's figures on the verdict's latency limits (``ttft_p50_ms`` -> ``ttft_p50``)."""
    out = []
    for key, limit in (v.limits or {}).items():
        if key == "error_rate" or not key.endswith("_ms"):
            continue
        metric, q = key[:-3].rsplit("_", 1)
        out.append(Figure(key[:-3], getattr(st.overall.lat(metric), q, None), limit))
    return tuple(out)


def _by_degradation(result: RunResult) -> SessionVerdict | None:
    v = result.judgement.verdict if result.judgement is not None else None
    if v is None or v.status not in ("ok", "breach", "insufficient_data"):
        return None
    held = result.step(v.safe_step) if v.safe_step is not None else None
    b = v.breach
    failed = result.step(b.step) if b is not None and b.step is not None else None
    failed_level = None
    if b is not None:
        fig = Figure(b.metric, b.value, b.limit)
        failed_level = (_level(failed, (fig,)) if failed is not None
                        else SessionLevel(b.step, b.users, (fig,)))  # fmt: skip
    base = result.step(result.judgement.baseline.step) if result.judgement and result.judgement.baseline else None
    return SessionVerdict(
        "degradation", v.status, _level(held, _verdict_figures(held, v)) if held is not None else None,
        failed_level, b.metric if b is not None else None, None, v.degradation, _top(result),
        base.users if base is not None else 1, v.note if v.status == "insufficient_data" else None,
    )  # fmt: skip


def _top(result: RunResult) -> int | None:
    return max((st.users for st in result.steps if st.index >= 0), default=None)


def session_verdicts(result: RunResult) -> tuple[SessionVerdict, ...]:
    """The max-sessions verdicts of ``result`` (module docstring): on its SLOs (runs with SLOs), then on the
    baseline's +d limits; none unless its ladder is over sessions and was judged (ok, breach, insufficient data)."""
    if not result_over_sessions(result):
        return ()
    return tuple(v for v in (_by_slo(result), _by_degradation(result)) if v is not None)
