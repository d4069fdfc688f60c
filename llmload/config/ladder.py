"""The ladder's flags, validated once into a frozen :class:`LadderConfig` (what runs when: :mod:`llmload.ladder`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.config.values import parse_duration, parse_levels, parse_number
from llmload.errors import ConfigError

__all__ = ["LadderConfig"]


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """``--ladder`` user counts, ``--step-time``, ``--step-warmup``, ``--stop-on-breach``, ``--baseline-requests``."""

    levels: tuple[int, ...]
    step_s: float
    warmup_s: float
    stop_on_breach: bool = False
    baseline_requests: int = 0
    spawn_rate: float | None = None  # users per second; None = each step's users within ~1 s

    def __post_init__(self) -> None:
        if self.step_s <= 0:
            raise ConfigError("--step-time: must be > 0, e.g. 5m")
        if not 0 <= self.warmup_s < self.step_s:
            raise ConfigError(f"--step-warmup {self.warmup_s:g}s: must be shorter than --step-time {self.step_s:g}s")

    def rate_for(self, users: int) -> float:
        """The spawn rate of a step of ``users`` users."""
        return self.spawn_rate or float(max(users, 1))

    def public_dict(self) -> dict[str, Any]:
        return {
            "levels": list(self.levels),
            "step_s": self.step_s,
            "warmup_s": self.warmup_s,
            "stop_on_breach": self.stop_on_breach,
            "baseline_requests": self.baseline_requests,
        }

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> LadderConfig | None:
        """None without ``--ladder``."""
        text = values["ladder"] or ""
        # The step durations are read whether or not --ladder is on: a typo is an error, never silently unused.
        step_s = parse_duration(values["step_time"], "--step-time") or 0.0
        warmup_s = parse_duration(values["step_warmup"], "--step-warmup") or 0.0
        if not text:
            return None
        baseline = parse_number(values["baseline_requests"], int, "--baseline-requests") or 0
        if baseline < 0:
            raise ConfigError(f"--baseline-requests {baseline}: must be >= 0")
        return cls(
            levels=parse_levels(str(text)),
            step_s=step_s,
            warmup_s=warmup_s,
            stop_on_breach=bool(values["stop_on_breach"]),
            baseline_requests=baseline,
        )
