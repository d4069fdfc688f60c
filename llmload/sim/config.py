"""The simulator's configuration: one frozen object built once from the command line.

Two modes (``--mode``):

* ``fixed``: every request gets its first token ``--ttft-ms`` after it arrived, then
  one token every ``--itl-ms``, whatever the load (defaults 180 ms / 35 ms). For
  measuring a client's own timing error.
* ``engine``: a continuous-batching engine model (scheduler, step cost, KV cache,
  simulated GPU; :mod:`llmload.sim.params`, ``docs/simulator.md``), configured by
  ``--preset`` (default ``healthy``) and the engine flags.

Without ``--mode`` the mode follows the flags: ``engine`` when ``--preset`` or any
engine flag is given, else ``fixed`` (so ``llmload sim --ttft-ms 50 --itl-ms 5`` keeps
its exact timing). ``--ttft-ms``/``--itl-ms`` with the engine model, or engine flags
with ``--mode fixed``, are refused. In Python, ``SimConfig(preset="kv-pressure")`` or
``SimConfig(mode="engine", engine=EngineParams(...))`` select the engine model.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass, field, fields
from typing import Any

from llmload.errors import ConfigError
from llmload.sim.cold_server import add_cold_start_arguments, check_cold_start
from llmload.sim.embeddings import DEFAULT_DIM, DEFAULT_MAX_TOKENS, add_embedding_arguments, check_embedding_settings
from llmload.sim.params import FIELD_NAMES, EngineParams
from llmload.sim.presets import DEFAULT_PRESET, PRESETS, preset_params
from llmload.sim.timing import TIMING_FORMATS
from llmload.sim.tools import DEFAULT_TOOL_CALL_SHARE

__all__ = ["API_KEY_ENV", "SimConfig", "add_arguments", "config_from_args", "config_to_args"]

#: Environment variable holding ``--api-key``'s default (how a parent hands a child the key).
API_KEY_ENV = "LLMLOAD_SIM_API_KEY"

_FIXED_TTFT_MS, _FIXED_ITL_MS = 180.0, 35.0


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Settings of one simulator process.

    ``port`` 0 binds a free port (the bound URL is reported by ``serve``'s ``ready``
    callback). ``default_max_tokens`` is used when a request names no token limit.
    ``seed`` seeds the simulator's own RNG (which words a response starts with, the
    simulated GPU's UUID). ``stamp_chunks`` adds the server's send time to every
    streamed content chunk (see :mod:`llmload.sim.api`); off by default.
    ``mode`` ``"fixed"`` uses ``ttft_ms``/``itl_ms``; ``"engine"`` uses ``engine``
    (default: the parameters of ``preset``, itself defaulting to ``healthy``); ``""``
    picks ``engine`` when ``preset`` or ``engine`` is set, else ``fixed``.
    ``gpu_metrics_port``: also serve the simulated GPU's gauges on this port (0 = a free
    one) instead of on the main ``/metrics``; ``None`` = on the main ``/metrics``.
    ``reasoning_tokens``: the first this many tokens of every chat, Responses and Messages
    answer are reasoning, streamed in the API's own form (a request's
    ``llmload_reasoning_tokens`` wins; see :mod:`llmload.sim.api`). ``api_key``: when set,
    requests must carry it (``Authorization: Bearer``, ``x-api-key`` on ``/v1/messages``).
    ``per_request_timing``: the server-timing format the last chunk of a streamed chat or
    completions answer carries, with the simulator's true queue/prefill/decode times
    (``vllm``: ``metrics`` in the usage chunk; ``llamacpp``: ``timings``; ``off``: none;
    see :mod:`llmload.sim.timing`). ``tool_call_share``: the share of chat answers to requests
    with ``tools`` (``tool_choice`` auto) that are tool calls (:mod:`llmload.sim.tools`).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    ttft_ms: float = _FIXED_TTFT_MS
    itl_ms: float = _FIXED_ITL_MS
    model: str = "llmload-sim"
    seed: int = 0
    default_max_tokens: int = 256
    stamp_chunks: bool = False
    mode: str = ""
    preset: str = ""
    engine: EngineParams | None = None
    gpu_metrics_port: int | None = None
    reasoning_tokens: int = 0
    api_key: str = field(default="", repr=False)
    per_request_timing: str = "vllm"
    cold_start_s: float = 0.0  # fixed mode: requests within this of the first one get cold_start_ttft_ms more TTFT
    cold_start_ttft_ms: float = 0.0
    embedding_dim: int = DEFAULT_DIM  # /v1/embeddings (llmload.sim.embeddings)
    embedding_max_tokens: int = DEFAULT_MAX_TOKENS
    tool_call_share: float = DEFAULT_TOOL_CALL_SHARE

    def __post_init__(self) -> None:
        self._check_values()
        mode = self.mode or ("engine" if self.preset or self.engine is not None else "fixed")
        if mode not in ("fixed", "engine"):
            raise ConfigError(f"sim: --mode must be fixed or engine, got {self.mode!r}")
        object.__setattr__(self, "mode", mode)
        check_cold_start(self.cold_start_s, self.cold_start_ttft_ms, mode)  # llmload.sim.cold_server
        check_embedding_settings(self.embedding_dim, self.embedding_max_tokens)
        if mode == "fixed":
            if self.preset or self.engine is not None:
                raise ConfigError("sim: --preset and the engine flags need the engine model (--mode engine)")
            if self.gpu_metrics_port is not None:
                raise ConfigError("sim: --gpu-metrics-port needs the engine model (--mode engine or --preset)")
            return
        object.__setattr__(self, "preset", self.preset or DEFAULT_PRESET)
        if self.engine is None:
            object.__setattr__(self, "engine", preset_params(self.preset))

    def _check_values(self) -> None:
        """Each setting on its own: fixed latencies, ports, timing format, token counts, model name."""
        for flag, ms in (("--ttft-ms", self.ttft_ms), ("--itl-ms", self.itl_ms)):
            if not 0 <= ms < math.inf:
                raise ConfigError(f"sim: {flag} must be a number >= 0, got {ms:g}")
        for name, port in (("--port", self.port), ("--gpu-metrics-port", self.gpu_metrics_port)):
            if port is not None and not 0 <= port <= 65535:
                raise ConfigError(f"sim: {name} must be in 0..65535, got {port}")
        if self.per_request_timing not in TIMING_FORMATS:
            raise ConfigError(
                f"sim: --per-request-timing must be one of {', '.join(TIMING_FORMATS)}, got {self.per_request_timing!r}"
            )
        if self.reasoning_tokens < 0:
            raise ConfigError(f"sim: --reasoning-tokens must be >= 0, got {self.reasoning_tokens}")
        if not 0 <= self.tool_call_share <= 1:
            raise ConfigError(f"sim: --tool-call-share must be in 0..1, got {self.tool_call_share:g}")
        if self.default_max_tokens < 1:
            raise ConfigError(f"sim: --default-max-tokens must be >= 1, got {self.default_max_tokens}")
        if not self.model:
            raise ConfigError("sim: --model must not be empty")

    @property
    def ttft_s(self) -> float:
        return self.ttft_ms / 1000.0

    @property
    def itl_s(self) -> float:
        return self.itl_ms / 1000.0

    def describe(self) -> str:
        """One line saying what this simulator does."""
        extra = f", {self.reasoning_tokens} reasoning tokens first" if self.reasoning_tokens else ""
        extra += ", API key required" if self.api_key else ""
        if self.mode == "fixed":
            return f"fixed latency: ttft {self.ttft_ms:g} ms, itl {self.itl_ms:g} ms{extra}"
        e = self.engine
        assert e is not None
        return (
            f"engine model, preset {self.preset}: max-num-seqs {e.max_num_seqs}, {e.num_kv_blocks} KV blocks "
            f"x {e.block_size} tokens, chunked prefill {'on' if e.chunked_prefill else 'off'}, "
            f"{e.batching} batching, prefix caching {'on' if e.prefix_caching else 'off'}, "
            f"time scale {e.time_scale:g}{extra}"
        )


# Engine flags: field -> (metavar/type, help). Booleans get --x / --no-x.
_ENGINE_FLAGS: dict[str, tuple[Any, str]] = {
    "max_num_seqs": (int, "most sequences in the running batch"),
    "max_batched_tokens": (int, "most tokens per step (the prefill chunk when chunked prefill is on)"),
    "chunked_prefill": (bool, "split prefills into chunks that share steps with decodes"),
    "batching": (str, "continuous, or static (a batch is released only when all its requests finished)"),
    "max_waiting": (int, "bound of the admission queue, 0 = unbounded; beyond it: HTTP 429"),
    "max_model_len": (int, "longest prompt + max_tokens accepted (beyond it: HTTP 400)"),
    "prefill_tps": (float, "prefill throughput, prompt tokens per second"),
    "step_base_ms": (float, "GPU time of every step: one read of the weights"),
    "host_overhead_ms": (float, "CPU time of every step (GPU idle): scheduling, sampling, detokenizing"),
    "per_seq_ms": (float, "decode cost per sequence in the batch"),
    "per_kv_token_us": (float, "decode cost per KV-cache token read (context of every decoding sequence)"),
    "time_scale": (float, "multiply every step duration by this (e.g. 0.1 runs 10x faster)"),
    "block_size": (int, "tokens per KV-cache block"),
    "kv_blocks": (int, "KV-cache blocks, 0 = what fits in --gpu-memory-utilization of the GPU"),
    "gpu_memory_utilization": (float, "fraction of GPU memory for weights + KV cache (sizes the pool)"),
    "kv_fragmentation": (bool, "each sequence needs contiguous blocks (fails though free blocks exist)"),
    "prefix_caching": (
        bool,
        "reuse the KV blocks of prompt prefixes already computed (vLLM's automatic prefix caching; "
        "default off with --kv-fragmentation)",
    ),
    "weights_gib": (float, "model weights in GiB (memory, and bytes read per step)"),
    "kv_kib_per_token": (float, "KV-cache bytes per token in KiB"),
    "reserved_gib": (float, "GPU memory for activations and the CUDA context, GiB"),
    "gpu_name": (str, "simulated GPU's name (label modelName)"),
    "gpu_memory_gib": (float, "simulated GPU's memory in GiB"),
    "gpu_bandwidth_gbs": (float, "simulated GPU's peak memory bandwidth in GB/s"),
    "gpu_power_idle_w": (float, "simulated GPU's power when idle, W"),
    "gpu_power_max_w": (float, "simulated GPU's power when fully busy, W"),
}
_ALIASES = {"max_batched_tokens": ["--max-num-batched-tokens"], "prefix_caching": ["--enable-prefix-caching"]}
assert set(_ENGINE_FLAGS) == set(FIELD_NAMES)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the simulator's flags (``--port``, ``--ttft-ms``, ``--preset``, ...) to ``parser``."""
    d = SimConfig()
    g = parser.add_argument_group("simulator")
    g.add_argument("--host", default=d.host, help=f"address to bind (default {d.host})")
    g.add_argument("--port", type=int, default=d.port, help=f"port to bind, 0 = any free port (default {d.port})")
    g.add_argument(
        "--mode",
        choices=("fixed", "engine"),
        default=None,
        help="fixed latency, or the engine model (default: engine when --preset or an engine flag is given)",
    )
    g.add_argument(
        "--ttft-ms", type=float, default=None, help=f"fixed mode: time to first token in ms (default {d.ttft_ms:g})"
    )
    g.add_argument(
        "--itl-ms", type=float, default=None, help=f"fixed mode: time between tokens in ms (default {d.itl_ms:g})"
    )
    add_cold_start_arguments(g)
    add_embedding_arguments(g)
    g.add_argument("--model", default=d.model, help=f"model name served by /v1/models (default {d.model})")
    g.add_argument("--seed", type=int, default=d.seed, help=f"seed of the simulator's RNG (default {d.seed})")
    g.add_argument(
        "--default-max-tokens",
        type=int,
        default=d.default_max_tokens,
        help=f"tokens generated when a request sets no limit (default {d.default_max_tokens})",
    )
    g.add_argument(
        "--stamp-chunks",
        action="store_true",
        default=d.stamp_chunks,
        help='add "llmload_sent_ns" (time.perf_counter_ns() just before the write, CLOCK_MONOTONIC) '
        "to every streamed content chunk, to measure a client's timing error (default off)",
    )
    g.add_argument(
        "--reasoning-tokens",
        type=int,
        default=d.reasoning_tokens,
        help="the first N tokens of every chat, /v1/responses and /v1/messages answer are reasoning, streamed in "
        "the API's own form (reasoning_content, reasoning_text deltas, thinking_delta); they count in the token "
        'limit; a request\'s "llmload_reasoning_tokens" wins (default 0)',
    )
    g.add_argument(
        "--tool-call-share",
        type=float,
        default=d.tool_call_share,
        help="the share of chat answers to requests with tools (tool_choice auto) that are tool calls; "
        'tool_choice "required" always calls, "none" never (default %(default)s)',
    )
    g.add_argument(
        "--per-request-timing",
        choices=TIMING_FORMATS,
        default=d.per_request_timing,
        help="per-request server timing on the last chunk of streamed chat/completions answers, with the "
        "simulator's true queue/prefill/decode times: vllm (a metrics object in the usage chunk, as vLLM's "
        f"--enable-per-request-metrics), llamacpp (timings, as llama-server), off (default {d.per_request_timing})",
    )
    g.add_argument(
        "--api-key",
        default=os.environ.get(API_KEY_ENV, ""),
        help="require this key on generation requests and /v1/models (Authorization: Bearer, or x-api-key on "
        f"/v1/messages); 401 otherwise (default: ${API_KEY_ENV}, else none)",
    )
    e = parser.add_argument_group("engine model (docs/simulator.md)")
    e.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help=f"engine configuration to start from (default {DEFAULT_PRESET}): "
        + "; ".join(f"{p.name}: {p.summary}" for p in PRESETS.values()),
    )
    e.add_argument(
        "--engine-file",
        default=None,
        metavar="FILE",
        help="start from a fitted engine model (llmload fit's engine.toml, docs/capacity.md) instead of a preset",
    )
    e.add_argument(
        "--gpu-metrics-port",
        type=int,
        default=None,
        help="serve the simulated GPU's gauges on this port's /metrics (0 = a free port) instead of the main one",
    )
    base = EngineParams()
    for name, (kind, help_) in _ENGINE_FLAGS.items():
        default = getattr(base, name)
        text = f"{help_} (healthy: {default if not isinstance(default, bool) else ('on' if default else 'off')})"
        flags = [_flag(name), *_ALIASES.get(name, [])]
        if kind is bool:
            e.add_argument(*flags, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            e.add_argument(*flags, dest=name, type=kind, default=None, help=text)


def config_from_args(ns: argparse.Namespace) -> SimConfig:
    """Build a :class:`SimConfig` from flags added by :func:`add_arguments`.

    Raises :class:`~llmload.errors.ConfigError` (one-line message) for invalid values
    or flags that do not belong to the chosen mode.
    """
    overrides = {name: v for name in FIELD_NAMES if (v := getattr(ns, name, None)) is not None}
    engine_file = getattr(ns, "engine_file", None)
    mode = ns.mode or ("engine" if ns.preset or overrides or engine_file else "fixed")
    common: dict[str, Any] = {
        "host": ns.host,
        "port": ns.port,
        "model": ns.model,
        "seed": ns.seed,
        "default_max_tokens": ns.default_max_tokens,
        "stamp_chunks": ns.stamp_chunks,
        "reasoning_tokens": getattr(ns, "reasoning_tokens", 0),
        "api_key": getattr(ns, "api_key", ""),
        "per_request_timing": getattr(ns, "per_request_timing", "vllm"),
        "cold_start_s": getattr(ns, "cold_start_s", 0.0),
        "cold_start_ttft_ms": getattr(ns, "cold_start_ttft_ms", 0.0),
        "embedding_dim": getattr(ns, "embedding_dim", DEFAULT_DIM),
        "embedding_max_tokens": getattr(ns, "embedding_max_tokens", DEFAULT_MAX_TOKENS),
        "tool_call_share": getattr(ns, "tool_call_share", DEFAULT_TOOL_CALL_SHARE),
    }
    if mode == "fixed":
        if ns.preset or overrides or ns.gpu_metrics_port is not None or engine_file:
            given = ["--preset"] * bool(ns.preset) + ["--engine-file"] * bool(engine_file) + [_flag(n) for n in overrides]
            given += ["--gpu-metrics-port"] * (ns.gpu_metrics_port is not None)
            raise ConfigError(f"sim: {', '.join(given)} belong to the engine model, not to --mode fixed")
        return SimConfig(
            **common,
            ttft_ms=_FIXED_TTFT_MS if ns.ttft_ms is None else ns.ttft_ms,
            itl_ms=_FIXED_ITL_MS if ns.itl_ms is None else ns.itl_ms,
            mode="fixed",
        )
    if ns.ttft_ms is not None or ns.itl_ms is not None:
        raise ConfigError(
            "sim: --ttft-ms/--itl-ms set the fixed-latency mode; the engine model derives its timing from the "
            "step costs (drop them, or use --mode fixed)"
        )
    preset = ns.preset or DEFAULT_PRESET
    return SimConfig(
        **common,
        mode="engine",
        preset=preset,
        engine=_engine(preset, overrides, engine_file, bool(ns.preset)),
        gpu_metrics_port=ns.gpu_metrics_port,
    )


def _engine(preset: str, overrides: dict[str, Any], engine_file: str | None, preset_given: bool) -> EngineParams:
    """The preset's parameters, or an engine file's (``llmload fit``), with the engine flags on top."""
    if not engine_file:
        return preset_params(preset, **overrides)
    if preset_given:
        raise ConfigError("sim: --engine-file and --preset both set the engine model; give one")
    from dataclasses import replace

    from llmload.sim.engine_toml import read_engine_file

    return replace(read_engine_file(engine_file)[0], **overrides)


def config_to_args(config: SimConfig) -> list[str]:
    """The command-line flags that rebuild ``config`` (inverse of :func:`config_from_args`), but its API key."""
    args = [
        "--host", config.host,
        "--port", str(config.port),
        "--model", config.model,
        "--seed", str(config.seed),
        "--default-max-tokens", str(config.default_max_tokens),
    ]  # fmt: skip
    if config.stamp_chunks:
        args.append("--stamp-chunks")
    if config.reasoning_tokens:
        args += ["--reasoning-tokens", str(config.reasoning_tokens)]
    args += ["--per-request-timing", config.per_request_timing]
    args += ["--embedding-dim", str(config.embedding_dim), "--embedding-max-tokens", str(config.embedding_max_tokens)]
    if config.tool_call_share != DEFAULT_TOOL_CALL_SHARE:
        args += ["--tool-call-share", repr(config.tool_call_share)]
    # api_key is not a flag here (a command line is visible to every user of the host): a
    # parent passes it in API_KEY_ENV (see llmload.sim.child.start_sim_process).
    if config.mode == "fixed":
        return [*args, "--ttft-ms", repr(config.ttft_ms), "--itl-ms", repr(config.itl_ms)]
    assert config.engine is not None
    args += ["--mode", "engine", "--preset", config.preset]
    if config.gpu_metrics_port is not None:
        args += ["--gpu-metrics-port", str(config.gpu_metrics_port)]
    base = preset_params(config.preset)
    for f in fields(EngineParams):
        value = getattr(config.engine, f.name)
        if value == getattr(base, f.name):
            continue
        if isinstance(value, bool):
            args.append(_flag(f.name) if value else "--no-" + _flag(f.name)[2:])
        else:
            args += [_flag(f.name), value if isinstance(value, str) else repr(value)]
    return args
