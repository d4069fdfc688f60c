"""The contract every part of a class's statistics keeps (:class:`Part`), and what it is given.

A part counts one group of figures of one request class. Per finished request it gets the
record and a :class:`Seen` (the latencies every part shares, computed once, and the SLOs the
request missed); it merges with another of its kind by addition; it travels worker → master as
its own typed wire dict (a ``TypedDict`` per part, primitives only); and over a span of test
time it gives its :class:`Figures`: a frozen dataclass that writes its keys of the summary's
STATS block (``to_dict``) and reads them back (``from_dict``), with its console lines.

A part may also name Prometheus counters (:class:`Exported`, read by the exporter at each
scrape). Nothing here runs per token: ``add`` runs once per finished request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from llmload.jsonvalue import Json  # re-exported: a part's figures write and read the summary's JSON
from llmload.metrics.histogram import Histogram
from llmload.metrics.record import RequestRecord

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11+; llmload runs on 3.10

__all__ = ["Context", "Exported", "Figures", "Json", "Part", "Seen"]



@dataclass(frozen=True, slots=True)
class Seen:
    """What :class:`~llmload.metrics.recorder.ClassStats` computed once for a finished request.

    ``ttft`` (s) for a successful request, or an interrupted one that had its first token
    (what its user saw); ``tpot`` and ``e2e`` for a successful one; ``missed``: the SLOs a
    successful request missed (``()`` = good), None when the run judges no SLOs.
    """

    ttft: float | None = None
    tpot: float | None = None
    e2e: float = 0.0
    missed: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """What a part's figures may need beyond its own counts: the span (s) their rates are per, whether
    the run judged SLOs or had an arrival schedule, and the core's successful/failed counts and TTFT."""

    span_s: float
    slos: bool = False
    open_loop: bool = False
    ok: int = 0
    errors: int = 0
    ttft: Histogram | None = None

    def per_s(self, n: float) -> float:
        """``n`` per second of the span (0 for an empty span)."""
        return n / self.span_s if self.span_s > 0 else 0.0


class Figures(Protocol):
    """A part's figures over a span: frozen, nothing rounded (``to_dict`` rounds, as every writer does)."""

    key: ClassVar[str]

    def to_dict(self) -> dict[str, Json]: ...

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self: ...

    def console_lines(self, users_max: int) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Exported:
    """One Prometheus counter a part exposes per class: ``llmload_<name>``, its help, its value now."""

    name: str
    help: str
    value: Callable[[Any], float]
    slo_only: bool = False  # only for runs with SLOs


class Part(Protocol):
    """One group of per-class figures (module docstring). ``key``: its wire and summary-part key;
    ``order``: its place among the parts (summary keys, console lines, exported counters)."""

    key: ClassVar[str]
    order: ClassVar[int]
    figures: ClassVar[type[Figures]]
    exported: ClassVar[tuple[Exported, ...]]

    def add(self, rec: RequestRecord, seen: Seen) -> None: ...

    def merge(self, other: Self) -> None: ...

    @property
    def empty(self) -> bool: ...

    def to_wire(self) -> Mapping[str, Any]: ...

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Self: ...

    def result(self, ctx: Context) -> Figures: ...
