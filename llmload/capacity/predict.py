"""A predicted run: a workload replayed on the fitted engine model, as a normal run summary.

:func:`predicted_result` drives the workload (:mod:`llmload.capacity.drive`), turns every
request into a :class:`~llmload.metrics.record.RequestRecord` (its token times as chunk
stamps), counts them as a real run does (whole run and each step's steady window) and builds
the :class:`~llmload.results.model.RunResult` with the same code a real run uses, analysed
(baseline, verdict, findings). The summary's ``predicted`` block names the engine file (and
its hash), the overrides, the replicas and router, and where the prediction goes beyond what
the fit measured (``extrapolates``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from llmload.analysis.analyze import analyze
from llmload.capacity.agent_session import RECORD_BASE_NS
from llmload.capacity.drive import Drive, Sent, Workload, drive_run, step_bounds
from llmload.capacity.session_replay import longest
from llmload.ladder.tracker import StepWindow
from llmload.metrics.arrival_stats import QUEUE_JITTER_S, ArrivalStats
from llmload.metrics.definitions import slo_missed
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet
from llmload.metrics.slo import SLO
from llmload.results import RunResult, RunSetup
from llmload.results.arrival_block import arrival_result
from llmload.results.build import build_result
from llmload.sim.params import EngineParams

__all__ = ["extrapolation", "predicted_result", "to_record"]

_DRAIN_S = 600.0  # llmload run's default --request-timeout: how long a ladder's end waits at most
_BASE_NS = RECORD_BASE_NS  # records' clock starts at 1 s (0 means "unset" for a record's stamps)


def to_record(s: Sent, open_loop: bool, cut_at: float) -> RequestRecord:
    rec = RequestRecord(s.cls, s.prompt, s.max_tokens)
    rec.start_ns = _BASE_NS + int(s.t * 1e9)
    rec.start_wall_ns = rec.start_ns
    if open_loop:  # latencies run from the intended send time (a wait for the -u cap counts)
        rec.intended_ns = _BASE_NS + int((s.t if s.intended is None else s.intended) * 1e9)
    times = [t for t in s.times if t <= cut_at]
    rec.chunk_ns = [_BASE_NS + int(t * 1e9) for t in times]
    rec.headers_ns = rec.chunk_ns[0] if rec.chunk_ns else 0
    rec.output_tokens = len(times)
    rec.first_output_chunk = 0 if times else -1
    rec.turn, rec.session, rec.user, rec.agent = s.turn, s.session, s.user, s.agent
    rec.cached_prompt_tokens = getattr(s.seq, "cached_tokens", None)  # the engine's usage says it, as the simulator's
    rec.end_ns = rec.chunk_ns[-1] if rec.chunk_ns else _BASE_NS + int(min(cut_at, s.t) * 1e9)
    if s.error:
        rec.outcome, rec.status, rec.error_message = "error", s.status, s.error
        rec.error_kind = f"http_{s.status}" if s.status != 200 else "stream_error"
    elif s.done and len(times) == len(s.times):
        rec.outcome, rec.status, rec.finish_reason = "ok", 200, "length"
    else:
        rec.outcome, rec.status = "interrupted", 200
    return rec


def predicted_result(
    params: EngineParams,
    w: Workload,
    *,
    replicas: int = 1,
    router: str = "round-robin",
    profile: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    predicted: Mapping[str, Any] | None = None,
    degradation: float | None = None,  # None: the config's (the flag's default)
    slos: Mapping[str, SLO] | None = None,
) -> RunResult:
    """The run ``w`` would be on ``replicas`` engines with ``params``, analysed as a real run.

    ``slos``: each class's SLOs (:func:`~llmload.metrics.slo.class_slos`; None: no SLOs): every
    successful request is judged as a real run judges it (goodput, attainment, the SLO verdict)."""
    ladder = len(w.steps) > 1 or bool(config and config.get("ladder"))
    # a ladder waits for its requests in flight, and a trace replay for its last answers; a plain run stops them
    drain = _DRAIN_S if ladder or w.arrival == "trace" else 0.0
    d = drive_run(params, w, replicas, router, drain)
    sent = d.sent
    bounds = step_bounds(w)
    end = bounds[-1][2] if bounds else 0.0
    if w.arrival == "trace":  # a replay lasts until its last answer (as llmload run's), not its last arrival
        end = max([end, *(s.times[-1] for s in sent if s.times)])
    open_loop = w.arrival != "closed"
    run, steps = MetricSet(), {i: MetricSet() for i in range(len(bounds))}
    for s in sent:
        rec = to_record(s, open_loop, end + drain)
        missed = slo_missed(rec, slos.get(rec.class_name, SLO())) if slos is not None and rec.outcome == "ok" else None
        run.add(rec, missed)
        i = _step_of(bounds, s.t)  # as llmload run: the step whose steady window ran when the request started
        if i is not None and (rec.outcome != "interrupted" or not s.times):
            steps[i].add(rec, missed)
    wall0 = time.time()
    windows = [
        StepWindow(i, st.users, wall0 + b[0], wall0 + b[1], wall0 + b[2], st.rate)
        for i, (st, b) in enumerate(zip(w.steps, bounds, strict=True))
    ] if ladder else []  # fmt: skip
    rate = w.steps[0].rate if open_loop and len(w.steps) == 1 else None
    if w.trace_replay is not None:
        rate = w.trace_replay.offered_rate  # as llmload run: a trace's mean rate at its speedup
    arrival = arrival_result(w.arrival, rate, _arrival_stats(d, end) if open_loop else None, 0, 0.0,
                             w.burstiness if w.arrival == "gamma" else None, w.trace_replay)  # fmt: skip
    result = build_result(
        run,
        duration_s=end,
        users_max=max(s.users for s in w.steps),
        weights={c.name: c.weight for c in w.classes},
        windows=windows,
        step_metrics=steps,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall0)),
        setup=RunSetup.from_summary({**(config or {}), "host": "predicted"}, profile),
        arrival=arrival,
        slos=slos is not None,
    )
    result = replace(result, extra={**result.extra, "predicted": dict(predicted or {})})
    return replace(result, judgement=analyze(result, degradation))


def _step_of(bounds: list[tuple[float, float, float]], t: float) -> int | None:
    for i, (_, steady, stop) in enumerate(bounds):
        if steady <= t < stop:
            return i
    return None


def _arrival_stats(d: Drive, end: float) -> ArrivalStats:
    """The client's arrival figures of an open loop, as a real run's dispatcher counts them: arrivals due,
    sent, those that waited for the -u cap (beyond the loop's jitter), the longest wait of those never sent;
    the schedule lag of each arrival is 0 on the virtual clock."""
    a = ArrivalStats()
    a.sent = sum(s.intended is not None for s in d.sent)  # arrivals: a recorded session's later turns are none
    a.arrivals = a.sent + len(d.unsent)
    a.waited = sum(s.intended is not None and s.t - s.intended > QUEUE_JITTER_S for s in d.sent)
    a.unsent_wait = max((end - due for due in d.unsent), default=0.0)
    for _ in range(a.arrivals):
        a.lag.record(0.0)
    return a


def extrapolation(w: Workload, replicas: int, fitted: Mapping[str, Any]) -> list[str]:
    """Where ``w`` goes beyond what the fit measured (``fitted``: the engine file's ``[fitted_range]``)."""
    out = []
    conc = fitted.get("max_concurrency")
    users = max(s.users for s in w.steps) / max(replicas, 1)
    if conc and w.arrival == "closed" and users > conc:
        out.append(f"{users:g} users per replica > the {conc} the fit measured")
    for key, attr in (("max_input_tokens", "input"), ("max_output_tokens", "output")):
        top = fitted.get(key)
        most = max(longest(c, attr) for c in w.classes) if w.arrival != "trace" else max(
            [float(getattr(e, "prompt" if attr == "input" else "max_tokens")) for e in w.trace] or [0.0])  # fmt: skip
        if top and most > 1.1 * top:  # within 10 % of what was seen is not beyond it
            out.append(f"{attr} up to ~{most:g} tokens > the {top} the fit measured")
    return out
