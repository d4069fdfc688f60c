"""The common signals a run collects from engines and GPUs: name, kind, unit, how sources combine.

Every engine (:mod:`~llmload.collect.engines`) and GPU exporter
(:mod:`~llmload.collect.gpus`) is mapped onto these names, in these units, so that a
summary reads the same whatever served the model. ``agg`` says how the values of several
sources at one instant combine: several engine endpoints (replicas, data-parallel ranks)
or several GPUs.

Server signals (``kind``: gauge = a level read at each poll; counter = cumulative, summarised
as its increase and rate over the run; histogram = the engine's own latency histogram,
summarised from its increase over the run)::

    waiting                 gauge      requests  sum   queued, not yet scheduled (W)
    running                 gauge      requests  sum   in the running batch (R)
    kv_cache_usage          gauge      ratio     mean  used KV-cache blocks / all, 0..1
    prefix_cache_hit_rate   gauge      ratio     mean  the engine's own hit-rate gauge (SGLang)
    preemptions             counter    requests  sum   preempted (vLLM) or retracted (SGLang) requests
    prompt_tokens           counter    tokens    sum   prompt tokens processed (prefill)
    generation_tokens       counter    tokens    sum   output tokens generated (decode)
    requests_finished       counter    requests  sum   requests the engine finished
    prefix_cache_queries    counter    tokens    sum   prompt tokens looked up in the prefix cache
    prefix_cache_hits       counter    tokens    sum   of those, tokens found cached
    ttft                    histogram  s               arrival -> first token, as the server sees it
    itl                     histogram  s               gap between output tokens
    queue_time              histogram  s               arrival -> first scheduled
    e2e                     histogram  s               arrival -> last token
    prefill_time            histogram  s               first scheduled -> first token
    decode_time             histogram  s               first token -> last token

GPU signals (gauges, per GPU or MIG instance)::

    utilization                   ratio  mean  time with a kernel running (NVML util.gpu, temporal)
    memory_bandwidth_utilization  ratio  mean  DRAM bandwidth used / peak (GPM, DCGM DRAM_ACTIVE);
                                               "coarse" when only NVML's memory-busy time exists
    sm_activity                   ratio  mean  fraction of SMs busy (spatial; GPM, DCGM SM_ACTIVE)
    memory_used_bytes             bytes  sum
    memory_total_bytes            bytes  sum
    power_watts                   W      sum
    temperature_celsius           °C     max
    sm_clock_hertz                Hz     mean  below the maximum under load: throttling
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GPU_SIGNALS",
    "HISTOGRAM_SIGNALS",
    "SERVER_SIGNALS",
    "Signal",
    "gpu_signal",
    "server_signal",
]


@dataclass(frozen=True, slots=True)
class Signal:
    """One common signal: ``kind`` gauge | counter | histogram; ``agg`` sum | mean | max."""

    name: str
    kind: str
    unit: str
    agg: str
    help: str


SERVER_SIGNALS: tuple[Signal, ...] = (
    Signal("waiting", "gauge", "requests", "sum", "requests queued, not yet scheduled"),
    Signal("running", "gauge", "requests", "sum", "requests in the running batch"),
    Signal("kv_cache_usage", "gauge", "ratio", "mean", "used KV-cache blocks / all blocks"),
    Signal("prefix_cache_hit_rate", "gauge", "ratio", "mean", "the engine's prefix-cache hit-rate gauge"),
    Signal("preemptions", "counter", "requests", "sum", "requests preempted (vLLM) or retracted (SGLang)"),
    Signal("prompt_tokens", "counter", "tokens", "sum", "prompt tokens processed"),
    Signal("generation_tokens", "counter", "tokens", "sum", "output tokens generated"),
    Signal("requests_finished", "counter", "requests", "sum", "requests finished by the engine"),
    Signal("prefix_cache_queries", "counter", "tokens", "sum", "prompt tokens looked up in the prefix cache"),
    Signal("prefix_cache_hits", "counter", "tokens", "sum", "prompt tokens found in the prefix cache"),
    Signal("ttft", "histogram", "s", "sum", "arrival to first token"),
    Signal("itl", "histogram", "s", "sum", "gap between output tokens"),
    Signal("queue_time", "histogram", "s", "sum", "arrival to first scheduled"),
    Signal("e2e", "histogram", "s", "sum", "arrival to last token"),
    Signal("prefill_time", "histogram", "s", "sum", "first scheduled to first token"),
    Signal("decode_time", "histogram", "s", "sum", "first token to last token"),
)

GPU_SIGNALS: tuple[Signal, ...] = (
    Signal("utilization", "gauge", "ratio", "mean", "time with at least one kernel running"),
    Signal("memory_bandwidth_utilization", "gauge", "ratio", "mean", "DRAM bandwidth used / peak"),
    Signal("sm_activity", "gauge", "ratio", "mean", "fraction of SMs busy"),
    Signal("memory_used_bytes", "gauge", "bytes", "sum", "device memory used"),
    Signal("memory_total_bytes", "gauge", "bytes", "sum", "device memory"),
    Signal("power_watts", "gauge", "W", "sum", "power draw"),
    Signal("temperature_celsius", "gauge", "celsius", "max", "GPU core temperature"),
    Signal("sm_clock_hertz", "gauge", "Hz", "mean", "SM clock"),
)

HISTOGRAM_SIGNALS: tuple[str, ...] = tuple(s.name for s in SERVER_SIGNALS if s.kind == "histogram")

_SERVER = {s.name: s for s in SERVER_SIGNALS}
_GPU = {s.name: s for s in GPU_SIGNALS}


def server_signal(name: str) -> Signal:
    return _SERVER[name]


def gpu_signal(name: str) -> Signal:
    return _GPU[name]
