"""The collection flags, validated once into a frozen :class:`CollectConfig` (polled by :mod:`llmload.collect`).

``--engine-metrics URL`` and ``--gpu-metrics URL`` may be given several times, or as a
comma-separated list (``LLMLOAD_ENGINE_METRICS=http://a:8000/metrics,http://b:8000/metrics``);
a URL without a path gets ``/metrics``. ``--prometheus-url`` reads the same signals from
a Prometheus server instead (optionally narrowed by ``--prometheus-selector`` for the
engine series and ``--prometheus-gpu-selector`` for the GPU series, PromQL label matchers
such as ``namespace="llm",job="vllm"``). The series are written to ``--timeseries-json``,
by default beside ``--summary-json`` as ``<stem>.timeseries.json``; the summary records
that path relative to its own directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.config.flags import flag
from llmload.config.values import parse_duration, parse_selector, parse_urls, public_url
from llmload.errors import ConfigError
from llmload.jsonvalue import Json

__all__ = ["DEFAULT_INTERVAL_S", "MIN_INTERVAL_S", "CollectConfig"]

DEFAULT_INTERVAL_S: float = parse_duration(flag("collect_interval").default, "--collect-interval") or 2.0
MIN_INTERVAL_S = 0.1


def _series_path(explicit: str, summary_json: str) -> tuple[str, str]:
    """(path to write, path the summary records)."""
    path = explicit or ""
    if not path and summary_json:
        stem = summary_json[:-5] if summary_json.endswith(".json") else summary_json
        path = stem + ".timeseries.json"
    if not path:
        return "", ""
    if summary_json:
        try:
            return path, os.path.relpath(path, os.path.dirname(os.path.abspath(summary_json)))
        except ValueError:  # another drive (Windows)
            return path, os.path.abspath(path)
    return path, path


@dataclass(frozen=True, slots=True)
class CollectConfig:
    """What to poll during a run, how often, and where the series go."""

    engine_urls: tuple[str, ...] = ()
    gpu_urls: tuple[str, ...] = ()
    interval_s: float = DEFAULT_INTERVAL_S
    prometheus_url: str = ""
    prometheus_selector: str = ""
    prometheus_gpu_selector: str = ""
    timeseries_json: str = ""
    timeseries_ref: str = ""

    @property
    def enabled(self) -> bool:
        return bool(self.engine_urls or self.gpu_urls or self.prometheus_url)

    @property
    def timeout_s(self) -> float:
        """Per request: the interval, within 0.5..5 s (a slow endpoint must not hold up a poll)."""
        return min(5.0, max(0.5, self.interval_s))

    def public_dict(self) -> dict[str, Json]:
        return {
            "engine_metrics": [public_url(u) for u in self.engine_urls],
            "gpu_metrics": [public_url(u) for u in self.gpu_urls],
            "prometheus_url": public_url(self.prometheus_url) or None,
            "interval_s": self.interval_s,
        }

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> CollectConfig:
        interval = parse_duration(values["collect_interval"], "--collect-interval") or DEFAULT_INTERVAL_S
        if interval < MIN_INTERVAL_S:
            raise ConfigError(f"--collect-interval {interval:g}s: must be at least {MIN_INTERVAL_S:g}s (default 2s)")
        prometheus = parse_urls(values["prometheus_url"], "--prometheus-url", metrics_path=False)
        if len(prometheus) > 1:
            raise ConfigError("--prometheus-url: give one Prometheus server")
        series, ref = _series_path(values["timeseries_json"] or "", values["summary_json"] or "")
        return cls(
            engine_urls=parse_urls(values["engine_metrics"], "--engine-metrics", metrics_path=True),
            gpu_urls=parse_urls(values["gpu_metrics"], "--gpu-metrics", metrics_path=True),
            interval_s=interval,
            prometheus_url=prometheus[0].rstrip("/") if prometheus else "",
            prometheus_selector=parse_selector(values["prometheus_selector"], "--prometheus-selector"),
            prometheus_gpu_selector=parse_selector(values["prometheus_gpu_selector"], "--prometheus-gpu-selector"),
            timeseries_json=series,
            timeseries_ref=ref,
        )
