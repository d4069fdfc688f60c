"""``--error-backoff``: the policy of the wait after a failed request, validated with the run's configuration.

The wait itself (exponential with equal jitter, ``Retry-After`` as a floor) is
:class:`llmload.users.backoff_wait.Backoff`; this is only what the flag says: ``off``, or the
bounds ``MIN[:MAX]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_S", "DEFAULT_MIN_S", "BackoffSpec"]

DEFAULT_MIN_S = 0.1
DEFAULT_MAX_S = 5.0


@dataclass(frozen=True)
class BackoffSpec:
    """``--error-backoff``: ``None`` bounds = off."""

    min_s: float | None = DEFAULT_MIN_S
    max_s: float | None = DEFAULT_MAX_S

    def __post_init__(self) -> None:
        if (self.min_s is None) != (self.max_s is None):
            raise ValueError("error backoff needs both bounds or none")
        if self.min_s is not None and self.max_s is not None:
            if not (math.isfinite(self.min_s) and self.min_s > 0):
                raise ValueError(f"error backoff minimum must be > 0 s, got {self.min_s!r}")
            if not (math.isfinite(self.max_s) and self.max_s >= self.min_s):
                raise ValueError(f"error backoff maximum must be >= its minimum ({self.min_s:g} s), got {self.max_s!r}")

    @property
    def on(self) -> bool:
        return self.min_s is not None

    @classmethod
    def parse(cls, text: str, parse_duration: Callable[[str], float]) -> BackoffSpec:
        """``off``, ``MIN`` (maximum = max(MIN, 5 s)) or ``MIN:MAX`` (durations such as ``100ms:5s``)."""
        text = text.strip()
        if text.lower() in ("off", "0", "none", "no"):
            return cls(None, None)
        lo, sep, hi = text.partition(":")
        min_s = parse_duration(lo)
        max_s = parse_duration(hi) if sep else max(min_s, DEFAULT_MAX_S)
        return cls(min_s, max_s)
