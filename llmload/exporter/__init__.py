"""The Prometheus exporter: llmload's merged statistics as ``/metrics`` on the master.

* :mod:`llmload.exporter.buckets` — classic ``le`` bounds, exact sums of the fine histograms;
* :mod:`llmload.exporter.collector` — the pull collector over one snapshot per scrape,
  in its own registry (the series, their labels and units are listed there);
* :mod:`llmload.exporter.server` — the dedicated listener, the web UI route, and
  :func:`start_exporter`, which the coordinator (:mod:`llmload.runtime.coordinator`) calls.
"""

from __future__ import annotations

from llmload.exporter.buckets import BUCKETS, ClassicBuckets
from llmload.exporter.collector import ExportContext, LlmloadCollector, new_registry
from llmload.exporter.server import Exporter, MetricsServer, start_exporter

__all__ = [
    "BUCKETS",
    "ClassicBuckets",
    "ExportContext",
    "Exporter",
    "LlmloadCollector",
    "MetricsServer",
    "new_registry",
    "start_exporter",
]
