"""The collection flags, validated once into a frozen :class:`CollectConfig`.

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
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from llmload.errors import ConfigError

__all__ = ["DEFAULT_INTERVAL_S", "CollectConfig", "public_url"]

DEFAULT_INTERVAL_S = 2.0
MIN_INTERVAL_S = 0.1
_SELECTOR = re.compile(r'^\s*[A-Za-z_][A-Za-z0-9_]*\s*(=|!=|=~|!~)\s*"')


def public_url(url: str) -> str:
    """``url`` without user:password (safe to log and to write to a summary)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def _urls(values: Any, flag: str, metrics_path: bool) -> tuple[str, ...]:
    if not values:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    out: list[str] = []
    for item in items:
        for url in str(item).split(","):
            url = url.strip()
            if not url:
                continue
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ConfigError(f"{flag} {url!r}: must be an http(s) URL such as http://vllm:8000/metrics")
            if metrics_path and parts.path in ("", "/"):
                url = urlunsplit(parts._replace(path="/metrics"))
            if url not in out:
                out.append(url)
    return tuple(out)


def _selector(value: Any, flag: str) -> str:
    text = str(value or "").strip().strip("{}").strip()
    if text and not _SELECTOR.match(text):
        raise ConfigError(f'{flag} {value!r}: must be PromQL label matchers such as job="vllm",namespace="llm"')
    return text


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

    def public_dict(self) -> dict[str, Any]:
        return {
            "engine_metrics": [public_url(u) for u in self.engine_urls],
            "gpu_metrics": [public_url(u) for u in self.gpu_urls],
            "prometheus_url": public_url(self.prometheus_url) or None,
            "interval_s": self.interval_s,
        }

    @classmethod
    def from_options(cls, opts: Any, summary_json: str = "") -> CollectConfig:
        from llmload.config import parse_duration  # llmload.config imports this module

        get = lambda name, default=None: getattr(opts, name, default) if opts is not None else default  # noqa: E731
        interval = parse_duration(get("collect_interval", "2s"), "--collect-interval") or DEFAULT_INTERVAL_S
        if interval < MIN_INTERVAL_S:
            raise ConfigError(f"--collect-interval {interval:g}s: must be at least {MIN_INTERVAL_S:g}s (default 2s)")
        prometheus = _urls(get("prometheus_url"), "--prometheus-url", metrics_path=False)
        if len(prometheus) > 1:
            raise ConfigError("--prometheus-url: give one Prometheus server")
        series, ref = _series_path(get("timeseries_json", "") or "", summary_json)
        return cls(
            engine_urls=_urls(get("engine_metrics"), "--engine-metrics", metrics_path=True),
            gpu_urls=_urls(get("gpu_metrics"), "--gpu-metrics", metrics_path=True),
            interval_s=interval,
            prometheus_url=prometheus[0].rstrip("/") if prometheus else "",
            prometheus_selector=_selector(get("prometheus_selector"), "--prometheus-selector"),
            prometheus_gpu_selector=_selector(get("prometheus_gpu_selector"), "--prometheus-gpu-selector"),
            timeseries_json=series,
            timeseries_ref=ref,
        )
