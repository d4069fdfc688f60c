"""``--warmup DURATION`` and ``--warmup-requests N``, validated once into a frozen :class:`WarmupConfig`.

The warm-up of a whole run (a ladder warms each step with ``--step-warmup`` instead): requests
that START during it are sent, their errors shown, but they are left out of every statistic
(:mod:`llmload.metrics.warmup_window`). With both flags the warm-up lasts until both are past.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.config.values import parse_duration, parse_number
from llmload.errors import ConfigError
from llmload.jsonvalue import Json

__all__ = ["WarmupConfig"]


@dataclass(frozen=True, slots=True)
class WarmupConfig:
    """``duration_s``: seconds from the test's start; ``requests``: the run's first N requests (all processes)."""

    duration_s: float = 0.0
    requests: int = 0

    @property
    def on(self) -> bool:
        return self.duration_s > 0 or self.requests > 0

    def public_dict(self) -> dict[str, Json]:
        return {"duration_s": self.duration_s, "requests": self.requests}

    @classmethod
    def from_values(cls, v: Mapping[str, Any]) -> WarmupConfig:
        duration = parse_duration(v.get("warmup"), "--warmup") or 0.0
        requests = parse_number(v.get("warmup_requests"), int, "--warmup-requests") or 0
        if requests < 0:
            raise ConfigError(f"--warmup-requests {requests}: must be >= 0 (the run's first N requests are not "
                              "measured; 0 = none)")  # fmt: skip
        config = cls(float(duration), int(requests))
        if config.on and (v.get("ladder") or v.get("rate_ladder")):
            flag = "--warmup" if duration else "--warmup-requests"
            raise ConfigError(f"{flag} with a ladder: each ladder step has its own warm-up; use --step-warmup "
                              "instead (e.g. --step-warmup 30s)")  # fmt: skip
        return config
