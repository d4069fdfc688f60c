"""A trace (``--trace``) as ``llmload predict``'s arrivals: each entry due at its time, with its lengths and its
prompt as tokens whose leading blocks repeat where the trace's ``hash_ids`` do.

The engine model's prefix cache (:mod:`llmload.sim.prefix`) hashes a prompt's tokens block by block; a real
replay sends equal words for equal ``hash_ids`` (:class:`~llmload.workload.traces.TracePrompts`), so equal
ids must give equal tokens here too. :class:`TraceTokens` computes each token from its position instead of
storing them (a 1 000-entry trace of 2 000-token prompts would be 2 million objects): block ``h``'s token
``j`` is ``h * BLOCK_TOKENS + j``; the rest of entry ``i`` (past its listed blocks) is unique to it
(negative numbers, never a block's). A trace's sessions are one arrival each, at their first turn's time,
replayed turn after turn (:mod:`llmload.capacity.trace_turns`).
"""

from __future__ import annotations

from llmload.capacity.drive import Arrival
from llmload.capacity.session_replay import LazyTokens
from llmload.capacity.trace_turns import trace_session
from llmload.workload.traces import BLOCK_TOKENS, Trace, TraceEntry

__all__ = ["TraceTokens", "trace_arrivals"]


class TraceTokens(LazyTokens):
    """The tokens of one entry's prompt, computed on demand."""

    __slots__ = ("blocks", "entry_no", "n")

    def __init__(self, entry: TraceEntry, index: int) -> None:
        self.blocks, self.entry_no, self.n = entry.hash_ids, index, entry.input_length  # (Sequence has an index())

    def _at(self, k: int) -> int:
        b, j = divmod(k, BLOCK_TOKENS)
        if b < len(self.blocks):
            return self.blocks[b] * BLOCK_TOKENS + j
        return -(self.entry_no * (1 << 32) + k + 1)


def trace_arrivals(trace: Trace, speedup: float, max_tokens_cap: int | None = None) -> tuple[Arrival, ...]:
    """Every single entry and every session (:attr:`~llmload.workload.traces.Trace.arrivals`) as an
    :class:`~llmload.capacity.drive.Arrival`, due at its time / ``speedup``."""
    out = []
    sessions = trace.sessions
    for n, i in enumerate(trace.arrivals):
        e = trace.entries[i]
        out_tokens = e.output_length if max_tokens_cap is None else min(e.output_length, max_tokens_cap)
        session = None
        if i in sessions:
            session = trace_session([trace.entries[j] for j in sessions[i]], n, speedup, max_tokens_cap)
        out.append(Arrival(e.timestamp_ms / 1000.0 / speedup, e.input_length, out_tokens, TraceTokens(e, i), session))
    return tuple(out)
