"""The simulator's engine metrics in vLLM's names, and their Prometheus text exposition.

Names, types and histogram buckets are vLLM V1's (``vllm/v1/metrics/loggers.py``);
every series carries ``model_name`` and ``engine="0"``. Counters are exposed as
``<name>_total`` (as prometheus_client writes them)::

    vllm:num_requests_running, vllm:num_requests_waiting       gauge   requests in the batch / in the queue
    vllm:kv_cache_usage_perc                                    gauge   used KV blocks / all, a fraction 0..1
    vllm:num_preemptions_total                                  counter preemptions
    vllm:prompt_tokens_total, vllm:generation_tokens_total      counter prompt tokens (counted at the first
                                                                        token), output tokens
    vllm:prefix_cache_queries_total                             counter prompt tokens looked up in the prefix
                                                                        cache (at a request's first admission)
    vllm:prefix_cache_hits_total                                counter of which found cached
    vllm:request_success_total{finished_reason="length"}        counter finished requests
    vllm:time_to_first_token_seconds                            hist    arrival -> first token
    vllm:inter_token_latency_seconds                            hist    gap between output tokens
    vllm:request_queue_time_seconds                             hist    arrival -> first scheduled
    vllm:request_prefill_time_seconds                           hist    first scheduled -> first token
    vllm:request_decode_time_seconds                            hist    first token -> last token
    vllm:request_inference_time_seconds                         hist    first scheduled -> last token
    vllm:e2e_request_latency_seconds                            hist    arrival -> last token
    vllm:iteration_tokens_total                                 hist    tokens per engine step
    vllm:cache_config_info                                      gauge=1 block_size, num_gpu_blocks, ...

Plus the simulator's own ``llmload_sim_kv_allocation_failures_total`` (requests failed
because the fragmented KV cache had no contiguous run). Times are seconds on the
event loop's clock; the per-request histograms are observed when a request finishes,
TTFT and ITL as tokens are sent (as vLLM does).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

__all__ = [
    "ITL_BUCKETS",
    "ITERATION_TOKEN_BUCKETS",
    "REQUEST_LATENCY_BUCKETS",
    "TTFT_BUCKETS",
    "EngineStats",
    "Histogram",
    "label_text",
    "render_engine_metrics",
]

TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)  # fmt: skip
REQUEST_LATENCY_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
ITERATION_TOKEN_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


class Histogram:
    """A Prometheus histogram: fixed upper bounds (``le``), per-bucket counts, sum, count."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: Iterable[float]) -> None:
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float, n: int = 1) -> None:
        """Record ``value`` ``n`` times."""
        self.counts[bisect_left(self.bounds, value)] += n
        self.sum += value * n
        self.count += n

    def lines(self, name: str, labels: str) -> list[str]:
        out, cum = [], 0
        sep = "," if labels else ""
        for bound, c in zip(self.bounds, self.counts, strict=False):
            cum += c
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound!r}"}} {cum}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        out.append(f"{name}_sum{{{labels}}} {self.sum!r}")
        out.append(f"{name}_count{{{labels}}} {self.count}")
        return out


class EngineStats:
    """Counters and histograms one engine records (gauges are read from the engine at scrape time)."""

    def __init__(self) -> None:
        self.ttft = Histogram(TTFT_BUCKETS)
        self.itl = Histogram(ITL_BUCKETS)
        self.queue = Histogram(REQUEST_LATENCY_BUCKETS)
        self.prefill = Histogram(REQUEST_LATENCY_BUCKETS)
        self.decode = Histogram(REQUEST_LATENCY_BUCKETS)
        self.inference = Histogram(REQUEST_LATENCY_BUCKETS)
        self.e2e = Histogram(REQUEST_LATENCY_BUCKETS)
        self.iteration_tokens = Histogram(ITERATION_TOKEN_BUCKETS)
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.finished = 0
        self.preemptions = 0
        self.allocation_failures = 0
        self.prefix_cache_queries = 0
        self.prefix_cache_hits = 0

    def request_done(self, arrival: float, scheduled: float, first: float, last: float) -> None:
        """Per-request phase times of a finished request (vLLM's definitions)."""
        self.finished += 1
        self.queue.observe(scheduled - arrival)
        self.prefill.observe(first - scheduled)
        self.decode.observe(last - first)
        self.inference.observe(last - scheduled)
        self.e2e.observe(last - arrival)


_HISTOGRAMS = (
    ("vllm:time_to_first_token_seconds", "ttft", "Histogram of time to first token in seconds."),
    ("vllm:inter_token_latency_seconds", "itl", "Histogram of inter-token latency in seconds."),
    ("vllm:request_queue_time_seconds", "queue", "Histogram of time spent in WAITING phase for request."),
    ("vllm:request_prefill_time_seconds", "prefill", "Histogram of time spent in PREFILL phase for request."),
    ("vllm:request_decode_time_seconds", "decode", "Histogram of time spent in DECODE phase for request."),
    ("vllm:request_inference_time_seconds", "inference", "Histogram of time spent in RUNNING phase for request."),
    ("vllm:e2e_request_latency_seconds", "e2e", "Histogram of e2e request latency in seconds."),
    ("vllm:iteration_tokens_total", "iteration_tokens", "Histogram of number of tokens per engine_step."),
)


def label_text(labels: dict[str, str]) -> str:
    """``k="v",...`` with Prometheus escaping of backslash, quote and newline."""
    esc = lambda v: v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")  # noqa: E731
    return ",".join(f'{k}="{esc(str(v))}"' for k, v in labels.items())


def render_engine_metrics(
    stats: EngineStats,
    gauges: tuple[int, int, float],
    model_name: str,
    cache_info: dict[str, str] | None = None,
) -> list[str]:
    """Exposition lines for ``stats`` and ``gauges`` = (running, waiting, kv usage 0..1)."""
    labels = label_text({"model_name": model_name, "engine": "0"})
    out: list[str] = []

    def metric(name: str, kind: str, help_: str, value: float | int, extra: str = "") -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.append(f"{name}{{{labels}{extra}}} {value!r}")

    running, waiting, kv = gauges
    metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", running)
    metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting)
    metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", float(kv))
    metric(
        "vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", stats.preemptions
    )
    metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", stats.prompt_tokens)
    metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", stats.generation_tokens)
    metric(
        "vllm:prefix_cache_queries_total",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
        stats.prefix_cache_queries,
    )
    metric(
        "vllm:prefix_cache_hits_total",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
        stats.prefix_cache_hits,
    )
    metric(
        "vllm:request_success_total",
        "counter",
        "Count of successfully processed requests.",
        stats.finished,
        ',finished_reason="length"',
    )
    for name, attr, help_ in _HISTOGRAMS:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} histogram")
        out.extend(getattr(stats, attr).lines(name, labels))
    if cache_info is not None:
        info = label_text({**cache_info, "engine": "0"})
        out.append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig")
        out.append("# TYPE vllm:cache_config_info gauge")
        out.append(f"vllm:cache_config_info{{{info}}} 1.0")
        out.append("# HELP llmload_sim_kv_allocation_failures_total Requests failed: no contiguous KV-cache run.")
        out.append("# TYPE llmload_sim_kv_allocation_failures_total counter")
        out.append(f"llmload_sim_kv_allocation_failures_total{{{labels}}} {stats.allocation_failures}")
    return out
