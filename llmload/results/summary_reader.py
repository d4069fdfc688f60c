"""Reading a saved summary (schema ``llmload.summary/2``, or version 1 without the ladder keys) back into
a :class:`~llmload.results.model.RunResult`, so that ``llmload report``/``compare`` work on old runs.

The inverse of :mod:`~llmload.results.summary`, lenient about what older or hand-made
summaries lack: a missing figure is None (or 0 for a count), a missing analysis leaves
:attr:`RunResult.judgement` None (the report then runs it), keys this version does not know
are kept in :attr:`RunResult.extra`. Derived figures (error rates, in-flight means) are not
read: they follow from the counts. A value of the wrong type raises :class:`SummaryError`.

The versions read are :data:`READABLE` (a summary without ``schema`` is read as the oldest). A
newer or unknown version is refused (:class:`SummaryError`, one line saying how to fix it), not
read as if it were this one: its keys may mean something else, and a report of it would be
silently wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmload.errors import ConfigError, LlmloadError
from llmload.metrics.latency import Latency
from llmload.metrics.latency import num as _num
from llmload.metrics.parts import parts
from llmload.results.judgement import BaselineRef, Finding, Judgement, Verdict
from llmload.results.model import LATENCY_KEYS, ArrivalResult, RunResult, Stats, StepResult, TraceReplay
from llmload.results.setup import LoadState, RunSetup
from llmload.results.threshold_verdict import ThresholdResult

__all__ = ["READABLE", "SummaryError", "check_schema", "from_summary", "stats_from_dict"]

_PREFIX = "llmload.summary/"
#: The summary schema versions this llmload reads (it writes the last one).
READABLE = (f"{_PREFIX}1", f"{_PREFIX}2")

_KNOWN = frozenset(
    {"schema", "duration_s", "users_max", "overall", "classes", "errors_by_kind", "errors_examples", "started_at", "arrival",
     "config", "profile", "workers", "workers_lost", "client", "warnings", "steps", "server", "gpu", "timeseries", "baseline", "verdict",
     "findings", "thresholds"}
)  # fmt: skip


class SummaryError(LlmloadError):
    """A summary whose values cannot be read (the message says which)."""


def _latency(block: Mapping[str, Any] | None) -> Latency:
    return Latency.from_dict(block)


def stats_from_dict(d: Mapping[str, Any] | None) -> Stats:
    """One STATS block (an empty Stats for None)."""
    if not d:
        return Stats()
    i = lambda k: int(d.get(k) or 0)  # noqa: E731
    return Stats(
        requests=i("requests"),
        ok=i("ok"),
        errors=i("errors"),
        interrupted=i("interrupted"),
        output_tokens=i("output_tokens"),
        input_tokens=i("input_tokens"),
        output_tokens_per_s=_num(d.get("output_tokens_per_s")) or 0.0,
        requests_per_s=_num(d.get("requests_per_s")) or 0.0,
        latency={m: _latency(d.get(f"{m}_ms")) for m in LATENCY_KEYS},
        output_tokens_from_usage_ratio=_num(d.get("output_tokens_from_usage_ratio")),
        partial_output_tokens=i("partial_output_tokens"),
        received_output_tokens=d.get("received_output_tokens"),
        received_output_tokens_per_s=_num(d.get("received_output_tokens_per_s")),
        errors_by_kind={str(k): int(v) for k, v in (d.get("errors_by_kind") or {}).items()},
        buffered_token_jumps=i("buffered_token_jumps"),
        errors_examples={str(k): str(v) for k, v in (d.get("errors_examples") or {}).items()},
        client_wait=_latency(d["client_wait_ms"]) if d.get("client_wait_ms") else None,
        parts={p.figures.key: p.figures.from_dict(d) for p in parts()},
    )


def _arrival(d: Mapping[str, Any] | None) -> ArrivalResult:
    """The ``arrival`` block (closed for an older summary without one)."""
    if not d or d.get("mode", "closed") == "closed":
        return ArrivalResult()
    return ArrivalResult(
        mode=str(d["mode"]),
        offered_rate=_num(d.get("offered_rate")),
        achieved_rate=_num(d.get("achieved_rate")),
        arrivals=int(d.get("arrivals") or 0),
        waited=int(d.get("waited") or 0),
        schedule_lag=_latency(d.get("schedule_lag_ms")),
        scheduler_behind=bool(d.get("scheduler_behind")),
        burstiness=_num(d.get("burstiness")),
        trace=_trace(d.get("trace")),
        sent=int(d["sent"]) if d.get("sent") is not None else None,  # older summaries: as many as were due
        unsent_wait_ms=_num(d.get("unsent_wait_max_ms")),
    )


def _trace(d: Mapping[str, Any] | None) -> TraceReplay | None:
    if not d:
        return None
    return TraceReplay(str(d.get("file") or ""), int(d.get("entries") or 0), float(d.get("speedup") or 1.0),
                       float(d.get("span_s") or 0.0), float(d.get("block_reuse") or 0.0))  # fmt: skip



def _step(e: Mapping[str, Any]) -> StepResult:
    ci = {k[:-3] if k.endswith("_ms") else k: (float(v[0]), float(v[1]))
          for k, v in (e.get("p50_ci95") or {}).items() if v and len(v) == 2}  # fmt: skip
    return StepResult(
        index=int(e.get("index") or 0),
        users=int(e.get("users") or 0),
        started_at=_num(e.get("started_at")) or 0.0,
        steady_from=_num(e.get("steady_from")),
        ended_at=_num(e.get("ended_at")),
        steady_s=_num(e.get("steady_s")) or 0.0,
        overall=stats_from_dict(e.get("overall")),
        classes={str(n): stats_from_dict(c) for n, c in (e.get("classes") or {}).items()},
        ci=ci,
        server=dict(e.get("server") or {}),
        gpu=dict(e.get("gpu") or {}),
        rate_offered=_num(e.get("rate_offered")),
        rate_achieved=_num(e.get("rate_achieved")),
    )


def _threshold(t: Mapping[str, Any]) -> ThresholdResult:
    ci = t.get("ci95")
    passed = t.get("passed")
    return ThresholdResult(str(t["expr"]), _num(t.get("value")), (float(ci[0]), float(ci[1])) if ci else None,
                           bool(passed) if passed is not None else None, str(t.get("note") or ""))  # fmt: skip


def _judgement(d: Mapping[str, Any]) -> Judgement | None:
    if not d.get("verdict"):
        return None
    b = d.get("baseline")
    baseline = BaselineRef(int(b["step"]), str(b.get("source") or "")) if b and b.get("step") is not None else None
    return Judgement(baseline, Verdict.from_dict(d["verdict"]), tuple(Finding.from_dict(f) for f in d.get("findings") or ()))


def check_schema(schema: Any) -> None:
    """:class:`SummaryError` unless ``schema`` is a version in :data:`READABLE` (or absent: the oldest)."""
    if schema is None or schema in READABLE:
        return
    version = schema[len(_PREFIX) :] if isinstance(schema, str) and schema.startswith(_PREFIX) else ""
    known = ", ".join(READABLE)
    if version.isdigit() and int(version) > int(READABLE[-1][len(_PREFIX) :]):
        raise SummaryError(f"summary schema {schema} is newer than this llmload reads ({known}): "
                           "upgrade llmload (pip install -U llmload) to report or compare it")  # fmt: skip
    raise SummaryError(f"unknown summary schema {schema!r} (this llmload reads {known}): "
                       "give a summary.json written by llmload run, or upgrade llmload")  # fmt: skip


def from_summary(d: Mapping[str, Any]) -> RunResult:
    """The :class:`RunResult` of a summary dict (module docstring); :class:`SummaryError` when it cannot be read
    (a schema version it does not know among them: :func:`check_schema`)."""
    check_schema(d.get("schema") if isinstance(d, Mapping) else None)
    try:
        classes = d.get("classes") or {}
        steps = sorted((_step(e) for e in d.get("steps") or ()), key=lambda s: s.index)
        client = d.get("client") or {}
        lost = d.get("workers_lost")
        return RunResult(
            duration_s=_num(d.get("duration_s")) or 0.0,
            users_max=int(d.get("users_max") or 0),
            overall=stats_from_dict(d.get("overall")),
            classes={str(n): stats_from_dict(c) for n, c in classes.items()},
            weights={str(n): _num((c or {}).get("weight")) for n, c in classes.items()},
            steps=tuple(steps),
            started_at=d.get("started_at"),
            setup=RunSetup.from_summary(d.get("config"), d.get("profile")),
            load=LoadState(d.get("workers"), tuple(lost) if lost is not None else None, bool(client.get("saturated")),
                           tuple(client.get("saturated_processes") or ())),  # fmt: skip
            warnings=tuple(d.get("warnings") or ()),
            server=d.get("server"),
            gpu=d.get("gpu"),
            timeseries=d.get("timeseries"),
            judgement=_judgement(d),
            arrival=_arrival(d.get("arrival")),
            schema=d.get("schema"),
            thresholds=tuple(_threshold(t) for t in d.get("thresholds") or ()),
            extra={k: v for k, v in d.items() if k not in _KNOWN},
        )
    except (AttributeError, KeyError, TypeError, ValueError, ConfigError) as e:  # ConfigError: an unreadable SLO
        raise SummaryError(f"not a readable llmload summary ({type(e).__name__}: {e})") from None
