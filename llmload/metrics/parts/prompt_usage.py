"""Prompt sizes per class as the server counted them (usage) beside the sizes llmload built.

Over successful requests whose prompt size came from usage: how many, their prompt tokens as the
server counted them, and as llmload built them (the profile's, or a dataset's estimate). Not a
summary figure: it feeds the run's prompt-size warning (:mod:`llmload.results.prompt_size`),
which reads these counters as ``usage_input_requests``/``usage_input_tokens``/``usage_input_asked``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["PromptUsage", "PromptUsageFigures", "PromptUsageWire"]


class PromptUsageWire(TypedDict):
    n: int  # requests
    t: int  # tokens the server counted
    a: int  # tokens llmload built


@dataclass(frozen=True, slots=True)
class PromptUsageFigures:
    key: ClassVar[str] = "prompt_usage"
    requests: int = 0
    served: int = 0
    asked: int = 0

    def to_dict(self) -> dict[str, Json]:
        return {}  # in the summary as the prompt-size warning only

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PromptUsageFigures:
        return cls()

    def console_lines(self, users_max: int) -> list[str]:
        return []


class PromptUsage:
    __slots__ = ("asked", "requests", "served")
    key: ClassVar[str] = "prompt_usage"
    order: ClassVar[int] = 80
    figures: ClassVar[type[PromptUsageFigures]] = PromptUsageFigures
    exported: ClassVar[tuple[Exported, ...]] = ()

    def __init__(self) -> None:
        self.requests = self.served = self.asked = 0

    @property
    def counters(self) -> dict[str, int]:
        """The names :mod:`llmload.results.prompt_size` reads."""
        return {"usage_input_requests": self.requests, "usage_input_tokens": self.served, "usage_input_asked": self.asked}

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.outcome == "ok" and rec.input_tokens_from_usage:
            self.requests += 1
            self.served += rec.input_tokens
            self.asked += rec.asked_input_tokens

    def merge(self, other: PromptUsage) -> None:
        self.requests += other.requests
        self.served += other.served
        self.asked += other.asked

    @property
    def empty(self) -> bool:
        return not (self.requests or self.served or self.asked)

    def to_wire(self) -> PromptUsageWire:
        return {"n": self.requests, "t": self.served, "a": self.asked}

    @classmethod
    def from_wire(cls, wire: PromptUsageWire) -> PromptUsage:
        p = cls()
        p.requests, p.served, p.asked = int(wire.get("n", 0)), int(wire.get("t", 0)), int(wire.get("a", 0))
        return p

    def result(self, ctx: Context) -> PromptUsageFigures:
        return PromptUsageFigures(self.requests, self.served, self.asked)


PART = PromptUsage
