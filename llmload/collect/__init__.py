"""Engine and GPU metrics collected during a run, aligned in time with the client's numbers.

The process that summarises (standalone or ``--master``; workers never poll) reads the
inference engine's own ``/metrics`` (``--engine-metrics``: vLLM, SGLang, TGI, llama.cpp,
auto-detected) and GPU exporters (``--gpu-metrics``: llmload's GPU sidecar, the
simulator, dcgm-exporter, nvidia_gpu_exporter), or a Prometheus server that scrapes them
(``--prometheus-url``), every ``--collect-interval``. The summary gets per-signal
statistics under ``"server"`` and ``"gpu"``; the series go to a file beside it. One
concept per module:

* :mod:`~llmload.collect.signal_table` — the common signals (names, units, how sources combine);
* :mod:`~llmload.collect.exposition` — samples from a ``/metrics`` text or a query answer;
* :mod:`~llmload.collect.prom_histogram` — engine histograms: increase over a run, quantiles;
* :mod:`~llmload.collect.engines` — engine names -> server signals, engine detection;
* :mod:`~llmload.collect.gpus` — GPU exporter names -> GPU signals in base units, per GPU;
* :mod:`~llmload.collect.stats` — gauge, counter and histogram summaries;
* :mod:`~llmload.collect.timeline` — the run's readings in time order;
* :mod:`~llmload.collect.endpoint_health` — each endpoint's health, as reported;
* :mod:`~llmload.collect.report` — the summary parts and the stored series;
* :mod:`~llmload.collect.sources` — HTTP: scrape or Prometheus query (the only I/O);
* :mod:`~llmload.collect.poller` — the polling greenlet of one run.

The flags are :class:`llmload.config.CollectConfig`. See docs/server-metrics.md.
"""

from __future__ import annotations

from llmload.collect.engines import ENGINES, EngineReading, detect_engine, read_engine
from llmload.collect.exposition import Samples, parse_exposition, samples_from_query
from llmload.collect.gpus import GpuReading, read_gpus
from llmload.collect.poller import Collection, start_collection
from llmload.collect.prom_histogram import BucketHistogram
from llmload.collect.report import TIMESERIES_SCHEMA, gpu_summary, server_summary, timeseries
from llmload.collect.signal_table import GPU_SIGNALS, SERVER_SIGNALS, Signal
from llmload.collect.timeline import Timeline

__all__ = [
    "ENGINES",
    "GPU_SIGNALS",
    "SERVER_SIGNALS",
    "TIMESERIES_SCHEMA",
    "BucketHistogram",
    "Collection",
    "EngineReading",
    "GpuReading",
    "Samples",
    "Signal",
    "Timeline",
    "detect_engine",
    "gpu_summary",
    "parse_exposition",
    "read_engine",
    "read_gpus",
    "samples_from_query",
    "server_summary",
    "start_collection",
    "timeseries",
]
