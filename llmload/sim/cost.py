"""How long one engine step takes and how many bytes it moves through GPU memory.

A step runs one forward pass over everything the scheduler put in it: ``decode_seqs``
sequences that each feed one token (reading ``context_tokens`` KV-cache tokens in all)
and ``prefill_tokens`` prompt tokens. In simulated seconds::

    host = host_overhead                                     CPU: schedule, sample, detokenize (GPU idle)
    gpu  = step_base                                         read the weights once (memory-bandwidth bound)
         + per_seq * decode_seqs                             per-sequence work (logits, sampling)
         + per_kv_token * context_tokens                     read each sequence's KV cache (bandwidth bound)
         + prefill_tokens / prefill_tps                      prompt processing (compute bound)

    bytes = weights + kv_bytes_per_token * (context_tokens + prefill_tokens)

Real time is simulated time x ``time_scale``. Pure arithmetic, no clock.
"""

from __future__ import annotations

from llmload.sim.params import EngineParams

__all__ = ["CostModel"]


class CostModel:
    """Step durations (real seconds) and bytes moved, from :class:`EngineParams`."""

    __slots__ = ("_base", "_bytes_per_token", "_host", "_per_kv", "_per_seq", "_prefill", "_weights", "scale")

    def __init__(self, p: EngineParams) -> None:
        s = self.scale = p.time_scale
        self._host = p.host_overhead_ms / 1000.0 * s
        self._base = p.step_base_ms / 1000.0 * s
        self._per_seq = p.per_seq_ms / 1000.0 * s
        self._per_kv = p.per_kv_token_us / 1e6 * s
        self._prefill = s / p.prefill_tps
        self._weights = float(p.weights_bytes)
        self._bytes_per_token = float(p.kv_bytes_per_token)

    def step(self, decode_seqs: int, context_tokens: int, prefill_tokens: int) -> tuple[float, float, float]:
        """``(host_s, gpu_s, bytes)`` of one step, the times in real seconds."""
        gpu = self._base + self._per_seq * decode_seqs + self._per_kv * context_tokens + self._prefill * prefill_tokens
        return self._host, gpu, self._weights + self._bytes_per_token * (context_tokens + prefill_tokens)
