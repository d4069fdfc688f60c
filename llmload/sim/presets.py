"""Named engine configurations (``--preset``), each producing one bottleneck of a real deployment.

Every preset starts from the :class:`~llmload.sim.params.EngineParams` defaults (a
7B model on one 24 GB data-centre GPU) and changes a few knobs; flags given beside
``--preset`` override it further. ``docs/simulator.md`` explains each one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from llmload.errors import ConfigError
from llmload.sim.params import EngineParams

__all__ = ["DEFAULT_PRESET", "PRESETS", "Preset", "preset_params"]

DEFAULT_PRESET = "healthy"


@dataclass(frozen=True)
class Preset:
    """A named set of :class:`EngineParams` overrides with the symptom it produces."""

    name: str
    summary: str
    symptom: str
    incident: str
    overrides: dict[str, Any] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "healthy",
            "continuous batching, chunked prefill, a KV cache with room to spare",
            "TTFT ~180 ms for a 500-token prompt and TPOT ~35 ms at concurrency 1, both rising gently with load; "
            "no queue, no preemptions, GPU busy ~90 %",
            "the baseline the seed figures describe (~180 ms TTFT, ~35 ms TPOT at concurrency 1)",
        ),
        Preset(
            "batch-starved",
            "max-num-seqs 4 and a CPU-bound step loop (25 ms of host work per step)",
            "above 4 concurrent requests TTFT grows with concurrency (queue time) while TPOT stays flat; "
            "vllm:num_requests_waiting > 0 with the GPU only ~55 % busy",
            "a batch that never fills: GPU at ~55 %, requests wait 1.8 s to join",
            {"max_num_seqs": 4, "host_overhead_ms": 25.0},
        ),
        Preset(
            "kv-pressure",
            "the KV pool sized at gpu-memory-utilization 0.75 (1,366 blocks = 21.9k tokens) and max-num-seqs 128",
            "KV usage near 1, vllm:num_preemptions_total rising (each preemption recomputes the prompt), "
            "the TTFT tail rising, while GPU memory reads only ~75 % used",
            "KV-cache exhaustion: preemptions while GPU memory is only ~75 % used",
            {"gpu_memory_utilization": 0.75, "max_num_seqs": 128},
        ),
        Preset(
            "kv-fragmented",
            "the kv-pressure pool, allocated contiguously per sequence (no paging, so no prefix caching)",
            "requests fail with HTTP 500 or an error event mid-stream ('CUDA out of memory ... fragmented') "
            "while KV usage is well below 1",
            "out-of-memory errors while the memory is only ~75 % used",
            {"gpu_memory_utilization": 0.75, "max_num_seqs": 128, "kv_fragmentation": True},
        ),
        Preset(
            "prefill-interference",
            "chunked prefill off: a prompt is prefilled whole, in a step of its own, and every decode waits",
            "ITL p99 of short requests jumps when long prompts arrive and TTFT p99 balloons; "
            "--chunked-prefill (512-token chunks) removes most of it",
            "prefill of long prompts stalling decodes (TTFT p99 300 ms -> 5 s)",
            {"chunked_prefill": False},
        ),
        Preset(
            "bandwidth-bound",
            "an MHA 7B model (512 KiB of KV per token) with 4-bit weights (3.6 GiB), max-num-seqs 128",
            "TPOT rises with batch size x context (KV reads dominate each decode step) while memory-bandwidth "
            "utilization stays at its ceiling: bytes, not compute, set the step time",
            "decode slowing as the batch grows (memory-bandwidth bound)",
            {
                "weights_gib": 3.6,
                "kv_kib_per_token": 512.0,
                "step_base_ms": 8.6,
                "per_kv_token_us": 1.17,
                "max_num_seqs": 128,
            },
        ),
    )
}

_FIELDS = {f.name for f in fields(EngineParams)}


def preset_params(name: str = DEFAULT_PRESET, **overrides: Any) -> EngineParams:
    """The parameters of preset ``name`` with ``overrides`` applied on top."""
    preset = PRESETS.get(name)
    if preset is None:
        raise ConfigError(f"sim: unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - _FIELDS
    if unknown:
        raise ConfigError(f"sim: unknown engine parameter(s) {', '.join(sorted(unknown))}")
    return EngineParams(**{**preset.overrides, **overrides})
