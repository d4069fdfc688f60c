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

:class:`Turns` is the part of a class's statistics (:mod:`llmload.metrics.parts`) that holds
them (turn key → TurnStats); its figures (:class:`TurnFigures`, summary key ``by_turn``, left
out for a class without turns) hold a :class:`TurnResult` per turn label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from llmload.metrics.definitions import prefix_cache_hit_ratio
from llmload.metrics.histogram import Histogram, HistogramWire
from llmload.metrics.latency import Latency, num, rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["TURN_COUNTERS", "TURN_LIMIT", "TURN_METRICS", "TurnFigures", "TurnResult", "TurnStats", "TurnStatsWire",
           "Turns", "turn_key", "turn_label"]  # fmt: skip

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


class TurnStatsWire(TypedDict, total=False):
    h: dict[str, HistogramWire]
    c: dict[str, int]


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

    def to_wire(self) -> TurnStatsWire:
        return {"h": {m: h.to_wire() for m, h in self.hist.items() if h.count}, "c": {k: v for k, v in self.counters.items() if v}}

    @classmethod
    def from_wire(cls, wire: TurnStatsWire) -> TurnStats:
        t = cls()
        for m, hw in wire.get("h", {}).items():
            t.hist[m] = Histogram.from_wire(hw)
        for k, v in wire.get("c", {}).items():
            t.counters[k] = int(v)
        return t

    def result(self) -> TurnResult:
        """This turn's figures from its histograms and counters."""
        c = self.counters
        return TurnResult(
            requests=c["requests"],
            ok=c["ok"],
            input_tokens=c["input_tokens"],
            cached_prompt_tokens=c["cached_prompt_tokens"],
            prefix_cache_hit_ratio=prefix_cache_hit_ratio(c["cached_prompt_tokens"], c["cache_stated_input_tokens"]),
            latency={m: Latency.from_histogram(self.hist[m]) for m in TURN_METRICS},
        )


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One turn of a conversation class: ``requests`` of every outcome; token counts, TPOT and E2E over
    successful ones (TTFT also the interrupted ones that had a first token)."""

    requests: int = 0
    ok: int = 0
    input_tokens: int = 0
    cached_prompt_tokens: int = 0
    prefix_cache_hit_ratio: float | None = None
    latency: Mapping[str, Latency] = field(default_factory=dict)

    @property
    def input_tokens_mean(self) -> float | None:
        return self.input_tokens / self.ok if self.ok else None

    def lat(self, metric: str) -> Latency:
        return self.latency.get(metric) or Latency()

    def to_dict(self) -> dict[str, Json]:
        """One entry of ``by_turn``."""
        out: dict[str, Json] = {"requests": self.requests, "ok": self.ok, "input_tokens": self.input_tokens,
                               "input_tokens_mean": rnd(self.input_tokens_mean, 1),
                               "cached_prompt_tokens": self.cached_prompt_tokens,
                               "prefix_cache_hit_ratio": rnd(self.prefix_cache_hit_ratio, 4)}  # fmt: skip
        for m in TURN_METRICS:
            out[f"{m}_ms"] = self.lat(m).to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TurnResult:
        i = lambda k: int(d.get(k) or 0)  # noqa: E731
        return cls(i("requests"), i("ok"), i("input_tokens"), i("cached_prompt_tokens"), num(d.get("prefix_cache_hit_ratio")),
                   {m: Latency.from_dict(d.get(f"{m}_ms")) for m in TURN_METRICS})  # fmt: skip


@dataclass(frozen=True, slots=True)
class TurnFigures:
    key: ClassVar[str] = "turns"
    by_turn: Mapping[str, TurnResult] = field(default_factory=dict)  # "1", "2", ..., "10+"

    def to_dict(self) -> dict[str, Json]:
        return {"by_turn": {k: t.to_dict() for k, t in self.by_turn.items()}} if self.by_turn else {}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TurnFigures:
        return cls({str(k): TurnResult.from_dict(t or {}) for k, t in (d.get("by_turn") or {}).items()})

    def console_lines(self, users_max: int) -> list[str]:
        return []  # a table per conversation class (report/console.py)


class Turns:
    """The turns of one class: turn key → :class:`TurnStats` (requests with ``turn`` 0 have none)."""

    __slots__ = ("turns",)
    key: ClassVar[str] = "turns"
    order: ClassVar[int] = 90
    figures: ClassVar[type[TurnFigures]] = TurnFigures
    exported: ClassVar[tuple[Exported, ...]] = ()

    def __init__(self) -> None:
        self.turns: dict[int, TurnStats] = {}

    def turn(self, key: int) -> TurnStats:
        t = self.turns.get(key)
        if t is None:
            t = self.turns[key] = TurnStats()
        return t

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if not rec.turn or rec.agent is not None and rec.agent.child:  # a sub-agent's turn: the agents part's child_turn
            return
        t = self.turn(turn_key(rec.turn))
        if rec.outcome == "ok":
            t.add(True, seen.ttft, seen.tpot, seen.e2e, rec.input_tokens, rec.cached_prompt_tokens)
        else:
            t.add(False, seen.ttft, None, 0.0, 0, None)

    def merge(self, other: Turns) -> None:
        for key, t in other.turns.items():
            self.turn(key).merge(t)

    @property
    def empty(self) -> bool:
        return not self.turns

    def to_wire(self) -> dict[str, TurnStatsWire]:
        return {str(k): t.to_wire() for k, t in self.turns.items()}

    @classmethod
    def from_wire(cls, wire: Mapping[str, TurnStatsWire]) -> Turns:
        p = cls()
        for k, tw in wire.items():
            p.turns[int(k)] = TurnStats.from_wire(tw)
        return p

    def result(self, ctx: Context) -> TurnFigures:
        return TurnFigures({turn_label(k): self.turns[k].result() for k in sorted(self.turns)})


PART = Turns
