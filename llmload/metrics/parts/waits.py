"""Backoff per class: users' waits after failed requests, and the waits servers asked for.

``backoffs``/``backoff_s``: waits after a failed request (``--error-backoff``) and the
user-seconds spent in them (:meth:`Backoff.add_wait`, called by the user, not per record; kept
in ms on the wire, :func:`~llmload.metrics.definitions.error_backoff_s`); ``retry_afters``:
failed requests whose answer (429/503) carried a readable Retry-After, ``retry_after_s`` the
mean wait they asked for (a day at most per answer: a counter, no inf). Summary keys
``backoffs``, ``backoff_s``, ``retry_afters``, ``retry_after_s``; counter
``llmload_error_backoff_seconds``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.definitions import error_backoff_s
from llmload.metrics.latency import num, rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["Backoff", "BackoffFigures", "BackoffWire"]

_DAY_S = 86_400.0


class BackoffWire(TypedDict):
    n: int  # backoffs
    ms: int  # backoff ms
    r: int  # retry-afters
    rms: int  # retry-after ms


@dataclass(frozen=True, slots=True)
class BackoffFigures:
    key: ClassVar[str] = "backoff"
    backoffs: int = 0
    backoff_s: float = 0.0
    retry_afters: int = 0
    retry_after_s: float | None = None

    def to_dict(self) -> dict[str, Json]:
        return {"backoffs": self.backoffs, "backoff_s": round(self.backoff_s, 3), "retry_afters": self.retry_afters,
                "retry_after_s": rnd(self.retry_after_s, 3)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BackoffFigures:
        return cls(int(d.get("backoffs") or 0), num(d.get("backoff_s")) or 0.0, int(d.get("retry_afters") or 0),
                   num(d.get("retry_after_s")))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        if not self.backoffs:
            return []
        per_user = f", {self.backoff_s / users_max:.1f} s per user" if users_max else ""
        return [f"error backoff: users waited {self.backoff_s:.1f} s in all after failed requests "
                f"({self.backoffs} waits{per_user}; --error-backoff)"]  # fmt: skip


class Backoff:
    __slots__ = ("backoff_ms", "backoffs", "retry_after_ms", "retry_afters")
    key: ClassVar[str] = "backoff"
    order: ClassVar[int] = 60
    figures: ClassVar[type[BackoffFigures]] = BackoffFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("error_backoff_seconds", "User-seconds spent waiting after failed requests before the next one "
                 "(--error-backoff)", lambda p: error_backoff_s(p.backoff_ms)),
    )  # fmt: skip

    def __init__(self) -> None:
        self.backoffs = self.backoff_ms = self.retry_afters = self.retry_after_ms = 0

    @property
    def counters(self) -> dict[str, int]:
        return {"backoffs": self.backoffs, "backoff_ms": self.backoff_ms, "retry_afters": self.retry_afters,
                "retry_after_ms": self.retry_after_ms}  # fmt: skip

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.outcome == "error" and rec.retry_after_s is not None:
            self.retry_afters += 1
            self.retry_after_ms += round(min(rec.retry_after_s, _DAY_S) * 1000)

    def add_wait(self, seconds: float) -> None:
        """A user waited ``seconds`` after a failed request."""
        self.backoffs += 1
        self.backoff_ms += round(seconds * 1000)

    def merge(self, other: Backoff) -> None:
        self.backoffs += other.backoffs
        self.backoff_ms += other.backoff_ms
        self.retry_afters += other.retry_afters
        self.retry_after_ms += other.retry_after_ms

    @property
    def empty(self) -> bool:
        return not (self.backoffs or self.backoff_ms or self.retry_afters or self.retry_after_ms)

    def to_wire(self) -> BackoffWire:
        return {"n": self.backoffs, "ms": self.backoff_ms, "r": self.retry_afters, "rms": self.retry_after_ms}

    @classmethod
    def from_wire(cls, wire: BackoffWire) -> Backoff:
        p = cls()
        p.backoffs, p.backoff_ms = int(wire.get("n", 0)), int(wire.get("ms", 0))
        p.retry_afters, p.retry_after_ms = int(wire.get("r", 0)), int(wire.get("rms", 0))
        return p

    def result(self, ctx: Context) -> BackoffFigures:
        mean = self.retry_after_ms / 1000 / self.retry_afters if self.retry_afters else None
        return BackoffFigures(self.backoffs, error_backoff_s(self.backoff_ms), self.retry_afters, mean)


PART = Backoff
