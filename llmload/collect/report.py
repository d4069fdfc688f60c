"""From a :class:`~llmload.collect.timeline.Timeline` to the summary's ``server``/``gpu`` parts and the stored series.

Summary shape (``"server"`` when engine metrics were polled, ``"gpu"`` when GPU metrics were)::

    "server": {
      "source": "scrape" | "prometheus", "interval_s": 2.0, "polls": 7, "engines": ["vllm"],
      "endpoints": [ENDPOINT, ...],                      # llmload.collect.endpoint_health
      "signals": {
        "waiting" | "running" | "kv_cache_usage": GAUGE,  # all endpoints combined
        "preemptions" | "prompt_tokens" | ...: COUNTER,
        "prefix_cache_hit_rate": {"value", "from": "counters" | "gauge", ...},
        "ttft_ms" | "itl_ms" | "queue_time_ms" | "e2e_ms" | ...: HISTOGRAM,
      },
      "unavailable": [signals the engine does not publish]
    }
    "gpu": {"endpoints": [...], "polls": 7, "signals": {name: GAUGE (all GPUs)},
            "devices": [{"key", "gpu", "uuid", "model", "hostname", "exporter", "coarse": [...],
                         "lost_at_s", "signals": {name: GAUGE}}]}

    GAUGE     = {"unit", "samples", "mean", "min", "max", "p50", "p95", "first", "last"}
    COUNTER   = {"unit", "increase", "rate_per_s", "rate_max_per_s"}
    HISTOGRAM = {"count", "mean", "p50", "p90", "p99"}  (ms; the engine's histogram, over the run)

Stored series (:func:`timeseries`, schema ``llmload.timeseries/1``), columns aligned with
``t`` (wall clock) and ``t_s`` (seconds into the test); ``null`` where nothing was read::

    {"schema", "started_at", "interval_s", "t", "t_s",
     "server": {"signals": {gauge: [...], counter + "_increase": [...], counter + "_rate_per_s": [...],
                            "prefix_cache_hit_rate": [...], histogram + "_mean_ms": [...]},
                "endpoints": {url: {"engine", "signals": {...}}}},     # only with several endpoints
     "gpu": {"signals": {name: [...]}, "devices": {key: {"info", "signals": {name: [...]}}}}}
"""

from __future__ import annotations

from llmload.collect.endpoint_health import EndpointStatus
from llmload.collect.signal_table import GPU_SIGNALS, SERVER_SIGNALS
from llmload.collect.stats import counter_stats, gauge_stats, histogram_stats_ms, rounded
from llmload.collect.timeline import Column, Timeline
from llmload.jsonvalue import Json

__all__ = ["TIMESERIES_SCHEMA", "gpu_summary", "server_summary", "timeseries"]

TIMESERIES_SCHEMA = "llmload.timeseries/1"


def _hit_rate(tl: Timeline, url: str | None = None) -> tuple[dict[str, Json] | None, Column]:
    """Prefix-cache hit rate over the run and per poll: from the token counters, else the gauge."""
    hits, _ = tl.counter("prefix_cache_hits", url)
    queries, _ = tl.counter("prefix_cache_queries", url)
    h = sum(x for x in hits if x is not None)
    q = sum(x for x in queries if x is not None)
    per_poll: Column = [a / b if a is not None and b else None for a, b in zip(hits, queries, strict=True)]
    if q > 0:
        return {
            "unit": "ratio",
            "value": rounded(h / q),
            "from": "counters",
            "hits": rounded(h),
            "queries": rounded(q),
        }, per_poll
    stats = gauge_stats(tl.gauge("prefix_cache_hit_rate", url))
    if stats is None:
        return None, per_poll
    return {"unit": "ratio", "value": stats["mean"], "from": "gauge", **stats}, tl.gauge("prefix_cache_hit_rate", url)


def _server_signals(tl: Timeline, url: str | None = None) -> dict[str, Json]:
    present = tl.signals(url)
    out: dict[str, Json] = {}
    for sig in SERVER_SIGNALS:
        if sig.name not in present or sig.name == "prefix_cache_hit_rate":
            continue
        if sig.kind == "gauge":
            stats = gauge_stats(tl.gauge(sig.name, url))
            if stats is not None:
                out[sig.name] = {"unit": sig.unit, **stats}
        elif sig.kind == "counter":
            stats = counter_stats(*tl.counter(sig.name, url), tl.span_s)
            if stats is not None:
                out[sig.name] = {"unit": sig.unit, **stats}
        else:
            stats = histogram_stats_ms(tl.histogram(sig.name, url))
            if stats is not None:
                out[f"{sig.name}_ms"] = stats
            elif not any(e.histograms for e in tl.endpoints.values()):  # a window: the exact mean only
                mean = _window_mean_ms(tl, sig.name, url)
                if mean is not None:
                    out[f"{sig.name}_ms"] = {"mean": mean}
    rate, _ = _hit_rate(tl, url)
    if rate is not None:
        out["prefix_cache_hit_rate"] = rate
    return out


def _window_mean_ms(tl: Timeline, name: str, url: str | None) -> float | None:
    total = count = 0.0
    for u, e in tl.endpoints.items():
        if url in (None, u) and name in e.step_counts:
            for s, c in zip(e.step_sums[name].column(), e.step_counts[name].column(), strict=True):
                if c is not None:
                    total, count = total + (s or 0.0), count + c
    return round(total / count * 1000.0, 3) if count else None


def server_summary(
    tl: Timeline, statuses: list[EndpointStatus], interval_s: float, source: str = "scrape"
) -> dict[str, Json]:
    """The summary's ``server`` part: endpoints, signals over the run, signals never seen."""
    engines = sorted({e.engine for e in tl.endpoints.values() if e.engine})
    signals = _server_signals(tl)
    present = tl.signals()
    unavailable = [s.name for s in SERVER_SIGNALS if s.name not in present and s.name != "prefix_cache_hit_rate"]
    if "prefix_cache_hit_rate" not in signals:
        unavailable.append("prefix_cache_hit_rate")
    return {
        "source": source,
        "interval_s": interval_s,
        "polls": len(tl),
        "engines": engines,
        "endpoints": [s.to_dict("engine", tl.t0) for s in statuses],
        "signals": signals,
        "unavailable": unavailable if engines else [],
    }


def gpu_summary(tl: Timeline, statuses: list[EndpointStatus], interval_s: float) -> dict[str, Json]:
    """The summary's ``gpu`` part: endpoints, all GPUs combined, and each GPU (or MIG instance)."""
    signals: dict[str, Json] = {}
    for sig in GPU_SIGNALS:
        stats = gauge_stats(tl.gpu(sig.name))
        if stats is not None:
            signals[sig.name] = {"unit": sig.unit, **stats}
    devices = []
    for key, d in sorted(tl.devices.items()):
        dev: dict[str, Json] = {"key": key, **d.info, "exporter": d.vocabulary}
        if d.coarse:
            dev["coarse"] = sorted(d.coarse)
        if d.lost_at is not None:
            dev["lost_at"] = round(d.lost_at, 3)
            dev["lost_at_s"] = round(d.lost_at - tl.t0, 3)
        dev_signals: dict[str, Json] = {}
        dev["signals"] = dev_signals
        for sig in GPU_SIGNALS:
            stats = gauge_stats(d.column(sig.name, len(tl)))
            if stats is not None:
                dev_signals[sig.name] = {"unit": sig.unit, **stats}
        devices.append(dev)
    return {
        "interval_s": interval_s,
        "polls": len(tl),
        "endpoints": [s.to_dict("gpu", tl.t0) for s in statuses],
        "signals": signals,
        "devices": devices,
    }


def _col(values: Column, scale: float = 1.0) -> list[float | None]:
    return [None if v is None else rounded(v * scale) for v in values]


def _server_series(tl: Timeline, url: str | None) -> dict[str, list[float | None]]:
    present = tl.signals(url)
    out: dict[str, list[float | None]] = {}
    for sig in SERVER_SIGNALS:
        if sig.name not in present:
            continue
        if sig.kind == "gauge":
            out[sig.name] = _col(tl.gauge(sig.name, url))
        elif sig.kind == "counter":
            incs, rates = tl.counter(sig.name, url)
            total, running = 0.0, []
            for x in incs:
                total += x or 0.0
                running.append(rounded(total))
            out[f"{sig.name}_increase"] = running
            out[f"{sig.name}_rate_per_s"] = _col(rates)
        else:
            out[f"{sig.name}_mean_ms"] = _col(tl.interval_mean(sig.name, url), 1000.0)
    rate, per_poll = _hit_rate(tl, url)
    if rate is not None:
        out["prefix_cache_hit_rate"] = _col(per_poll)
    return out


def timeseries(tl: Timeline, interval_s: float, server: bool, gpu: bool) -> dict[str, Json]:
    """The run's series, columnar (compact and directly plottable)."""
    out: dict[str, Json] = {
        "schema": TIMESERIES_SCHEMA,
        "started_at": round(tl.t0, 3),
        "interval_s": interval_s,
        "t": [round(t, 3) for t in tl.t],
        "t_s": [round(t - tl.t0, 3) for t in tl.t],
    }
    if server:
        part: dict[str, Json] = {"signals": _server_series(tl, None)}
        answered = [url for url, e in tl.endpoints.items() if e.engine]
        if len(answered) > 1:
            part["endpoints"] = {
                url: {"engine": tl.endpoints[url].engine, "signals": _server_series(tl, url)} for url in answered
            }
        out["server"] = part
    if gpu:
        n = len(tl)
        out["gpu"] = {
            "signals": {
                s.name: _col(tl.gpu(s.name))
                for s in GPU_SIGNALS
                if any(s.name in d.values for d in tl.devices.values())
            },
            "devices": {
                key: {
                    "info": {**d.info, "exporter": d.vocabulary},
                    "signals": {name: _col(d.column(name, n)) for name in d.values},
                }
                for key, d in sorted(tl.devices.items())
            },
        }
    return out
