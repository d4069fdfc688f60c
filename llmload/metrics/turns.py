"""Per-turn statistics of a conversation class: mergeable histograms and counters per turn.

A request of a conversation class carries its turn (``RequestRecord.turn`` = 1, 2, ...;
0 for a single request, which has no per-turn statistics). :class:`TurnStats` holds, for
one turn of one class, the histograms of TTFT, TPOT and E2E (the same definitions and the
same rule as the class's own: successful requests, and for TTFT also those interrupted by
the end of the test after their first token) and the counters ``requests`` (every
outcome), ``ok``, ``input_tokens``, ``cached_prompt_tokens`` and
``cache_stated_input_tokens`` (successful requests; see
:func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`).

**Tail turns are merged**: turns from :data:`TURN_LIMIT` on share one entry, keyed
:data:`TURN_LIMIT` and labelled ``"10+"`` (:func:`turn_label`), so a profile with long or
unbounded conversations keeps a bounded number of histograms per class. Merging is
addition, like every other statistic (:mod:`llmload.metrics.recorder`).
"""

from __future__ import annotations

from typing import Any

from llmload.metrics.histogram import Histogram

__all__ = ["TURN_COUNTERS", "TURN_LIMIT", "TURN_METRICS", "TurnStats", "turn_key", "turn_label"]

#: Turns from this one on are merged into one entry (labelled ``"10+"``).
TURN_LIMIT = 10
#: Latencies kept per turn.
TURN_METRICS = ("ttft", "tpot", "e2e")
#: Counters kept per turn.
TURN_COUNTERS = ("requests", "ok", "input_tokens", "cached_prompt_tokens", "cache_stated_input_tokens")


def turn_key(turn: int) -> int:
    """The entry a request of ``turn`` (≥ 1) goes to: itself, or :data:`TURN_LIMIT` for the tail."""
    return turn if turn < TURN_LIMIT else TURN_LIMIT


def turn_label(key: int) -> str:
    """The summary's key of an entry: ``"1"``, ``"2"``, ..., ``"10+"``."""
    return f"{key}+" if key >= TURN_LIMIT else str(key)


class TurnStats:
    """Histograms and counters of one turn of one class (see the module docstring)."""

    __slots__ = ("counters", "hist")

    def __init__(self) -> None:
        self.hist: dict[str, Histogram] = {m: Histogram() for m in TURN_METRICS}
        self.counters: dict[str, int] = dict.fromkeys(TURN_COUNTERS, 0)

    def add(self, ok: bool, ttft: float | None, tpot: float | None, e2e: float, input_tokens: int, cached: int | None) -> None:
        """One request of this turn; ``ttft`` also for an interrupted one (the caller decides), the rest when ``ok``."""
        c = self.counters
        c["requests"] += 1
        if ttft is not None:
            self.hist["ttft"].record(ttft)
        if not ok:
            return
        c["ok"] += 1
        c["input_tokens"] += input_tokens
        if cached is not None:
            c["cached_prompt_tokens"] += cached
            c["cache_stated_input_tokens"] += input_tokens
        if tpot is not None:
            self.hist["tpot"].record(tpot)
        self.hist["e2e"].record(e2e)

    def merge(self, other: TurnStats) -> None:
        for m, h in other.hist.items():
            self.hist[m].merge(h)
        for k, v in other.counters.items():
            self.counters[k] = self.counters.get(k, 0) + v

    def to_wire(self) -> dict[str, Any]:
        return {"h": {m: h.to_wire() for m, h in self.hist.items() if h.count}, "c": {k: v for k, v in self.counters.items() if v}}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> TurnStats:
        t = cls()
        for m, hw in wire.get("h", {}).items():
            t.hist[m] = Histogram.from_wire(hw)
        for k, v in wire.get("c", {}).items():
            t.counters[k] = int(v)
        return t
