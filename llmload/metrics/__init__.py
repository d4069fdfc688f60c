"""What llmload measures: raw records on the hot path, mergeable statistics, one definition per metric.

* :mod:`~llmload.metrics.record` — :class:`~llmload.metrics.record.RequestRecord`: a request's raw stamps, nothing derived;
* :mod:`~llmload.metrics.definitions` — every metric defined once (TTFT, ITL, TPOT, E2E, phases, goodput),
  with its formula and its vLLM / AIPerf names;
* :mod:`~llmload.metrics.histogram` — :class:`~llmload.metrics.histogram.Histogram`, mergeable
  log-bucketed (the one distribution type workers ship);
* :mod:`~llmload.metrics.latency` — :class:`~llmload.metrics.latency.Latency`: one distribution in ms, as results carry it;
* :mod:`~llmload.metrics.confidence` — 95 % intervals of percentiles, read from a histogram;
* :mod:`~llmload.metrics.recorder` — :class:`~llmload.metrics.recorder.Recorder`: finished requests into per-class
  statistics (a core and its parts, :mod:`llmload.metrics.parts`), per step and overall;
* :mod:`~llmload.metrics.aggregation` — merging what workers report, on the master (:class:`~llmload.metrics.aggregation.Aggregator`);
* :mod:`~llmload.metrics.slo` — per-class SLOs: what a *good* request must meet;
* :mod:`~llmload.metrics.thresholds` — ``--threshold`` limits (k6 style), parsed and judged;
* :mod:`~llmload.metrics.steady` — did the measured window settle (TTFT, TPOT, in-flight still moving?);
* :mod:`~llmload.metrics.warmup_window` — ``--warmup``: which requests are not measured, and what they saw;
* :mod:`~llmload.metrics.coldstart` — a cold start in the measured run: its first requests' TTFT against the rest's;
* :mod:`~llmload.metrics.arrival_stats` — what an open-loop dispatcher did (lag, waits), mergeable;
* :mod:`~llmload.metrics.selfcheck` — the load generator watching itself: CPU and event-loop lag;
* :mod:`~llmload.metrics.dump` — raw records to JSON Lines (``--records-jsonl``).

Below everything but ``errors``/``redact``: no Locust, no I/O beyond the records dump.
"""
