"""Building the typed results straight from the merged histograms (nothing rounded here).

* :func:`stats_of` — one :class:`~llmload.metrics.recorder.ClassStats` over a span → :class:`Stats`:
  the core's figures, and each part's (:mod:`llmload.metrics.parts`) as that part gives them;
* :func:`build_steps` — the ladder's step windows and per-step statistics → :class:`StepResult` s,
  with each step's p50 intervals (:func:`median_ci`) and, given the collected series, its
  server/GPU signals over the steady window;
* :func:`unfinished_warning` — most requests still running at the end (or none completed: failed);
* :func:`load_generator` — the load generator's state in a merged :class:`~llmload.metrics.aggregation.Snapshot`;
* :func:`build_result` — a run's merged statistics and what the coordinator knows about the run
  → :class:`RunResult`.

**Confidence intervals** (one definition: :mod:`llmload.metrics.confidence`, order statistics,
exact binomial ranks): each headline latency's p50/p90/p99 per class, overall and per step, and
each step's p50 (:func:`median_ci`, the verdict's confidence band; under 6 samples, their range).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from llmload.metrics.aggregation import SUSTAINED_REPORTS, Snapshot
from llmload.metrics.confidence import quantile_ci
from llmload.metrics.definitions import achieved_rate, received_output_tokens, received_output_tokens_per_s
from llmload.metrics.histogram import Histogram
from llmload.metrics.parts.contract import Context
from llmload.metrics.recorder import CLIENT_WAIT, ClassStats, MetricSet
from llmload.metrics.thresholds import Threshold
from llmload.metrics.warmup_window import RunNotes
from llmload.results.arrival_block import arrival_result, arrival_warnings, held_back, trace_replay
from llmload.results.model import CI_LATENCIES, LATENCY_KEYS, ArrivalResult, Latency, RunResult, Stats, StepResult
from llmload.results.prompt_size import prompt_size_warning
from llmload.results.setup import LoadState, RunSetup
from llmload.results.step_signals import Series, window_stats
from llmload.results.threshold_verdict import evaluate

__all__ = [
    "LoadGenerator",
    "CI_METRICS",
    "Window",
    "arrival_result",
    "arrival_warnings",
    "build_result",
    "build_steps",
    "held_back",
    "load_generator",
    "median_ci",
    "stats_of",
    "trace_replay",
    "unfinished_warning",
    "with_step_signals",
]

#: Latencies whose p50 gets a confidence interval (the ones the verdict judges).
CI_METRICS = ("ttft", "tpot")


class Window(Protocol):
    """When a step ran (wall clock, s): what :class:`~llmload.ladder.tracker.StepWindow` records."""

    index: int
    users: int
    started_at: float
    steady_from: float | None
    ended_at: float | None
    rate: float | None  # a rate ladder's offered rate (requests/s)


def median_ci(h: Histogram) -> tuple[float, float] | None:
    """95 % interval of the median of ``h`` in ms (:func:`~llmload.metrics.confidence.quantile_ci`); with
    too few samples for one, their range [min, max]; None without samples."""
    if h.count == 0:
        return None
    ci = quantile_ci(h, 0.5)
    lo, hi = ci if ci is not None else (h.min, h.max)
    return lo * 1000.0, hi * 1000.0


def stats_of(s: ClassStats, span_s: float, slos: bool = False, open_loop: bool = False) -> Stats:
    """The figures of ``s`` over ``span_s`` seconds of test time (rates 0 for an empty span): the core's, and
    every part's; ``slos``: the run judged requests against SLOs (then ``goodput`` is set); ``open_loop``: the
    run had an arrival schedule (then ``client_wait`` is set)."""
    core = s.core
    c = core.counters
    ctx = Context(span_s, slos, open_loop, c["ok"], c["errors"], core.hist["ttft"])
    return Stats(
        requests=c["requests"],
        ok=c["ok"],
        errors=c["errors"],
        interrupted=c["interrupted"],
        output_tokens=c["output_tokens"],
        input_tokens=c["input_tokens"],
        output_tokens_per_s=ctx.per_s(c["output_tokens"]),
        requests_per_s=ctx.per_s(c["ok"]),
        latency={m: Latency.from_histogram(core.hist[m], ci=m in CI_LATENCIES) for m in LATENCY_KEYS},
        output_tokens_from_usage_ratio=c["output_tokens_from_usage"] / c["ok"] if c["ok"] else None,
        partial_output_tokens=c["partial_output_tokens"],
        received_output_tokens=received_output_tokens(c["output_tokens"], c["partial_output_tokens"]),
        received_output_tokens_per_s=received_output_tokens_per_s(c["output_tokens"], c["partial_output_tokens"], span_s),
        errors_by_kind=dict(sorted(core.errors_by_kind.items())),
        buffered_token_jumps=c["buffered_token_jumps"],
        errors_examples={k: core.errors_examples[k] for k in sorted(core.errors_examples)},
        client_wait=Latency.from_histogram(core.hist[CLIENT_WAIT]) if open_loop else None,
        parts={(f := p.result(ctx)).key: f for p in s.parts.values()},
    )


def _steady_s(w: Window) -> float:
    return w.ended_at - w.steady_from if w.ended_at and w.steady_from else 0.0


def _signals(series: Series | None, steady_from: float | None, ended_at: float | None) -> dict[str, dict[str, float]]:
    """The signals of ``series`` over a step's steady window (none when the window or the series is missing)."""
    if not series or steady_from is None or ended_at is None:
        return {}
    return window_stats(series, steady_from, ended_at)


def build_steps(
    windows: Sequence[Window],
    metrics: Mapping[int, MetricSet],
    classes: Sequence[str],
    server: Series | None = None,
    gpu: Series | None = None,
    slos: bool = False,
    open_loop: bool = False,
) -> tuple[StepResult, ...]:
    """One :class:`StepResult` per window, in the windows' order; ``classes`` lists the per-class entries."""
    out = []
    for w in windows:
        m = metrics.get(w.index) or MetricSet()
        span = _steady_s(w)
        overall = m.overall()
        ci = {name: c for name in CI_METRICS if (c := median_ci(overall.hist[name])) is not None}
        out.append(
            StepResult(
                index=w.index,
                users=w.users,
                started_at=w.started_at,
                steady_from=w.steady_from,
                ended_at=w.ended_at,
                steady_s=span,
                overall=stats_of(overall, span, slos, open_loop),
                classes={n: stats_of(m.classes.get(n) or ClassStats(), span, slos, open_loop) for n in classes},
                ci=ci,
                server=_signals(server, w.steady_from, w.ended_at),
                gpu=_signals(gpu, w.steady_from, w.ended_at),
                rate_offered=(rate := getattr(w, "rate", None)),
                rate_achieved=achieved_rate(overall.counters["requests"], span) if rate is not None else None,
            )
        )
    return tuple(out)


def with_step_signals(result: RunResult, server: Series | None, gpu: Series | None) -> RunResult:
    """``result`` with each step's missing server/GPU signals computed from the stored series (older summaries)."""
    steps = tuple(
        replace(st, server=st.server or _signals(server, st.steady_from, st.ended_at),
                gpu=st.gpu or _signals(gpu, st.steady_from, st.ended_at))
        for st in result.steps
    )
    return replace(result, steps=steps)


class LoadGenerator(RunNotes):
    """:func:`load_generator`: the load generator's state, its warnings and (added at the end of the run, see
    :class:`~llmload.metrics.warmup_window.RunNotes`) the summary's ``extra`` blocks."""

    load: LoadState


def load_generator(snap: Snapshot, *, master: bool, local_id: str) -> LoadGenerator:
    """``{"load": LoadState, "warnings": (...)}``: the load generator's state (a master's workers, the lost
    ones, saturated processes) and what it warns of (``build_result(load=...)`` takes the dict)."""
    workers = [w for w in snap.workers if w.worker_id != local_id] if master else None
    lost = tuple(sorted(w.worker_id for w in workers if w.lost)) if workers is not None else None
    saturated = tuple(sorted(w.worker_id for w in snap.workers if w.saturated_ever))
    warnings = []
    if saturated:
        warnings.append(
            f"the load generator was saturated (CPU >= 85 % of a core or event-loop lag >= 50 ms, "
            f"{SUSTAINED_REPORTS} reports in a row, in {', '.join(saturated)}): latencies measure the client, "
            "not the server; add workers (--processes N)"
        )
    if lost:
        warnings.append(f"workers lost during the run (their reports so far are included): {', '.join(lost)}")
    state = LoadState(len(workers) if workers is not None else None, lost, bool(saturated), saturated)
    return {"load": state, "warnings": tuple(warnings)}


def unfinished_warning(s: Stats) -> str | None:
    """A warning when most started requests were still running at the end, or none completed while some were."""
    n, ok, cut, failed = s.requests, s.ok, s.interrupted, s.errors
    if not cut or (cut * 2 <= n and ok):
        return None
    if cut * 2 <= n:  # none completed, and most that ended failed: the errors, not the stop, left no latencies
        return (
            f"no request completed: {failed} of {n} started requests failed and the other {cut} were still running "
            "when the test ended, so there are no latencies or output tok/s; see errors by kind for why they failed"
        )
    rate = round(s.received_output_tokens_per_s or 0.0, 3)
    also = f", {failed} failed" if failed else ""
    return (
        f"most requests were still running when the test ended ({cut} of {n} started requests interrupted, "
        f"{ok} completed{also}): latencies and output tok/s cover completed requests only; what streamed is in "
        f"received tok/s ({s.received_output_tokens} tokens, {rate:g}/s). "
        "Run longer (-t) or ask for shorter outputs (the profile's output_tokens)"
    )


def build_result(
    metrics: MetricSet,
    *,
    duration_s: float,
    users_max: int,
    weights: Mapping[str, float | None],
    windows: Sequence[Window] = (),
    step_metrics: Mapping[int, MetricSet] | None = None,
    started_at: str | None = None,
    setup: RunSetup | None = None,
    load: Mapping[str, Any] | None = None,
    collection: Mapping[str, Any] | None = None,
    series: tuple[Series, Series] = ({}, {}),
    slos: bool = False,
    arrival: ArrivalResult | None = None,
    thresholds: Sequence[Threshold] = (),
) -> RunResult:
    """The run's results from its merged ``metrics`` over ``duration_s`` seconds of test time.

    ``weights`` (class → profile weight) lists classes in profile order, including classes
    that sent nothing; ``windows`` and ``step_metrics`` are the ladder's steps; ``setup`` the run's
    (:meth:`RunSetup.from_run`); ``load`` the load generator's state (:func:`load_generator`); ``collection`` the collector's
    ``server``/``gpu``/``timeseries`` blocks; ``series`` its plain (server, gpu) series, for
    the steps' signals; ``slos``: requests were judged against SLOs (every Stats gets ``goodput``);
    ``arrival`` the arrival block before its achieved rate (:func:`arrival_result`
    with any rate: it is recomputed here from the requests and ``duration_s``); ``thresholds``
    are judged on the result (:mod:`llmload.results.threshold_verdict`).
    """
    duration_s = duration_s if math.isfinite(duration_s) and duration_s > 0 else 0.0
    names = list(weights) + [n for n in metrics.classes if n not in weights]
    collection = collection or {}
    arrival = arrival or ArrivalResult()
    open_loop = arrival.open_loop
    overall = stats_of(metrics.overall(), duration_s, slos, open_loop)
    if open_loop:
        arrival = replace(arrival, achieved_rate=achieved_rate(overall.requests, duration_s))
    load = dict(load or {})
    said = (unfinished_warning(overall), prompt_size_warning(metrics.classes))
    extra_warnings = [w for w in said if w] + arrival_warnings(arrival, overall, users_max)
    if extra_warnings:
        load["warnings"] = (*load.get("warnings", ()), *extra_warnings)
    result = RunResult(
        duration_s=duration_s,
        users_max=users_max,
        overall=overall,
        classes={n: stats_of(metrics.classes.get(n) or ClassStats(), duration_s, slos, open_loop) for n in names},
        weights={n: weights.get(n) for n in names},
        steps=build_steps(windows, step_metrics or {}, list(weights), *series, slos=slos, open_loop=open_loop),
        started_at=started_at,
        setup=setup or RunSetup(),
        server=collection.get("server"),
        gpu=collection.get("gpu"),
        timeseries=collection.get("timeseries"),
        arrival=arrival,
        **load,
    )
    return replace(result, thresholds=evaluate(result, thresholds)) if thresholds else result
