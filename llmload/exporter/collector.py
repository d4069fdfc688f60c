"""The Prometheus collector: one merged :class:`~llmload.metrics.aggregation.Snapshot` per scrape.

:class:`LlmloadCollector` is a pull collector (client_python "custom collectors"): it keeps
no state of its own; each ``collect()`` takes one snapshot and turns it into metric
families. It lives in its own ``CollectorRegistry`` (:func:`new_registry`), never the
global one, so nothing registers on import and two environments never share series.

Series about requests come from ``snapshot.total`` (everything since the process started,
never reset), so counters and histogram buckets never go backwards: a new test started
from the web UI or a lost worker changes nothing already counted, and ``rate()`` /
``increase()`` work across both. They carry ``{class, api, model}``. Series about the load
generator itself carry no request labels (``{worker}`` where per worker).

=====================================  =======  ==========================================
name                                   type     labels
=====================================  =======  ==========================================
llmload_ttft_seconds                   hist     class, api, model
llmload_itl_seconds                    hist     class, api, model
llmload_tpot_seconds                   hist     class, api, model
llmload_e2e_seconds                    hist     class, api, model
llmload_ttfo_seconds                   hist     class, api, model (first answer/tool-call event)
llmload_reasoning_seconds              hist     class, api, model (first reasoning -> first output)
llmload_phase_seconds                  hist     class, api, model, phase (client_wait, gateway,
                                                server_queue, prefill, decode; definitions.py)
llmload_client_wait_seconds            hist     class, api, model (open loop: actual - intended send)
llmload_requests_total                 counter  class, api, model, outcome (ok|error|interrupted)
llmload_errors_total                   counter  class, api, model, kind
llmload_output_tokens_total            counter  class, api, model
llmload_input_tokens_total             counter  class, api, model
llmload_partial_output_tokens_total    counter  class, api, model
llmload_reconnects_total               counter  class, api, model (sent again: stale keep-alive)
llmload_cached_prompt_tokens_total     counter  class, api, model (the server's usage.cached_tokens)
llmload_cache_stated_prompt_tokens_total  counter  class, api, model (prompt tokens of the answers that
                                                stated cached_tokens: the hit ratio's divisor)
llmload_reasoning_tokens_total         counter  class, api, model (successful requests)
llmload_hidden_reasoning_requests_total  counter  class, api, model (usage: reasoning, stream: none)
llmload_buffered_token_jumps_total     counter  class, api, model (events carrying k > 1 tokens)
llmload_good_requests_total            counter  class, api, model (ok and met every SLO of its class;
                                                only in runs with SLOs: --slo, a class's slo)
llmload_slo_attainment_target          gauge    — (--slo-attainment; only in runs with SLOs)
llmload_error_backoff_seconds_total    counter  class, api, model (user-seconds waited after failed requests)
llmload_agent_tool_turns_total         counter  class, api, model (agent turns answered with tool calls)
llmload_agent_sessions_total           counter  class, api, model (agent sessions ended, complete or failed)
llmload_in_flight_requests             gauge    class, api, model
llmload_users                          gauge    —
llmload_workers                        gauge    — (live workers; a standalone process is 1)
llmload_workers_lost                   gauge    —
llmload_worker_cpu_ratio               gauge    worker
llmload_worker_loop_lag_seconds        gauge    worker
llmload_client_saturated               gauge    — (0/1)
llmload_offered_rate_per_second        gauge    — (open loop only: the arrival rate now offered)
llmload_achieved_rate_per_second       gauge    — (requests started per second over the last 30 s)
llmload_info                           info     version, api, model, profile
llmload_ladder_step                    gauge    — (index of the running step, -1 = baseline;
                                                only while a ladder runs)
llmload_ladder_step_users              gauge    — (the step's user count)
llmload_ladder_step_steady             gauge    — (1 in the step's measured window)
llmload_baseline_ttft_seconds          gauge    quantile (0.5, 0.99; once the baseline is measured)
llmload_baseline_tpot_seconds          gauge    quantile
=====================================  =======  ==========================================

The per-class counters after ``llmload_errors_total`` are the ones each part of the class
statistics names (:mod:`llmload.metrics.parts`, ``exported``): a part added there is exported
here without an edit.

Histogram buckets are exact sums of the fine histograms (:mod:`llmload.exporter.buckets`).
Every class of the profile, and every fixed error kind per class, is exported from the
start at 0, so the first request or error of a kind is seen by ``increase()``.
The prefix-cache hit ratio as llmload defines it (``metrics/definitions.py``) is
``rate(llmload_cached_prompt_tokens_total) / rate(llmload_cache_stated_prompt_tokens_total)``.
If ``--model`` changes between two tests of one process, the new label set starts at the
process totals; per-model ``rate()`` stays correct, raw per-model counter values do not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from llmload.errors import ERROR_KINDS
from llmload.exporter.buckets import BUCKETS
from llmload.metrics.aggregation import Snapshot
from llmload.metrics.definitions import METRICS, PHASES
from llmload.metrics.parts import parts
from llmload.metrics.parts.outcomes import Outcomes
from llmload.metrics.recorder import CLIENT_WAIT, ClassStats

__all__ = ["ExportContext", "LlmloadCollector", "new_registry"]

_REQUEST_LABELS = ("class", "api", "model")
_HELP = {
    "ttft": "Time to first token: first content event - request start (successful requests, and interrupted ones)",
    "itl": "Inter-token latency: every gap between consecutive content events (successful requests)",
    "tpot": "Time per output token after the first, per request: (last - first event) / (tokens - 1)",
    "e2e": "End-to-end latency: end of stream - request start (successful requests)",
    "ttfo": "Time to first output token: first answer or tool-call event - request start (successful requests)",
    "reasoning": "Reasoning time: first output event - first reasoning event (successful requests that streamed "
    "reasoning first)",
    "client_wait": "Open loop: actual send - intended send, the wait for a free user under the -u cap (every sent request)",
}
#: Histograms exported per class: the latency metrics, and the open loop's client wait (0 counts in a closed loop).
_HISTOGRAMS = (*METRICS, CLIENT_WAIT)
_OUTCOMES = (("ok", "ok"), ("error", "errors"), ("interrupted", "interrupted"))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("llmload")
    except Exception:  # not installed (running from a source tree)
        return "unknown"


VERSION = _version()


@dataclass(frozen=True, slots=True)
class ExportContext:
    """What the series are labelled with; read at each scrape (a new test may change it)."""

    api: str
    model: str
    profile: str
    classes: tuple[str, ...] = ()  # exported at 0 before their first request
    step: tuple[int, int, bool] | None = None  # running ladder step: (index, users, steady)
    baseline: dict[str, float] | None = None  # {"ttft_p50": s, "ttft_p99": s, "tpot_p50": s, "tpot_p99": s}
    slo_target: float | None = None  # --slo-attainment of a run with SLOs (None: no SLOs, no good-request series)
    offered_rate: float | None = None  # open loop: requests/s offered now (None: a closed loop)


class LlmloadCollector(Collector):
    """Pull collector over ``snapshot()``; see the module docstring for the series."""

    def __init__(self, snapshot: Callable[[], Snapshot], context: Callable[[], ExportContext]) -> None:
        self._snapshot = snapshot
        self._context = context

    def describe(self) -> list[Metric]:
        # Registering must not take a snapshot (the registry calls collect() when describe()
        # is missing); scrapes still get everything collect() yields.
        return []

    def collect(self) -> Iterator[Metric]:
        snap = self._snapshot()
        ctx = self._context()
        classes = dict.fromkeys((*ctx.classes, *sorted(snap.total.classes)))
        stats = {name: snap.total.classes.get(name) or ClassStats() for name in classes}
        yield from _request_families(stats, ctx)
        yield from _load_generator_families(snap, ctx, classes)


def _request_families(stats: dict[str, ClassStats], ctx: ExportContext) -> Iterator[Metric]:
    for metric in _HISTOGRAMS:
        b = BUCKETS[metric]
        fam = HistogramMetricFamily(f"llmload_{metric}_seconds", _HELP[metric], labels=_REQUEST_LABELS)
        for name, s in stats.items():
            h = s.hist[metric]
            # = h.cumulative_at(b.bounds), with the fine-bucket indices computed once (3x faster)
            cum = np.cumsum(h.counts)[b.indices].tolist()
            cum.append(h.count)
            fam.add_metric((name, ctx.api, ctx.model), list(zip(b.labels, cum, strict=True)), h.sum)
        yield fam

    b = BUCKETS["ttft"]  # 1 ms .. 600 s: the gateway of a loopback (< 1 ms) up to a long decode
    phase = HistogramMetricFamily(
        "llmload_phase_seconds",
        "Where successful requests' time went, per phase (server timing when the server sends it; "
        "decode = E2E - TTFT always)",
        labels=(*_REQUEST_LABELS, "phase"),
    )
    for name, s in stats.items():
        for p in PHASES:
            h = s.phases.hist[p]
            cum = np.cumsum(h.counts)[b.indices].tolist()
            cum.append(h.count)
            phase.add_metric((name, ctx.api, ctx.model, p), list(zip(b.labels, cum, strict=True)), h.sum)
    yield phase

    req = CounterMetricFamily("llmload_requests", "Finished requests by outcome", labels=(*_REQUEST_LABELS, "outcome"))
    err = CounterMetricFamily("llmload_errors", "Failed requests by error kind", labels=(*_REQUEST_LABELS, "kind"))
    for name, s in stats.items():
        labels = (name, ctx.api, ctx.model)
        c = s.core.counters
        for outcome, key in _OUTCOMES:
            req.add_metric((*labels, outcome), c[key])
        kinds = dict.fromkeys(ERROR_KINDS, 0)
        kinds.update(s.errors_by_kind)
        for kind, n in sorted(kinds.items()):
            err.add_metric((*labels, kind), n)
    yield from (req, err)
    yield from _part_counters(stats, ctx)
    if ctx.slo_target is not None:
        yield GaugeMetricFamily(
            "llmload_slo_attainment_target",
            "Share of finished requests that must be good (--slo-attainment), for the attainment alert",
            value=ctx.slo_target,
        )


def _part_counters(stats: dict[str, ClassStats], ctx: ExportContext) -> Iterator[Metric]:
    """The counters each part names (:class:`~llmload.metrics.parts.contract.Exported`), per class; a part's
    SLO-only counters only in a run with SLOs."""
    named = ((None, Outcomes.exported), *((p.key, p.exported) for p in parts()))  # None: the core
    for key, exported in named:
        for e in exported:
            if e.slo_only and ctx.slo_target is None:
                continue
            fam = CounterMetricFamily(f"llmload_{e.name}", e.help, labels=_REQUEST_LABELS)
            for name, s in stats.items():
                fam.add_metric((name, ctx.api, ctx.model), e.value(s.core if key is None else s.parts[key]))
            yield fam


def _load_generator_families(snap: Snapshot, ctx: ExportContext, classes: dict[str, None]) -> Iterator[Metric]:
    flying = GaugeMetricFamily(
        "llmload_in_flight_requests", "Requests sent and not yet finished", labels=_REQUEST_LABELS
    )
    by_class = snap.in_flight_by_class()
    for name in dict.fromkeys((*classes, *sorted(by_class))):
        flying.add_metric((name, ctx.api, ctx.model), by_class.get(name, 0))
    yield flying

    live = snap.live_workers
    yield GaugeMetricFamily("llmload_users", "Running users (all workers)", value=snap.users)
    yield GaugeMetricFamily("llmload_workers", "Load-generating processes reporting (standalone: 1)", value=len(live))
    yield GaugeMetricFamily(
        "llmload_workers_lost",
        "Workers that stopped reporting (what they sent stays counted)",
        value=len(snap.workers) - len(live),
    )
    cpu = GaugeMetricFamily(
        "llmload_worker_cpu_ratio", "CPU time / wall time of a worker (1 = one core)", labels=("worker",)
    )
    lag = GaugeMetricFamily(
        "llmload_worker_loop_lag_seconds",
        "Worst gevent loop wake-up delay of a worker over its last interval",
        labels=("worker",),
    )
    for w in live:
        cpu.add_metric((w.worker_id,), w.gauges.cpu_ratio)
        lag.add_metric((w.worker_id,), w.gauges.loop_lag_s)
    yield cpu
    yield lag
    yield GaugeMetricFamily(
        "llmload_client_saturated",
        "1 when a worker is short of CPU or its event loop lags: latencies then measure the client",
        value=int(snap.client_saturated),
    )
    if ctx.offered_rate is not None:
        yield GaugeMetricFamily(
            "llmload_offered_rate_per_second",
            "Open loop: requests per second the arrival schedule offers now (all workers; --rate or the rate step)",
            value=ctx.offered_rate,
        )
    yield GaugeMetricFamily(
        "llmload_achieved_rate_per_second",
        "Requests started per second (every outcome) over the last 30 s of reports",
        value=snap.window_requests / snap.window_s if snap.window_s > 0 else 0.0,
    )
    if ctx.step is not None:
        index, users, steady = ctx.step
        yield GaugeMetricFamily("llmload_ladder_step", "Running ladder step (-1 = single-request baseline)", value=index)
        yield GaugeMetricFamily("llmload_ladder_step_users", "User count of the running ladder step", value=users)
        yield GaugeMetricFamily(
            "llmload_ladder_step_steady", "1 while the step's steady (measured) window runs", value=int(steady)
        )
    if ctx.baseline:
        for metric in ("ttft", "tpot"):
            g = GaugeMetricFamily(
                f"llmload_baseline_{metric}_seconds",
                f"Single-request baseline {metric.upper()} (the ladder's baseline step), for alert thresholds",
                labels=("quantile",),
            )
            for q, suffix in (("0.5", "p50"), ("0.99", "p99")):
                value = ctx.baseline.get(f"{metric}_{suffix}")
                if value is not None:
                    g.add_metric((q,), value)
            yield g
    info = InfoMetricFamily("llmload", "llmload version and what it is loading")
    info.add_metric((), {"version": VERSION, "api": ctx.api, "model": ctx.model, "profile": ctx.profile})
    yield info


def new_registry(collector: LlmloadCollector) -> CollectorRegistry:
    """A fresh registry holding only ``collector`` (never the process-global REGISTRY)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry
