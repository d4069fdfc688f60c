"""Writing a :class:`~llmload.results.model.RunResult` as the summary (schema ``llmload.summary/2``).

Contract keys (extra keys may be added, these never change meaning; the whole schema is
docs/summary-schema.md)::

    {"schema": "llmload.summary/2", "duration_s": float, "users_max": int,
     "overall": STATS, "classes": {name: STATS + {"weight": w, "share_of_requests"}}, "errors_by_kind": {kind: n},
     "errors_examples": {kind: message},
     "started_at", "config", "profile", "arrival", "workers"?, "workers_lost"?, "client", "warnings",
     "thresholds"?: [{"expr", "value", "ci95": [lo, hi] | null, "passed": bool | null, "note"}],   # --threshold
     "steps"?, "server"?, "gpu"?, "timeseries"?, "baseline", "verdict", "findings"}

    STATS = {"requests", "ok", "errors", "interrupted", "output_tokens", "input_tokens",
             "output_tokens_per_s", "requests_per_s",
             "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms" | "ttfo_ms" | "reasoning_ms":
                 {"mean", "p50", "p90", "p99", "max", "min", "count",
                  "ci95"?: {"p50" | "p90" | "p99": [lo, hi] | null}},   # TTFT/TPOT/ITL/E2E: 95 % intervals
             "output_tokens_from_usage_ratio", "partial_output_tokens", "received_output_tokens",
             "received_output_tokens_per_s", "reconnects", "errors_by_kind", "errors_examples",
             "backoffs", "backoff_s", "retry_afters", "retry_after_s",
             "reasoning_tokens": {"total", "mean", "from_usage", "counted"}, "hidden_reasoning",
             "buffered_token_jumps", "phases": PHASES, "cached_prompt_tokens", "prefix_cache_hit_ratio",
             "by_turn"?: {"1": TURN, ..., "10+": TURN}, "agent"?: AGENT,   # AGENT: metrics/parts/agents.py
             "goodput"?: GOODPUT}                                     # runs with SLOs (--slo, a class's slo)

    PHASES = {"timed_requests", "coverage",
              "client_wait_ms" | "gateway_ms" | "server_queue_ms" | "prefill_ms" | "decode_ms": LATENCY,
              "tail": {"p90" | "p99": {"ttft_ms", "requests", "shares": {"client_wait", "gateway", "server_queue", "prefill", "other"}}}}

    GOODPUT = {"good_requests", "attainment", "requests_per_s", "output_tokens_per_s", "good_output_tokens",
               "missed": {"ttft_ms", "tpot_ms", "e2e_ms"}}   # attainment = good / (ok + errors)
             "received_output_tokens_per_s", "reconnects", "errors_by_kind", "client_wait_ms"? (open loop)}

    ARRIVAL = {"mode": "closed"} | {"mode": "constant"|"poisson"|"gamma"|"trace", "offered_rate", "achieved_rate",
               "arrivals", "sent", "unsent", "unsent_wait_max_ms", "waited", "schedule_lag_ms": {...as a latency},
               "scheduler_behind", "burstiness"?,
               "trace"?: {"file", "entries", "speedup", "span_s", "block_reuse", "sent", "complete"}}

In an open loop (``--arrival`` other than ``closed``) TTFT and E2E run from the intended send
time and ``client_wait_ms`` is actual − intended send (``metrics/definitions.py``).

    TURN = {"requests", "ok", "input_tokens", "input_tokens_mean", "cached_prompt_tokens",
            "prefix_cache_hit_ratio", "ttft_ms" | "tpot_ms" | "e2e_ms": {...}}

A latency with no samples is ``null`` in each figure. Latencies and token counts cover successful
requests (TTFT also those interrupted by the end of the test after their first token);
``received_output_tokens`` is every output token that arrived, whatever the request's outcome,
and ``received_output_tokens_per_s`` its rate (``metrics/definitions.py``). ``reconnects``
counts requests sent again on a fresh connection after a reused keep-alive connection turned
out closed before any response byte (not extra requests: each is one request).
Reasoning models: ``ttfo_ms`` is the time to the first answer or tool-call event (== TTFT
without reasoning), ``reasoning_ms`` first reasoning event -> first output event (requests that
streamed reasoning first); ``reasoning_tokens.total`` the successful requests' reasoning tokens,
``mean`` per request that reasoned, ``from_usage``/``counted`` how many requests that reasoned
took their count from ``usage`` / from the stream; ``hidden_reasoning`` requests whose usage
reported reasoning tokens the stream never showed; ``buffered_token_jumps`` events (any outcome)
that carried more than one token. ``cached_prompt_tokens`` is what the server's answers said it
served from its prefix cache, ``prefix_cache_hit_ratio`` those tokens / the prompt tokens of the
answers that said (``null`` when none did). ``by_turn`` is there for a conversation class (and for
``overall`` and steps when the run has one): one entry per turn, turns from 10 on merged into
``"10+"`` (``metrics/parts/turns.py``). This is where figures are rounded:
milliseconds and rates to 3 decimals (µs), ratios to 4. :func:`stats_dict` writes the core's
keys and then each part's (:mod:`llmload.metrics.parts`: its figures' ``to_dict``), so a new
per-class figure is written (and read back, :mod:`~llmload.results.summary_reader`) by its part alone.
"""

from __future__ import annotations

from llmload.metrics.latency import rnd as _r
from llmload.metrics.parts.contract import Json
from llmload.redact import mask_tree
from llmload.results.judgement import Judgement
from llmload.results.model import LATENCY_KEYS, ArrivalResult, Latency, RunResult, Stats, StepResult
from llmload.results.threshold_verdict import ThresholdResult

__all__ = [
    "SCHEMA",
    "arrival_dict",
    "baseline_dict",
    "latency_dict",
    "stats_dict",
    "step_dict",
    "threshold_dict",
    "to_summary",
]

SCHEMA = "llmload.summary/2"


def latency_dict(lat: Latency) -> dict[str, Json]:
    """mean/p50/p90/p99/max (ms, rounded to µs) plus min and count; a headline latency also ``ci95``
    (:meth:`~llmload.metrics.latency.Latency.to_dict`)."""
    return lat.to_dict()


def stats_dict(s: Stats) -> dict[str, Json]:
    """One STATS block: the core's keys, then each part's (in the parts' order)."""
    out: dict[str, Json] = {
        "requests": s.requests,
        "ok": s.ok,
        "errors": s.errors,
        "interrupted": s.interrupted,
        "output_tokens": s.output_tokens,
        "input_tokens": s.input_tokens,
        "output_tokens_per_s": round(s.output_tokens_per_s, 3),
        "requests_per_s": round(s.requests_per_s, 3),
    }
    for m in LATENCY_KEYS:
        out[f"{m}_ms"] = s.lat(m).to_dict()
    if s.client_wait is not None:
        out["client_wait_ms"] = s.client_wait.to_dict()
    out["output_tokens_from_usage_ratio"] = _r(s.output_tokens_from_usage_ratio, 4)
    out["partial_output_tokens"] = s.partial_output_tokens
    out["received_output_tokens"] = s.received_output_tokens
    out["received_output_tokens_per_s"] = _r(s.received_output_tokens_per_s, 3)
    out["errors_by_kind"] = dict(s.errors_by_kind)
    out["errors_examples"] = dict(s.errors_examples)
    out["buffered_token_jumps"] = s.buffered_token_jumps
    for figures in s.figures():
        out.update(figures.to_dict())
    return out


def arrival_dict(a: ArrivalResult) -> dict[str, Json]:
    """The summary's ``arrival`` block (just the mode in a closed loop)."""
    if not a.open_loop:
        return {"mode": a.mode}
    out: dict[str, Json] = {
        "mode": a.mode,
        "offered_rate": _r(a.offered_rate),
        "achieved_rate": _r(a.achieved_rate),
        "arrivals": a.arrivals,
        "sent": a.started,
        "unsent": a.unsent,
        "unsent_wait_max_ms": _r(a.unsent_wait_ms) if a.unsent else None,
        "waited": a.waited,
        "schedule_lag_ms": latency_dict(a.schedule_lag),
        "scheduler_behind": a.scheduler_behind,
    }
    if a.burstiness is not None:
        out["burstiness"] = a.burstiness
    if a.trace is not None:
        t = a.trace
        out["trace"] = {"file": t.file, "entries": t.entries, "speedup": t.speedup, "span_s": _r(t.span_s),
                        "block_reuse": _r(t.block_reuse, 4), "sent": a.started, "complete": a.started >= t.entries}  # fmt: skip
    return out


def _step_stats(s: Stats, users: int, span_s: float) -> dict[str, Json]:
    """STEP_STATS = STATS + the error rate and Little's-law in-flight mean of the step."""
    out = stats_dict(s)
    out["error_rate"] = _r(s.error_rate, 4)
    out["in_flight_mean"] = _r(s.in_flight_mean(users, span_s), 3)
    return out


def step_dict(st: StepResult) -> dict[str, Json]:
    """One entry of ``steps``."""
    out: dict[str, Json] = {
        "index": st.index,
        "users": st.users,
        "started_at": round(st.started_at, 3),
        "steady_from": round(st.steady_from, 3) if st.steady_from else None,
        "ended_at": round(st.ended_at, 3) if st.ended_at else None,
        "steady_s": round(st.steady_s, 3),
        "overall": _step_stats(st.overall, st.users, st.steady_s),
        "classes": {n: _step_stats(c, st.users, st.steady_s) for n, c in st.classes.items()},
    }
    if st.rate_offered is not None:  # a rate ladder's step
        out["rate_offered"] = _r(st.rate_offered)
        out["rate_achieved"] = _r(st.rate_achieved)
    if st.ci:
        out["p50_ci95"] = {f"{m}_ms": [round(lo, 3), round(hi, 3)] for m, (lo, hi) in st.ci.items()}
    if st.server:
        out["server"] = st.server
    if st.gpu:
        out["gpu"] = st.gpu
    return out


def threshold_dict(t: ThresholdResult) -> dict[str, Json]:
    """One entry of ``thresholds``: the expression, the measured value, its 95 % interval, passed (null: no value)."""
    ci = [_r(t.ci95[0], 4), _r(t.ci95[1], 4)] if t.ci95 is not None else None
    return {"expr": t.expr, "value": _r(t.value, 4), "ci95": ci, "passed": t.passed, "note": t.note}


def _pair(lat: Latency) -> dict[str, float | None]:
    return {"p50": _r(lat.p50), "p99": _r(lat.p99)}


def baseline_dict(result: RunResult, judgement: Judgement) -> dict[str, Json] | None:
    """The summary's ``baseline``: the chosen step's figures and where it came from."""
    ref = judgement.baseline
    st = result.step(ref.step) if ref is not None else None
    if ref is None or st is None:
        return None
    p = st.overall
    e2e = p.lat("e2e")
    out: dict[str, Json] = {
        "step": st.index,
        "users": st.users,
        "source": ref.source,
        "requests": p.ok,
        "ttft_ms": _pair(p.lat("ttft")),
        "tpot_ms": _pair(p.lat("tpot")),
        "itl_ms": _pair(p.lat("itl")),
        "e2e_ms": {"p50": _r(e2e.p50), "p99": _r(e2e.p99), "mean": _r(e2e.mean)},
        "classes": {
            name: {"requests": c.ok, "ttft_ms": _pair(c.lat("ttft")), "tpot_ms": _pair(c.lat("tpot"))}
            for name, c in st.classes.items()
        },
    }
    if st.ci:
        out["p50_ci95"] = {f"{m}_ms": [round(lo, 3), round(hi, 3)] for m, (lo, hi) in st.ci.items()}
    return out


def to_summary(result: RunResult) -> dict[str, Json]:
    """The summary dict of ``result`` (module docstring); without a judgement, no baseline/verdict/findings."""
    total = result.overall.requests
    classes: dict[str, Json] = {}
    for name, s in result.classes.items():
        entry = stats_dict(s)
        entry["weight"] = result.weights.get(name)
        entry["share_of_requests"] = round(s.requests / total, 4) if total else None
        classes[name] = entry
    out: dict[str, Json] = {
        "schema": SCHEMA,
        "duration_s": round(result.duration_s, 3),
        "users_max": result.users_max,
        "overall": stats_dict(result.overall),
        "classes": classes,
        "errors_by_kind": dict(result.errors_by_kind),
        "errors_examples": dict(result.errors_examples),
        "started_at": result.started_at,
        "config": dict(result.config),
        "profile": dict(result.profile),
        "arrival": arrival_dict(result.arrival),
    }
    if result.workers is not None:
        out["workers"] = result.workers
        out["workers_lost"] = list(result.workers_lost or ())
    out["client"] = {"saturated": result.client_saturated, "saturated_processes": list(result.client_saturated_processes)}
    out["warnings"] = list(result.warnings)
    if result.thresholds:
        out["thresholds"] = [threshold_dict(t) for t in result.thresholds]
    if result.steps:
        out["steps"] = [step_dict(st) for st in result.steps]
    for key in ("server", "gpu", "timeseries"):
        part = getattr(result, key)
        if part is not None:
            out[key] = dict(part)
    for key, value in result.extra.items():
        out.setdefault(key, value)
    j = result.judgement
    if j is not None:
        out["baseline"] = baseline_dict(result, j)
        out["verdict"] = j.verdict.to_dict()
        out["findings"] = [f.to_dict() for f in j.findings]
    return mask_tree(out)  # a key a server echoed, wherever it went (llmload.redact): the run dir reads this too
