"""Reasoning per class: tokens, where their count came from, and reasoning the stream never showed.

Over successful requests that reasoned (reasoning tokens > 0, streamed or not): ``tokens`` (usage
when sent, else counted), ``from_usage``/``counted`` how many took their count from usage / from
the stream, ``hidden`` those whose usage says reasoning tokens the stream never showed
(:func:`~llmload.metrics.definitions.hidden_reasoning`). Summary keys ``reasoning_tokens``
(``{"total", "mean", "from_usage", "counted"}``) and ``hidden_reasoning``; the TTFO and
reasoning-time histograms are the core's (:mod:`~llmload.metrics.parts.outcomes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.definitions import hidden_reasoning
from llmload.metrics.latency import rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["Reasoning", "ReasoningFigures", "ReasoningWire"]


class ReasoningWire(TypedDict):
    t: int  # tokens
    u: int  # from usage
    c: int  # counted
    h: int  # hidden


@dataclass(frozen=True, slots=True)
class ReasoningFigures:
    key: ClassVar[str] = "reasoning"
    tokens: int = 0
    from_usage: int = 0
    counted: int = 0
    hidden: int = 0

    @property
    def reasoned(self) -> int:
        return self.from_usage + self.counted

    @property
    def tokens_mean(self) -> float | None:
        return self.tokens / self.reasoned if self.reasoned else None

    def to_dict(self) -> dict[str, Json]:
        return {"reasoning_tokens": {"total": self.tokens, "mean": rnd(self.tokens_mean, 3), "from_usage": self.from_usage,
                                     "counted": self.counted}, "hidden_reasoning": self.hidden}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ReasoningFigures:
        r = d.get("reasoning_tokens") or {}
        return cls(int(r.get("total") or 0), int(r.get("from_usage") or 0), int(r.get("counted") or 0),
                   int(d.get("hidden_reasoning") or 0))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        return []  # the console's reasoning table shows them (report/console.py)


class Reasoning:
    __slots__ = ("counted", "from_usage", "hidden", "tokens")
    key: ClassVar[str] = "reasoning"
    order: ClassVar[int] = 20
    figures: ClassVar[type[ReasoningFigures]] = ReasoningFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("reasoning_tokens", "Reasoning tokens of successful requests (usage when sent, else counted reasoning "
                 "events)", lambda p: p.tokens),
        Exported("hidden_reasoning_requests", "Successful requests whose usage reported reasoning tokens that the "
                 "stream never showed", lambda p: p.hidden),
    )  # fmt: skip

    def __init__(self) -> None:
        self.tokens = self.from_usage = self.counted = self.hidden = 0

    @property
    def counters(self) -> dict[str, int]:
        return {"reasoning_tokens": self.tokens, "reasoning_from_usage": self.from_usage,
                "reasoning_counted": self.counted, "hidden_reasoning": self.hidden}  # fmt: skip

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.outcome != "ok" or not rec.reasoning_tokens:
            return
        self.tokens += rec.reasoning_tokens
        if rec.reasoning_tokens_from_usage:
            self.from_usage += 1
        else:
            self.counted += 1
        if hidden_reasoning(rec):
            self.hidden += 1

    def merge(self, other: Reasoning) -> None:
        self.tokens += other.tokens
        self.from_usage += other.from_usage
        self.counted += other.counted
        self.hidden += other.hidden

    @property
    def empty(self) -> bool:
        return not (self.tokens or self.from_usage or self.counted or self.hidden)

    def to_wire(self) -> ReasoningWire:
        return {"t": self.tokens, "u": self.from_usage, "c": self.counted, "h": self.hidden}

    @classmethod
    def from_wire(cls, wire: ReasoningWire) -> Reasoning:
        p = cls()
        p.tokens, p.from_usage = int(wire.get("t", 0)), int(wire.get("u", 0))
        p.counted, p.hidden = int(wire.get("c", 0)), int(wire.get("h", 0))
        return p

    def result(self, ctx: Context) -> ReasoningFigures:
        return ReasoningFigures(self.tokens, self.from_usage, self.counted, self.hidden)


PART = Reasoning
