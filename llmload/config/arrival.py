"""The arrival flags, validated once into a frozen :class:`ArrivalConfig` (the schedule itself: :mod:`llmload.arrivals`).

``--arrival closed`` (the default) is the closed loop: ``-u`` users, each sending its next
request when its last one ended. ``constant``, ``poisson`` and ``gamma`` are open-loop
processes at ``--rate R`` requests/s for the whole run (all workers together), or at each
offered rate of ``--rate-ladder`` in turn; ``-u`` is then the cap on requests in flight.
``--burstiness K`` is gamma's shape (1 = Poisson, < 1 burstier). ``--trace FILE`` replays a
request trace instead (mode ``trace``: open loop at the file's times, ``--trace-speedup``
times faster, its first ``--trace-limit`` entries; :class:`TraceSource`). Every mistake is
one :class:`~llmload.errors.ConfigError` line, before any load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.arrivals.schedules import ARRIVAL_MODES, MAX_RATE, MIN_BURSTINESS, TRACE_MODE, ArrivalSpec
from llmload.config.values import parse_number
from llmload.errors import ConfigError
from llmload.jsonvalue import Json

__all__ = ["ArrivalConfig", "TraceSource", "parse_rates"]


def parse_rates(text: str, flag: str = "--rate-ladder") -> tuple[float, ...]:
    """``"1,2,4.5"`` → (1.0, 2.0, 4.5): offered rates (requests/s), > 0 and strictly increasing."""
    try:
        rates = tuple(float(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: must be request rates (requests/s) separated by commas, e.g. 1,2,4,8") from None
    if not rates or any(not math.isfinite(r) or r <= 0 for r in rates):
        raise ConfigError(f"{flag} {text!r}: every rate must be a number > 0 (requests/s), e.g. 1,2,4,8")
    if max(rates) > MAX_RATE:
        raise ConfigError(f"{flag} {text!r}: {max(rates):g} req/s is more than llmload can offer "
                          f"({MAX_RATE:,.0f} req/s for a run); lower it")  # fmt: skip
    if any(b <= a for a, b in zip(rates, rates[1:], strict=False)):
        raise ConfigError(f"{flag} {text!r}: rates must increase from step to step")
    return rates


@dataclass(frozen=True, slots=True)
class TraceSource:
    """``--trace``: the file, how much faster than recorded to send it, and how many entries (None: all)."""

    path: str
    speedup: float = 1.0
    limit: int | None = None

    def public_dict(self) -> dict[str, Json]:
        return {"file": self.path, "speedup": self.speedup, "limit": self.limit}


@dataclass(frozen=True, slots=True)
class ArrivalConfig:
    """The run's arrival process; ``rate`` is None in a closed loop, for a rate ladder (``rate_levels``) and a trace."""

    spec: ArrivalSpec = ArrivalSpec()
    rate: float | None = None
    rate_levels: tuple[float, ...] = ()
    trace: TraceSource | None = None

    @property
    def open_loop(self) -> bool:
        return self.spec.open_loop

    @property
    def mode(self) -> str:
        return self.spec.mode

    @property
    def first_rate(self) -> float:
        """The rate the schedule starts at (``--rate``, or the ladder's first step)."""
        return self.rate if self.rate is not None else (self.rate_levels[0] if self.rate_levels else 0.0)

    def public_dict(self) -> dict[str, Json]:
        if not self.open_loop:
            return {"mode": "closed"}
        out: dict[str, Json] = {"mode": self.mode, "rate": self.rate}
        if self.mode == "gamma":
            out["burstiness"] = self.spec.burstiness
        if self.rate_levels:
            out["rate_levels"] = list(self.rate_levels)
        if self.trace is not None:
            out["trace"] = self.trace.public_dict()
        return out

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ArrivalConfig:
        mode = (values.get("arrival") or "closed").strip()
        if mode not in ARRIVAL_MODES:
            raise ConfigError(f"--arrival {mode!r}: choose one of {', '.join(ARRIVAL_MODES)}")
        rate = parse_number(values.get("rate"), float, "--rate")
        burst = parse_number(values.get("burstiness"), float, "--burstiness")
        burst = 1.0 if burst is None else float(burst)
        ladder_text = str(values.get("rate_ladder") or "").strip()
        levels = parse_rates(ladder_text) if ladder_text else ()
        trace = _trace(values)
        if trace is not None:
            _check_trace_alone(mode, rate, levels, burst)
            return cls(ArrivalSpec(TRACE_MODE), trace=trace)
        if mode == "closed":
            _check_closed(rate, levels, burst)
            return cls()
        _check_burstiness(mode, burst)
        if levels and rate is not None:
            raise ConfigError("--rate and --rate-ladder: give one (the ladder's steps set the rate)")
        if not levels:
            _check_rate(mode, rate)
        return cls(ArrivalSpec(mode, burst), float(rate) if rate is not None else None, levels)


def _check_trace_alone(mode: str, rate: float | None, levels: tuple[float, ...], burst: float) -> None:
    """``--trace`` sets its own send times: no arrival process, rate, ladder or burstiness beside it."""
    given = [flag for flag, on in (("--arrival " + mode, mode != "closed"), ("--rate", rate is not None),
             ("--rate-ladder", bool(levels)), ("--burstiness", burst != 1.0)) if on]  # fmt: skip
    if given:
        raise ConfigError(f"--trace with {given[0]}: a trace sets its own send times; drop {given[0]} "
                          "(--trace-speedup makes it faster)")  # fmt: skip


def _check_closed(rate: float | None, levels: tuple[float, ...], burst: float) -> None:
    """A closed loop takes none of the open-loop flags."""
    if rate is not None:
        raise ConfigError(f"--rate {rate:g}: needs an open-loop arrival; add --arrival poisson (or constant, gamma)")
    if levels:
        raise ConfigError("--rate-ladder: needs an open-loop arrival; add --arrival poisson (or constant, gamma)")
    if burst != 1.0:
        raise ConfigError(f"--burstiness {burst:g}: is the shape of --arrival gamma; add --arrival gamma")


def _check_burstiness(mode: str, burst: float) -> None:
    """Gamma's shape: > 0, at least :data:`MIN_BURSTINESS`, and 1 (Poisson) for any other open-loop mode."""
    if not (math.isfinite(burst) and burst > 0):
        raise ConfigError(f"--burstiness {burst:g}: must be > 0 (gamma shape: 1 = Poisson, 0.25 = bursty)")
    if burst < MIN_BURSTINESS:
        raise ConfigError(f"--burstiness {burst:g}: must be >= {MIN_BURSTINESS:g} (inter-arrival CV 10; below, "
                          "nearly every gap is 0: one burst of every arrival)")  # fmt: skip
    if burst != 1.0 and mode != "gamma":
        raise ConfigError(f"--burstiness {burst:g}: is the shape of --arrival gamma, not {mode}; use --arrival gamma")


def _check_rate(mode: str, rate: float | None) -> None:
    """An open loop without a ladder needs ``--rate``: a number > 0, at most :data:`MAX_RATE`."""
    if rate is None:
        raise ConfigError(f"--arrival {mode}: needs --rate R (requests/s for the whole run, e.g. --rate 10) "
                          "or --rate-ladder 1,2,4,8")  # fmt: skip
    if not (math.isfinite(rate) and rate > 0):
        raise ConfigError(f"--rate {rate:g}: must be > 0 (requests/s for the whole run, e.g. --rate 10)")
    if rate > MAX_RATE:
        raise ConfigError(f"--rate {rate:g}: more than llmload can offer ({MAX_RATE:,.0f} req/s for a run; "
                          "one load process sends a few thousand at most); lower it")  # fmt: skip


def _trace(values: Mapping[str, Any]) -> TraceSource | None:
    """``--trace`` with ``--trace-speedup`` and ``--trace-limit`` (which need it), or None."""
    path = str(values.get("trace") or "").strip()
    speedup = parse_number(values.get("trace_speedup"), float, "--trace-speedup")
    limit = parse_number(values.get("trace_limit"), int, "--trace-limit")
    if not path:
        if speedup not in (None, 1.0):
            raise ConfigError(f"--trace-speedup {speedup:g}: needs --trace FILE.jsonl (the trace to replay)")
        if limit:
            raise ConfigError(f"--trace-limit {limit}: needs --trace FILE.jsonl (the trace to replay)")
        return None
    speedup = 1.0 if speedup is None else float(speedup)
    if not (math.isfinite(speedup) and speedup > 0):
        raise ConfigError(f"--trace-speedup {speedup:g}: must be > 0 (2 = twice as fast as recorded)")
    if limit is not None and limit < 0:
        raise ConfigError(f"--trace-limit {limit}: must be >= 1 entries (0 = the whole trace)")
    return TraceSource(path, speedup, limit or None)
