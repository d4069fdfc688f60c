"""Per-process recording of finished requests into mergeable statistics.

:class:`ClassStats` holds, for one request class, its core (:class:`~llmload.metrics.parts.outcomes.Outcomes`:
requests by outcome, tokens, errors by kind with one example each, a histogram per latency
metric) and one instance of every part of :mod:`llmload.metrics.parts` (reconnects, reasoning,
phases, goodput, backoff, prefix cache, prompt sizes, conversation turns, ...). Per finished
request it computes what the parts share once (:class:`~llmload.metrics.parts.contract.Seen`: TTFT,
TPOT, E2E, the SLOs missed) and hands the record to each; it merges part by part and travels as
``{part key: that part's wire}`` (empty parts left off). :class:`MetricSet` maps class name →
ClassStats; it merges by addition and travels as a dict of those (``to_wire``/``from_wire``),
which is what workers send to the master.

:class:`Recorder` is the one listener that turns each finished
:class:`~llmload.metrics.record.RequestRecord` into statistics. It keeps a *pending* set
(since the last :meth:`Recorder.drain`) and a *drained* cumulative set, so the same
process can both ship deltas and read its own totals. Records that started in the steady
window of a load step also go into that step's own :class:`MetricSet`
(:meth:`Recorder.drain_steps`), so ramps and warm-ups never blur a step's figures.

**SLOs** (:meth:`Recorder.set_slos`): when the run has any, each successful request is
judged once, as it is recorded (:func:`~llmload.metrics.definitions.slo_missed`), and the
goodput part (:mod:`llmload.metrics.parts.goodput`) counts it good or missed. Without SLOs
that part stays empty (and never travels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

from llmload.metrics.definitions import e2e_s, slo_missed, tpot_s, ttft_s
from llmload.metrics.histogram import Histogram
from llmload.metrics.parts import parts
from llmload.metrics.parts.contract import Part, Seen
from llmload.metrics.parts.outcomes import CLIENT_WAIT, Outcomes
from llmload.metrics.parts.phases import PhaseStats
from llmload.metrics.parts.turns import Turns, TurnStats
from llmload.metrics.parts.waits import Backoff
from llmload.metrics.record import RequestRecord
from llmload.metrics.slo import SLO

__all__ = ["CLIENT_WAIT", "ClassStats", "ClassStatsWire", "MetricSet", "MetricSetWire", "Recorder", "seen_of"]

#: One class on the wire: part key → that part's own wire dict (a TypedDict per part; empty parts left off).
ClassStatsWire = dict[str, Mapping[str, object]]
#: A :class:`MetricSet` on the wire: class name → its :data:`ClassStatsWire`.
MetricSetWire = dict[str, ClassStatsWire]


def seen_of(rec: RequestRecord, missed: tuple[str, ...] | None = None) -> Seen:
    """What every part shares about ``rec``, computed once: TTFT of a successful request or of one cut by the end
    of the test after its first token (its user saw that wait), TPOT and E2E of a successful one."""
    if rec.outcome == "ok":
        return Seen(ttft_s(rec), tpot_s(rec), e2e_s(rec), missed)
    if rec.outcome == "interrupted":
        return Seen(ttft_s(rec), missed=missed)
    return Seen(missed=missed)


class ClassStats:
    """The core and every part of one request class (module docstring)."""

    __slots__ = ("core", "parts")

    def __init__(self) -> None:
        self.core = Outcomes()
        self.parts: dict[str, Part] = {p.key: p() for p in parts()}

    def add(self, rec: RequestRecord, missed: tuple[str, ...] | None = None) -> None:
        """Count ``rec``. ``missed``: the SLOs a successful request missed (:func:`slo_missed`; () = good),
        None when the run has no SLOs."""
        self.add_seen(rec, seen_of(rec, missed))

    def add_seen(self, rec: RequestRecord, seen: Seen) -> None:
        self.core.add(rec, seen)
        for p in self.parts.values():
            p.add(rec, seen)

    def merge(self, other: ClassStats) -> None:
        self.core.merge(other.core)
        for key, p in other.parts.items():
            self.parts[key].merge(p)

    def add_backoff(self, seconds: float) -> None:
        cast(Backoff, self.parts[Backoff.key]).add_wait(seconds)

    @property
    def empty(self) -> bool:
        """Nothing counted (a backoff alone, after an error already drained, is something)."""
        return self.core.empty and all(p.empty for p in self.parts.values())

    # Read-only views for the live readers (web UI, coordinator, warm-up): the core's histograms and errors,
    # and every counter under its name.
    @property
    def hist(self) -> dict[str, Histogram]:
        return self.core.hist

    @property
    def errors_by_kind(self) -> Counter[str]:
        return self.core.errors_by_kind

    @property
    def errors_examples(self) -> dict[str, str]:
        return self.core.errors_examples

    @property
    def phases(self) -> PhaseStats:
        return cast(PhaseStats, self.parts[PhaseStats.key])

    @property
    def turns(self) -> dict[int, TurnStats]:
        return cast(Turns, self.parts[Turns.key]).turns

    @property
    def counters(self) -> dict[str, int]:
        """Every counter by name (the core's and each part's that names its own): a copy."""
        out = dict(self.core.counters)
        for p in self.parts.values():
            named = getattr(p, "counters", None)
            if named:
                out.update(named)
        return out

    def to_wire(self) -> ClassStatsWire:
        out: ClassStatsWire = {}
        if not self.core.empty:
            out[Outcomes.key] = self.core.to_wire()
        for key, p in self.parts.items():
            if not p.empty:
                out[key] = p.to_wire()
        return out

    @classmethod
    def from_wire(cls, wire: Mapping[str, Mapping[str, Any]]) -> ClassStats:
        s = cls()
        for key, w in wire.items():
            if key == Outcomes.key:
                s.core = Outcomes.from_wire(cast(Any, w))
            elif key in s.parts:
                s.parts[key] = type(s.parts[key]).from_wire(w)
        return s


class MetricSet:
    """Class name → :class:`ClassStats`; merge = addition."""

    __slots__ = ("classes",)

    def __init__(self) -> None:
        self.classes: dict[str, ClassStats] = {}

    def stats(self, class_name: str) -> ClassStats:
        s = self.classes.get(class_name)
        if s is None:
            s = self.classes[class_name] = ClassStats()
        return s

    def add(self, rec: RequestRecord, missed: tuple[str, ...] | None = None) -> None:
        self.stats(rec.class_name).add(rec, missed)

    def add_seen(self, rec: RequestRecord, seen: Seen) -> None:
        self.stats(rec.class_name).add_seen(rec, seen)

    def merge(self, other: MetricSet) -> None:
        for name, s in other.classes.items():
            self.stats(name).merge(s)

    def overall(self) -> ClassStats:
        """All classes merged."""
        total = ClassStats()
        for s in self.classes.values():
            total.merge(s)
        return total

    def copy(self) -> MetricSet:
        m = MetricSet()
        m.merge(self)
        return m

    @property
    def empty(self) -> bool:
        return all(s.empty for s in self.classes.values())

    def to_wire(self) -> MetricSetWire:
        return {name: s.to_wire() for name, s in self.classes.items() if not s.empty}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> MetricSet:
        m = cls()
        for name, sw in wire.items():
            m.classes[name] = ClassStats.from_wire(sw)
        return m


class Recorder:
    """Turns finished records into statistics for this process."""

    def __init__(self) -> None:
        self._pending = MetricSet()
        self._drained = MetricSet()
        self._pending_steps: dict[int, MetricSet] = {}
        self._slos: dict[str, SLO] | None = None  # None: no SLOs in this run
        self._default_slo = SLO()

    def set_slos(self, slos: Mapping[str, SLO] | None, default: SLO | None = None) -> None:
        """The SLOs of this run (:func:`~llmload.metrics.slo.class_slos`; None: no SLOs, nothing judged),
        and ``--slo`` for a class not listed there."""
        self._slos = dict(slos) if slos is not None else None
        self._default_slo = default or SLO()

    @property
    def judges_slos(self) -> bool:
        return self._slos is not None

    def add(self, rec: RequestRecord) -> None:
        """Listener for finished requests (called once per request, never per token)."""
        slos = self._slos
        missed = None
        if slos is not None and rec.outcome == "ok":  # judged once, here
            missed = slo_missed(rec, slos.get(rec.class_name, self._default_slo))
        seen = seen_of(rec, missed)
        self._pending.add_seen(rec, seen)
        if rec.step is not None:
            step = self._pending_steps.get(rec.step)
            if step is None:
                step = self._pending_steps[rec.step] = MetricSet()
            step.add_seen(rec, seen)

    def add_backoff(self, rec: RequestRecord, seconds: float) -> None:
        """A user waited ``seconds`` after the failed ``rec`` (counted in its class, and its step)."""
        self._pending.stats(rec.class_name).add_backoff(seconds)
        if rec.step is not None:
            step = self._pending_steps.get(rec.step)
            if step is None:
                step = self._pending_steps[rec.step] = MetricSet()
            step.stats(rec.class_name).add_backoff(seconds)

    def drain_steps(self) -> dict[str, MetricSetWire]:
        """Wire form of the per-step statistics since the last call: ``{str(step): MetricSet wire}``."""
        pending, self._pending_steps = self._pending_steps, {}
        return {str(i): m.to_wire() for i, m in pending.items()}

    def drain(self) -> MetricSetWire:
        """Wire form of everything recorded since the last drain; folds it into the totals."""
        pending, self._pending = self._pending, MetricSet()
        self._drained.merge(pending)
        return pending.to_wire()

    def snapshot(self) -> MetricSet:
        """Everything this process recorded so far (a copy)."""
        snap = self._drained.copy()
        snap.merge(self._pending)
        return snap

    def reset(self) -> None:
        self._pending = MetricSet()
        self._drained = MetricSet()
        self._pending_steps = {}
