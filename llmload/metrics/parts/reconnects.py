"""Reconnects per class: requests sent again on a fresh connection (any outcome).

A reused keep-alive connection the server had already closed fails before any response byte;
the request is then sent once more on a new connection (``RequestRecord.reconnects``). Not an
extra request: each is one request. Summary key ``reconnects``; counter ``llmload_reconnects``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["ReconnectFigures", "Reconnects", "ReconnectsWire"]


class ReconnectsWire(TypedDict):
    n: int


@dataclass(frozen=True, slots=True)
class ReconnectFigures:
    key: ClassVar[str] = "reconnects"
    reconnects: int = 0

    def to_dict(self) -> dict[str, Json]:
        return {"reconnects": self.reconnects}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ReconnectFigures:
        return cls(int(d.get("reconnects") or 0))

    def console_lines(self, users_max: int) -> list[str]:
        if not self.reconnects:
            return []
        return [f"reconnects: {self.reconnects} requests sent again on a fresh connection "
                "(the server had closed a pooled keep-alive connection before answering)"]  # fmt: skip


class Reconnects:
    __slots__ = ("n",)
    key: ClassVar[str] = "reconnects"
    order: ClassVar[int] = 10
    figures: ClassVar[type[ReconnectFigures]] = ReconnectFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("reconnects", "Requests sent again on a fresh connection: a reused keep-alive connection was closed "
                 "before any answer byte", lambda p: p.n),
    )  # fmt: skip

    def __init__(self) -> None:
        self.n = 0

    @property
    def counters(self) -> dict[str, int]:
        return {"reconnects": self.n}

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        self.n += rec.reconnects

    def merge(self, other: Reconnects) -> None:
        self.n += other.n

    @property
    def empty(self) -> bool:
        return not self.n

    def to_wire(self) -> ReconnectsWire:
        return {"n": self.n}

    @classmethod
    def from_wire(cls, wire: ReconnectsWire) -> Reconnects:
        p = cls()
        p.n = int(wire.get("n", 0))
        return p

    def result(self, ctx: Context) -> ReconnectFigures:
        return ReconnectFigures(self.n)


PART = Reconnects
