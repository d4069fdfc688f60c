"""The latency model: when each output token of a request is due.

Today's model is fixed: the first token is due ``ttft`` after the request arrived,
token ``i`` (0-based) at the **absolute** time ``t0 + ttft + i * itl``. Absolute
times mean a late wake-up delays one token but never shifts the ones after it, so
timing error does not accumulate over a long stream.

Pure arithmetic on floats in seconds (the clock is the caller's), no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

__all__ = ["FixedLatencyModel", "LatencyModel"]

# Tolerance for float rounding in ``tokens_due``: ``due(t0, i)`` recomputed from
# ``now == due(t0, i)`` must count token ``i`` as due.
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class FixedLatencyModel:
    """Fixed time to first token ``ttft_s`` then one token every ``itl_s`` (seconds)."""

    ttft_s: float
    itl_s: float

    def due(self, t0: float, i: int) -> float:
        """Time at which token ``i`` (0-based) of a request that arrived at ``t0`` is due."""
        return t0 + self.ttft_s + i * self.itl_s

    def tokens_due(self, t0: float, now: float, max_tokens: int) -> int:
        """How many of the request's ``max_tokens`` tokens are due at ``now`` (0..max_tokens)."""
        since_first = now - t0 - self.ttft_s
        if since_first < -_EPS:
            return 0
        if self.itl_s <= 0.0:
            return max_tokens
        n = math.floor(since_first / self.itl_s + _EPS) + 1
        return min(n, max_tokens)

    def duration(self, n_tokens: int) -> float:
        """Seconds from arrival to the last of ``n_tokens`` tokens (the end-to-end latency)."""
        if n_tokens <= 0:
            return 0.0
        return self.ttft_s + (n_tokens - 1) * self.itl_s


class LatencyModel(Protocol):
    """What the fixed-latency engine asks of its model: :class:`FixedLatencyModel`, or the cold start's
    :class:`~llmload.sim.cold_server.ColdStartModel` around one."""

    @property
    def ttft_s(self) -> float: ...

    @property
    def itl_s(self) -> float: ...

    def due(self, t0: float, i: int) -> float: ...

    def tokens_due(self, t0: float, now: float, max_tokens: int) -> int: ...

    def duration(self, n_tokens: int) -> float: ...
