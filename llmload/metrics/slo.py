"""Service-level objectives (SLOs) per request class: what a *good* request must meet.

An :class:`SLO` holds up to three limits, in milliseconds (None = no limit on that metric)::

    ttft_ms    TTFT  <= ttft_ms      (time to first token)
    tpot_ms    TPOT  <= tpot_ms      (time per output token after the first)
    e2e_ms     E2E   <= e2e_ms       (end-to-end latency)

They come from two places, parsed here once each:

* ``--slo "ttft_ms=800,tpot_ms=25,e2e_ms=30000"`` — for every class (:func:`parse_slo_text`);
* a profile class's ``slo = {ttft_ms = 300, tpot_ms = 25}`` (:func:`slo_from_mapping`).

**The class's own limits win, key by key** (:meth:`SLO.over`): a class with
``slo = {ttft_ms = 300}`` run with ``--slo ttft_ms=800,tpot_ms=25`` is judged on
TTFT <= 300 ms and TPOT <= 25 ms. The profile describes the class; the flag is the default
for whatever the profile leaves open. What *good* means is defined once, with the goodput
formulas, in :mod:`llmload.metrics.definitions` (:func:`~llmload.metrics.definitions.slo_missed`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from llmload.errors import ConfigError

__all__ = ["SLO", "SLO_KEYS", "class_slos", "parse_slo_text", "slo_from_mapping"]

#: The SLO keys, in the order they are checked (and reported when several fail).
SLO_KEYS = ("ttft_ms", "tpot_ms", "e2e_ms")
_VALID = ", ".join(SLO_KEYS)


@dataclass(frozen=True, slots=True)
class SLO:
    """Latency limits in ms; None = no limit. An empty SLO (no limit) is met by every successful request."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None

    @property
    def empty(self) -> bool:
        return self.ttft_ms is None and self.tpot_ms is None and self.e2e_ms is None

    def over(self, default: SLO | None) -> SLO:
        """This SLO with the keys it leaves open taken from ``default`` (the ``--slo`` flag)."""
        if default is None:
            return self
        return replace(
            self, **{f.name: getattr(default, f.name) for f in fields(self) if getattr(self, f.name) is None}
        )

    def to_dict(self) -> dict[str, float]:
        """The limits that are set, e.g. ``{"ttft_ms": 800.0}`` (how summaries and profiles record it)."""
        return {k: v for k in SLO_KEYS if (v := getattr(self, k)) is not None}


def _limit(key: str, value: Any, where: str, error: type[ConfigError]) -> float:
    if key not in SLO_KEYS:
        raise error(f"{where}: unknown SLO {key!r}; valid keys: {_VALID} (e.g. ttft_ms=800,tpot_ms=25)")
    try:
        v = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise error(f"{where}: {key}={value!r} must be a number of milliseconds > 0, e.g. {key}=800")
    return v


def parse_slo_text(text: str | None, where: str = "--slo") -> SLO | None:
    """``"ttft_ms=800,tpot_ms=25"`` → :class:`SLO`; empty → None. Errors are one line naming the bad part."""
    text = (text or "").strip()
    if not text:
        return None
    values: dict[str, float] = {}
    for part in text.split(","):
        part = part.strip()
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise ConfigError(
                f"{where} {text!r}: {part!r} is not key=value; write e.g. ttft_ms=800,tpot_ms=25 ({_VALID})"
            )
        if key in values:
            raise ConfigError(f"{where} {text!r}: {key} given twice; give each of {_VALID} at most once")
        values[key] = _limit(key, value.strip(), f"{where} {text!r}", ConfigError)
    return SLO(**values)


def slo_from_mapping(data: Any, where: str, error: type[ConfigError] = ConfigError) -> SLO:
    """A profile's ``slo = {ttft_ms = 300, ...}`` table → :class:`SLO` (``error`` carries the one-line message)."""
    if not isinstance(data, Mapping) or not data:
        raise error(f"{where}: expected a table of limits in ms, e.g. slo = {{ttft_ms = 300, tpot_ms = 25}} ({_VALID})")
    return SLO(**{str(k): _limit(str(k), v, where, error) for k, v in data.items()})


def class_slos(own: Mapping[str, SLO | None], default: SLO | None) -> dict[str, SLO] | None:
    """Each class's SLO: its own over ``default`` (``--slo``), key by key; None when no limit is set anywhere."""
    slos = {name: (slo or SLO()).over(default) for name, slo in own.items()}
    if all(s.empty for s in slos.values()) and (default is None or default.empty):
        return None
    return slos
