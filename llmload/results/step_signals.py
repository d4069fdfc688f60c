"""Server and GPU signals averaged over each step's steady window.

The results read signals as plain series, one list of ``(t_wall_s, value)`` points per
signal (wall-clock seconds since the epoch, the clock of the step windows)::

    Series = {"waiting": [(1764497040.0, 0.0), (1764497042.0, 3.0), ...], "running": [...], ...}

For a window ``[t_from, t_to]`` each signal gets the statistics of the points inside it::

    {"mean": Σv/n, "min", "max", "last": the value at the latest point, "samples": n}

A counter is read through its rate column (``preemptions_rate_per_s``: the increase
between a poll and the one before, per second), so its window mean is the counter's rate
over the window (exact with evenly spaced polls); engine histograms through their
per-interval means (``ttft_mean_ms``), so the window figure is the mean of those means.
A window with no point of a signal leaves the signal out, never 0.

:func:`series_from_timeseries` is the adapter from the collector's stored series
(``llmload.timeseries/1``, columnar; see docs/server-metrics.md): it drops ``null``
cells and the cumulative ``*_increase`` columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Series", "series_from_timeseries", "window_stats"]

Series = dict[str, list[tuple[float, float]]]


def window_stats(
    series: Mapping[str, Sequence[tuple[float, float]]], t_from: float, t_to: float
) -> dict[str, dict[str, float]]:
    """Mean, min, max, last and sample count of every signal over ``t_from <= t <= t_to``."""
    out: dict[str, dict[str, float]] = {}
    for name, points in series.items():
        inside = [(t, v) for t, v in points if t_from <= t <= t_to and v is not None]
        if not inside:
            continue
        values = [v for _, v in inside]
        out[name] = {
            "mean": round(sum(values) / len(values), 4),
            "min": round(min(values), 4),
            "max": round(max(values), 4),
            "last": round(max(inside)[1], 4),
            "samples": len(values),
        }
    return out


def series_from_timeseries(ts: Mapping[str, Any] | None) -> tuple[Series, Series]:
    """``(server, gpu)`` plain series from the collector's columnar ``llmload.timeseries/1`` dict."""
    if not ts:
        return {}, {}
    t = [float(x) for x in ts.get("t") or []]

    def part(name: str) -> Series:
        columns = (ts.get(name) or {}).get("signals") or {}
        out: Series = {}
        for signal, column in columns.items():
            if signal.endswith("_increase"):  # cumulative since the start; the rate column says it per interval
                continue
            points = [(ti, float(v)) for ti, v in zip(t, column, strict=False) if v is not None]
            if points:
                out[signal] = points
        return out

    return part("server"), part("gpu")
