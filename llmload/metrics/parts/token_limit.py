"""Requests stopped at the output-token limit, per class.

A successful request whose server says it stopped because the output reached the limit
(``finish_reason`` ``length``; Anthropic's ``max_tokens``, the Responses API's
``max_output_tokens``) wrote as many tokens as it was allowed, not as many as the model
wanted: its output length (and so its E2E) is the cap's. Summary key ``stopped_at_limit``;
counter ``llmload_stopped_at_limit_requests``. No console line: llmload asks for each request's
output length through ``max_tokens``, so against the simulator or with ``--ignore-eos`` every answer
stops there by design, and a line saying so in every run would be noise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["LIMIT_REASONS", "LimitFigures", "TokenLimit", "TokenLimitWire"]

#: The finish reasons that mean "the output reached its token limit", as the APIs spell it.
LIMIT_REASONS = frozenset({"length", "max_tokens", "max_output_tokens"})


class TokenLimitWire(TypedDict):
    n: int


@dataclass(frozen=True, slots=True)
class LimitFigures:
    key: ClassVar[str] = "token_limit"
    stopped_at_limit: int = 0

    def to_dict(self) -> dict[str, Json]:
        return {"stopped_at_limit": self.stopped_at_limit}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LimitFigures:
        return cls(int(d.get("stopped_at_limit") or 0))

    def console_lines(self, users_max: int) -> list[str]:
        return []  # in the summary and /metrics only (module docstring)


class TokenLimit:
    __slots__ = ("n",)
    key: ClassVar[str] = "token_limit"
    order: ClassVar[int] = 15
    figures: ClassVar[type[LimitFigures]] = LimitFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("stopped_at_limit_requests", "Successful requests the server stopped at the output-token limit "
                 "(finish_reason length)", lambda p: p.n),
    )  # fmt: skip

    def __init__(self) -> None:
        self.n = 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.outcome == "ok" and rec.finish_reason in LIMIT_REASONS:
            self.n += 1

    def merge(self, other: TokenLimit) -> None:
        self.n += other.n

    @property
    def empty(self) -> bool:
        return not self.n

    def to_wire(self) -> TokenLimitWire:
        return {"n": self.n}

    @classmethod
    def from_wire(cls, wire: TokenLimitWire) -> TokenLimit:
        p = cls()
        p.n = int(wire.get("n", 0))
        return p

    def result(self, ctx: Context) -> LimitFigures:
        return LimitFigures(self.n)


PART = TokenLimit
