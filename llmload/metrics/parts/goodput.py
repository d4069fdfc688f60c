"""Goodput per class: successful requests that met every SLO of their class (runs with SLOs).

Each successful request is judged once, as it is recorded
(:func:`~llmload.metrics.definitions.slo_missed`, :class:`~llmload.metrics.parts.contract.Seen`'s
``missed``): a good one adds to ``good`` and ``good_output_tokens``, a miss to ``missed[key]``
for each SLO it missed. Without SLOs nothing is judged, the part stays empty and never travels,
and its figures hold no :class:`Goodput` (no ``goodput`` key in the summary).

:class:`Goodput`: ``attainment`` = good / (ok + errors) (None when nothing finished); the rates
are per second of the span; ``missed`` counts, per SLO key, the successful requests that missed it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from llmload.metrics.definitions import attainment, goodput_per_s
from llmload.metrics.latency import num, rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord
from llmload.metrics.slo import SLO_KEYS

__all__ = ["Goodput", "GoodputWire", "SloFigures", "SloPart"]


class GoodputWire(TypedDict):
    g: int  # good requests
    t: int  # their output tokens
    m: dict[str, int]  # SLO key → successful requests that missed it (non-zero ones)


@dataclass(frozen=True, slots=True)
class Goodput:
    """Requests that met their class's SLOs (module docstring)."""

    good_requests: int = 0
    attainment: float | None = None
    requests_per_s: float = 0.0
    output_tokens_per_s: float = 0.0
    good_output_tokens: int = 0
    missed: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SloFigures:
    key: ClassVar[str] = "goodput"
    goodput: Goodput | None = None  # None: the run had no SLOs

    def to_dict(self) -> dict[str, Json]:
        g = self.goodput
        if g is None:
            return {}
        return {"goodput": {"good_requests": g.good_requests, "attainment": rnd(g.attainment, 4),
                            "requests_per_s": round(g.requests_per_s, 3), "output_tokens_per_s": round(g.output_tokens_per_s, 3),
                            "good_output_tokens": g.good_output_tokens, "missed": dict(g.missed)}}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SloFigures:
        g = d.get("goodput")
        if not g:
            return cls()
        return cls(Goodput(int(g.get("good_requests") or 0), num(g.get("attainment")), num(g.get("requests_per_s")) or 0.0,
                           num(g.get("output_tokens_per_s")) or 0.0, int(g.get("good_output_tokens") or 0),
                           {str(k): int(v) for k, v in (g.get("missed") or {}).items()}))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        return []  # the console's goodput table, beside the SLO verdict (report/console.py)


class SloPart:
    __slots__ = ("good", "good_output_tokens", "missed")
    key: ClassVar[str] = "goodput"
    order: ClassVar[int] = 50
    figures: ClassVar[type[SloFigures]] = SloFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("good_requests", "Successful requests that met every SLO of their class (TTFT, TPOT, E2E limits): "
                 "goodput", lambda p: p.good, slo_only=True),
    )  # fmt: skip

    def __init__(self) -> None:
        self.good = self.good_output_tokens = 0
        self.missed: dict[str, int] = dict.fromkeys(SLO_KEYS, 0)

    @property
    def counters(self) -> dict[str, int]:
        return {"good": self.good, "good_output_tokens": self.good_output_tokens,
                **{f"slo_missed_{k}": v for k, v in self.missed.items()}}  # fmt: skip

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        missed = seen.missed
        if missed is None or rec.outcome != "ok":
            return
        if not missed:
            self.good += 1
            self.good_output_tokens += rec.output_tokens
        for key in missed:
            self.missed[key] += 1

    def merge(self, other: SloPart) -> None:
        self.good += other.good
        self.good_output_tokens += other.good_output_tokens
        for k, v in other.missed.items():
            self.missed[k] = self.missed.get(k, 0) + v

    @property
    def empty(self) -> bool:
        return not (self.good or self.good_output_tokens or any(self.missed.values()))

    def to_wire(self) -> GoodputWire:
        return {"g": self.good, "t": self.good_output_tokens, "m": {k: v for k, v in self.missed.items() if v}}

    @classmethod
    def from_wire(cls, wire: GoodputWire) -> SloPart:
        p = cls()
        p.good, p.good_output_tokens = int(wire.get("g", 0)), int(wire.get("t", 0))
        for k, v in wire.get("m", {}).items():
            p.missed[str(k)] = int(v)
        return p

    def result(self, ctx: Context) -> SloFigures:
        if not ctx.slos:
            return SloFigures()
        return SloFigures(Goodput(
            good_requests=self.good,
            attainment=attainment(self.good, ctx.ok, ctx.errors),
            requests_per_s=goodput_per_s(self.good, ctx.span_s),
            output_tokens_per_s=goodput_per_s(self.good_output_tokens, ctx.span_s),
            good_output_tokens=self.good_output_tokens,
            missed={k: self.missed.get(k, 0) for k in SLO_KEYS},
        ))  # fmt: skip


PART = SloPart
