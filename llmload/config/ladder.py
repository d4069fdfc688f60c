"""The ladder's flags, validated once into a frozen :class:`LadderConfig` (what runs when: :mod:`llmload.ladder`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.config.arrival import parse_rates
from llmload.config.values import parse_duration, parse_levels, parse_number
from llmload.errors import ConfigError
from llmload.jsonvalue import Json

__all__ = ["LadderConfig"]


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """``--ladder`` user counts, ``--step-time``, ``--step-warmup``, ``--stop-on-breach``, ``--baseline-requests``.

    A rate ladder (``--rate-ladder``) holds ``-u`` users (the in-flight cap) at every step and
    steps the offered rate instead: ``rates[i]`` requests/s at step ``i`` (``levels`` = the cap each step).
    """

    levels: tuple[int, ...]
    step_s: float
    warmup_s: float
    stop_on_breach: bool = False
    baseline_requests: int = 0
    spawn_rate: float | None = None  # users per second; None = each step's users within ~1 s
    rates: tuple[float, ...] = ()  # a rate ladder's offered rates, one per step (empty: a concurrency ladder)

    @property
    def by_rate(self) -> bool:
        return bool(self.rates)

    def rate_at(self, index: int) -> float | None:
        """The offered rate of step ``index`` (None: a concurrency ladder, or the pre-run)."""
        return self.rates[index] if self.rates and 0 <= index < len(self.rates) else None

    def __post_init__(self) -> None:
        if self.step_s <= 0:
            raise ConfigError("--step-time: must be > 0, e.g. 5m")
        if not 0 <= self.warmup_s < self.step_s:
            raise ConfigError(f"--step-warmup {self.warmup_s:g}s: must be shorter than --step-time {self.step_s:g}s")

    def rate_for(self, users: int) -> float:
        """The spawn rate of a step of ``users`` users."""
        return self.spawn_rate or float(max(users, 1))

    def public_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {
            "levels": list(self.levels),
            "step_s": self.step_s,
            "warmup_s": self.warmup_s,
            "stop_on_breach": self.stop_on_breach,
            "baseline_requests": self.baseline_requests,
        }
        if self.rates:
            out["rates"] = list(self.rates)
        return out

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> LadderConfig | None:
        """None without ``--ladder`` or ``--rate-ladder``; ``--rate-ladder`` takes the place of ``--ladder``
        (whose default the ladder locustfile sets)."""
        text = values["ladder"] or ""
        # The step durations are read whether or not --ladder is on: a typo is an error, never silently unused.
        step_s = parse_duration(values["step_time"], "--step-time") or 0.0
        warmup_s = parse_duration(values["step_warmup"], "--step-warmup") or 0.0
        rate_text = str(values.get("rate_ladder") or "").strip()
        if not text and not rate_text:
            return None
        baseline = parse_number(values["baseline_requests"], int, "--baseline-requests") or 0
        if baseline < 0:
            raise ConfigError(f"--baseline-requests {baseline}: must be >= 0")
        rates: tuple[float, ...] = ()
        if rate_text:
            if baseline:
                raise ConfigError("--baseline-requests with --rate-ladder: the lowest rate's step is the baseline; "
                                  "drop --baseline-requests (or put a low rate first, e.g. --rate-ladder 0.5,1,2,4)")  # fmt: skip
            rates = parse_rates(rate_text)
            cap = parse_number(values.get("num_users"), int, "-u")
            cap = 1 if cap is None else cap  # -u not given: 1 (Locust's default); -u 0 is refused below
            if cap < 1:
                raise ConfigError(f"-u {cap}: a rate ladder needs -u >= 1 (the cap on requests in flight)")
            levels = (int(cap),) * len(rates)
        else:
            levels = parse_levels(str(text))
        return cls(
            levels=levels,
            rates=rates,
            step_s=step_s,
            warmup_s=warmup_s,
            stop_on_breach=bool(values["stop_on_breach"]),
            baseline_requests=baseline,
        )
