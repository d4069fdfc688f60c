"""Inference engines' ``/metrics`` names, mapped onto the common server signals.

An engine is recognised by its prefix (``vllm:``, ``sglang:``, ``tgi_``, ``llamacpp:``):
:func:`detect_engine` picks the engine with the most series under its prefix, and
:func:`read_engine` reads every signal through that engine's alias list, preferred name
first (a renamed metric is found under either name, never counted twice). Names are the
normalised ones of :class:`~llmload.collect.exposition.Samples` (no ``_total``). Sources:
``shared/research/gpu_and_server_metrics.md`` §4 (vLLM ``vllm/v1/metrics/loggers.py``,
SGLang ``srt/metrics/collector.py``, TGI ``docs/source/reference/metrics.md``, llama.cpp
``tools/server``).

Label sets are combined per signal (:mod:`~llmload.collect.signal_table`): requests waiting
or running add up over data-parallel engines, ranks and models; KV-cache usage is their
mean; counters add up; histograms add up bucket by bucket.

A counter an engine only publishes in parts is their sum (:attr:`Engine.sums`): llama.cpp's
prompt tokens looked up in its cache = ``prompt_tokens_total`` (processed, cached ones
excluded) + ``prompt_tokens_cached_total``.

A signal the engine does not publish is simply absent from the reading (TGI has no KV
gauge and no TTFT histogram, llama.cpp no histogram at all): absent, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.collect.exposition import Samples
from llmload.collect.prom_histogram import BucketHistogram, read_histogram
from llmload.collect.signal_table import server_signal

__all__ = ["ENGINES", "ENGINE_NAMES", "ENGINE_PREFIXES", "Engine", "EngineReading", "detect_engine", "read_engine"]


@dataclass(frozen=True, slots=True)
class Engine:
    """One engine's names: signal -> aliases (normalised names, preferred first)."""

    name: str
    prefix: str
    gauges: dict[str, tuple[str, ...]]
    counters: dict[str, tuple[str, ...]]
    histograms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: counters the engine does not publish as such: signal -> the signals it is the sum of
    sums: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def metric_names(self) -> list[str]:
        """Every name as a Prometheus server stores it (counters with and without ``_total``)."""
        out = [n for names in self.gauges.values() for n in names]
        out += [n + sfx for names in self.counters.values() for n in names for sfx in ("", "_total")]
        out += [n + sfx for names in self.histograms.values() for n in names for sfx in ("_bucket", "_sum", "_count")]
        return list(dict.fromkeys(out))


VLLM = Engine(
    "vllm",
    "vllm:",
    gauges={
        "waiting": ("vllm:num_requests_waiting",),
        "running": ("vllm:num_requests_running",),
        "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),  # renamed in 0.9
        "prefix_cache_hit_rate": ("vllm:gpu_prefix_cache_hit_rate",),  # V0 only
    },
    counters={
        "preemptions": ("vllm:num_preemptions",),
        "prompt_tokens": ("vllm:prompt_tokens",),
        "generation_tokens": ("vllm:generation_tokens",),
        "requests_finished": ("vllm:request_success",),
        "prefix_cache_queries": ("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
        "prefix_cache_hits": ("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
    },
    histograms={
        "ttft": ("vllm:time_to_first_token_seconds",),
        "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),  # renamed in 0.11
        "queue_time": ("vllm:request_queue_time_seconds",),
        "e2e": ("vllm:e2e_request_latency_seconds",),
        "prefill_time": ("vllm:request_prefill_time_seconds",),
        "decode_time": ("vllm:request_decode_time_seconds",),
    },
)

SGLANG = Engine(
    "sglang",
    "sglang:",
    gauges={
        "waiting": ("sglang:num_queue_reqs",),
        "running": ("sglang:num_running_reqs",),
        "kv_cache_usage": ("sglang:token_usage",),
        "prefix_cache_hit_rate": ("sglang:cache_hit_rate",),
    },
    counters={
        "preemptions": ("sglang:num_retracted_requests",),  # newer; the older gauge is per step
        "prompt_tokens": ("sglang:prompt_tokens",),
        "generation_tokens": ("sglang:generation_tokens",),
        "requests_finished": ("sglang:num_requests",),
        "prefix_cache_queries": ("sglang:prompt_tokens",),
        "prefix_cache_hits": ("sglang:cached_tokens",),
    },
    histograms={
        "ttft": ("sglang:time_to_first_token_seconds",),
        "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        "queue_time": ("sglang:queue_time_seconds",),
        "e2e": ("sglang:e2e_request_latency_seconds",),
    },
)

TGI = Engine(
    "tgi",
    "tgi_",
    gauges={
        "waiting": ("tgi_queue_size",),
        "running": ("tgi_batch_current_size",),
    },
    counters={
        # per-request histograms' sums are the running token totals
        "prompt_tokens": ("tgi_request_input_length_sum",),
        "generation_tokens": ("tgi_request_generated_tokens_sum",),
        "requests_finished": ("tgi_request_success",),
    },
    histograms={
        "itl": ("tgi_request_mean_time_per_token_duration",),  # per-request mean, not per token
        "queue_time": ("tgi_request_queue_duration",),
        "e2e": ("tgi_request_duration",),
    },
)

LLAMACPP = Engine(
    "llamacpp",
    "llamacpp:",
    gauges={
        "waiting": ("llamacpp:requests_deferred",),
        "running": ("llamacpp:requests_processing",),
        "kv_cache_usage": ("llamacpp:kv_cache_usage_ratio",),  # older builds only
    },
    counters={
        "prompt_tokens": ("llamacpp:prompt_tokens",),  # processed prompt tokens, cached ones excluded
        "generation_tokens": ("llamacpp:tokens_predicted",),
        "prefix_cache_hits": ("llamacpp:prompt_tokens_cached",),  # reused from a slot's cache
    },
    # every prompt token is either processed or reused: looked up = processed + cached
    sums={"prefix_cache_queries": ("prompt_tokens", "prefix_cache_hits")},
)

ENGINES: tuple[Engine, ...] = (VLLM, SGLANG, TGI, LLAMACPP)
ENGINE_PREFIXES: tuple[str, ...] = tuple(e.prefix for e in ENGINES)
#: Every sample name read from an engine page, as written there.
ENGINE_NAMES: frozenset[str] = frozenset(n for e in ENGINES for n in e.metric_names())
_BY_NAME = {e.name: e for e in ENGINES}


@dataclass(frozen=True, slots=True)
class EngineReading:
    """The common signals read from one engine endpoint at one instant."""

    engine: str
    gauges: dict[str, float]
    counters: dict[str, float]
    histograms: dict[str, BucketHistogram]


def detect_engine(samples: Samples) -> Engine | None:
    """The engine with the most series under its prefix; None when no engine's series are there."""
    best, most = None, 0
    for engine in ENGINES:
        n = samples.count_prefix(engine.prefix)
        if n > most:
            best, most = engine, n
    return best


def read_engine(samples: Samples, engine: Engine | str | None = None) -> EngineReading | None:
    """The common signals of ``samples`` (engine auto-detected unless given); None if no engine."""
    if isinstance(engine, str):
        engine = _BY_NAME[engine]
    if engine is None:
        engine = detect_engine(samples)
        if engine is None:
            return None
    gauges, counters = _gauges(samples, engine), _counters(samples, engine)
    return EngineReading(engine.name, gauges, counters, _histograms(samples, engine))


def _gauges(samples: Samples, engine: Engine) -> dict[str, float]:
    """Each gauge by its first alias found, its label sets combined by the signal's ``agg`` (mean or sum)."""
    gauges: dict[str, float] = {}
    for signal, aliases in engine.gauges.items():
        found = samples.first(aliases)
        if found is not None:
            values = [v for _, v in found[1]]
            agg = server_signal(signal).agg
            gauges[signal] = sum(values) / len(values) if agg == "mean" else sum(values)
    return gauges


def _counters(samples: Samples, engine: Engine) -> dict[str, float]:
    """Each counter by its first alias found (label sets added up), then the ones published in parts."""
    counters: dict[str, float] = {}
    for signal, aliases in engine.counters.items():
        found = samples.first(aliases)
        if found is not None:
            counters[signal] = sum(v for _, v in found[1])
    for signal, parts in engine.sums.items():
        if all(p in counters for p in parts):
            counters[signal] = sum(counters[p] for p in parts)
    return counters


def _histograms(samples: Samples, engine: Engine) -> dict[str, BucketHistogram]:
    """Each histogram by its first alias found."""
    histograms: dict[str, BucketHistogram] = {}
    for signal, aliases in engine.histograms.items():
        for base in aliases:
            h = read_histogram(samples, base)
            if h is not None:
                histograms[signal] = h
                break
    return histograms
