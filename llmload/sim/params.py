"""Parameters of the engine model: scheduler, step cost, KV cache, model and GPU.

One frozen :class:`EngineParams` holds them all; the defaults are the ``healthy``
preset (see :mod:`llmload.sim.presets` and ``docs/simulator.md``): a 7B model with
grouped-query attention (Qwen2.5-7B-like: 7.6 B parameters in BF16 = 14.2 GiB of
weights; 28 layers x 4 KV heads x 128 dims x 2 (K, V) x 2 bytes = 56 KiB of KV cache
per token) on one 24 GB data-centre GPU with 600 GB/s of memory bandwidth and 125
dense FP16 TFLOPS (A10-class), calibrated to the seed figures: TTFT ~180 ms for a
500-token prompt and TPOT ~35 ms at concurrency 1.

Step cost (seconds of simulated time, multiplied by ``time_scale`` in real time)::

    step   = host_overhead + gpu
    gpu    = step_base + per_seq * decoding_seqs + per_kv_token * context_tokens_read
             + prefill_tokens / prefill_tps

``step_base`` is the weight read of one forward pass (15.2 GB / 600 GB/s at 79 %
efficiency ~ 32 ms); ``per_kv_token`` the KV read of one context token (56 KiB at the
same efficiency ~ 0.12 us); ``prefill_tps`` 3,500 tokens/s is 43 % of the GPU's 125
dense FP16 TFLOPS at 2 x 7.6 GFLOP per token; ``host_overhead`` is the CPU time per
step (scheduling, sampling, detokenizing) during which the GPU idles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields

from llmload.errors import ConfigError

__all__ = ["FIELD_NAMES", "GIB", "EngineParams"]

GIB = 1024**3
_KIB = 1024


@dataclass(frozen=True, slots=True)
class EngineParams:
    """Every knob of the engine model (see the module docstring for the step cost).

    Scheduler: ``max_num_seqs`` sequences at most in the running batch;
    ``max_batched_tokens`` tokens at most per step (with chunked prefill the prefill
    chunk; without it a prefill-only step takes whole prompts up to this sum, a longer
    prompt alone); ``batching`` ``"continuous"`` or ``"static"`` (a batch is formed
    only when the previous one has fully finished); ``max_waiting`` bounds the
    admission queue (0 = unbounded; a request beyond it is answered 429);
    ``max_model_len`` bounds prompt + max_tokens (beyond it: 400).

    KV cache: ``kv_blocks`` blocks of ``block_size`` tokens (0 = derived from the GPU
    memory left at ``gpu_memory_utilization`` after weights and ``reserved_gib``);
    ``kv_fragmentation`` makes every sequence keep its blocks contiguous;
    ``prefix_caching`` keeps full prompt blocks for reuse by later requests with the same
    prefix (:mod:`llmload.sim.prefix`); ``None`` (the default) means on for a paged pool, as
    in vLLM V1, and off with ``kv_fragmentation`` (engines that allocated KV contiguously had
    no prefix cache; asking for both is refused).

    Model and GPU (for the KV pool size and the simulated GPU's gauges):
    ``weights_gib``, ``kv_kib_per_token``, ``gpu_name``, ``gpu_memory_gib``,
    ``gpu_bandwidth_gbs`` (peak, GB/s), ``gpu_power_idle_w``/``gpu_power_max_w``.
    """

    # scheduler
    max_num_seqs: int = 64
    max_batched_tokens: int = 512
    chunked_prefill: bool = True
    batching: str = "continuous"
    max_waiting: int = 0
    max_model_len: int = 32768
    # step cost
    prefill_tps: float = 3500.0
    step_base_ms: float = 32.0
    host_overhead_ms: float = 3.0
    per_seq_ms: float = 0.1
    per_kv_token_us: float = 0.12
    time_scale: float = 1.0
    # KV cache
    block_size: int = 16
    kv_blocks: int = 0
    gpu_memory_utilization: float = 0.9
    kv_fragmentation: bool = False
    prefix_caching: bool | None = None  # resolved to a bool by __post_init__
    # model and GPU
    weights_gib: float = 14.2
    kv_kib_per_token: float = 56.0
    reserved_gib: float = 1.5
    gpu_name: str = "NVIDIA A10"
    gpu_memory_gib: float = 22.49
    gpu_bandwidth_gbs: float = 600.0
    gpu_power_idle_w: float = 35.0
    gpu_power_max_w: float = 150.0

    def __post_init__(self) -> None:
        for names, out_of_range, must, shown in _RANGES:
            for name in names:
                value = getattr(self, name)
                if out_of_range(value):
                    raise ConfigError(f"sim: --{_flag(name)} must be {must}, got {value:{shown}}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ConfigError(f"sim: --gpu-memory-utilization must be in (0, 1], got {self.gpu_memory_utilization:g}")
        if self.batching not in ("continuous", "static"):
            raise ConfigError(f"sim: --batching must be continuous or static, got {self.batching!r}")
        if self.prefix_caching is None:
            object.__setattr__(self, "prefix_caching", not self.kv_fragmentation)
        elif self.prefix_caching and self.kv_fragmentation:
            raise ConfigError(
                "sim: --prefix-caching shares KV blocks between sequences, which needs the paged KV cache; "
                "add --no-prefix-caching to use --kv-fragmentation"
            )
        if not 0 <= self.gpu_power_idle_w <= self.gpu_power_max_w:
            raise ConfigError("sim: need 0 <= --gpu-power-idle-w <= --gpu-power-max-w")
        self._check_fits()

    def _check_fits(self) -> None:
        """The KV pool has at least one block, and weights + reserved + the pool fit in the GPU's memory."""
        if self.num_kv_blocks < 1:
            raise ConfigError(
                f"sim: no GPU memory left for the KV cache ({self.weights_gib:g} GiB of weights + "
                f"{self.reserved_gib:g} GiB reserved > {self.gpu_memory_utilization:g} x {self.gpu_memory_gib:g} GiB); "
                "lower --weights-gib or set --kv-blocks"
            )
        if self.memory_used_bytes > self.memory_total_bytes:
            raise ConfigError(
                f"sim: {self.num_kv_blocks} KV blocks of {self.block_bytes / 2**20:g} MiB plus weights do not fit "
                f"in {self.gpu_memory_gib:g} GiB; lower --kv-blocks"
            )

    @property
    def kv_bytes_per_token(self) -> int:
        return int(self.kv_kib_per_token * _KIB)

    @property
    def block_bytes(self) -> int:
        """Bytes of one KV block (``block_size`` tokens)."""
        return self.block_size * self.kv_bytes_per_token

    @property
    def weights_bytes(self) -> int:
        return int(self.weights_gib * GIB)

    @property
    def memory_total_bytes(self) -> int:
        return int(self.gpu_memory_gib * GIB)

    @property
    def num_kv_blocks(self) -> int:
        """``kv_blocks``, or when 0 what fits in ``gpu_memory_utilization`` of the GPU (vLLM's rule)."""
        if self.kv_blocks:
            return self.kv_blocks
        budget = self.gpu_memory_utilization * self.memory_total_bytes - self.weights_bytes - self.reserved_gib * GIB
        return max(0, int(budget // self.block_bytes))

    @property
    def kv_capacity_tokens(self) -> int:
        return self.num_kv_blocks * self.block_size

    @property
    def memory_used_bytes(self) -> int:
        """Weights + reserved (activations, CUDA context) + the whole KV pool, allocated up front like vLLM."""
        return self.weights_bytes + int(self.reserved_gib * GIB) + self.num_kv_blocks * self.block_bytes

    @property
    def peak_bandwidth_bytes_s(self) -> float:
        return self.gpu_bandwidth_gbs * 1e9

    def max_request_tokens(self) -> int:
        """Longest prompt + output a request may ask for: ``max_model_len`` and what the KV pool holds."""
        return min(self.max_model_len, self.kv_capacity_tokens)


def _flag(name: str) -> str:
    return name.replace("_", "-")


#: The range checks of :meth:`EngineParams.__post_init__`: (fields, out of range?, what the flag must be, how its
#: value is shown in the error).
_RANGES: tuple[tuple[tuple[str, ...], Callable[[float], bool], str, str], ...] = (
    (("max_num_seqs", "max_batched_tokens", "max_model_len", "block_size"), lambda v: v < 1, ">= 1", ""),
    (("max_waiting", "kv_blocks"), lambda v: v < 0, ">= 0", ""),
    (("prefill_tps", "time_scale", "kv_kib_per_token", "gpu_memory_gib", "gpu_bandwidth_gbs"),
     lambda v: not 0 < v < math.inf, "a number > 0", "g"),
    (("step_base_ms", "host_overhead_ms", "per_seq_ms", "per_kv_token_us", "weights_gib", "reserved_gib"),
     lambda v: not 0 <= v < math.inf, "a number >= 0", "g"),
)  # fmt: skip


#: Field names in declaration order (for the command line and docs).
FIELD_NAMES = tuple(f.name for f in fields(EngineParams))
