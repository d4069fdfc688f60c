"""Per-process recording of finished requests into mergeable statistics.

:class:`ClassStats` holds, for one request class, a :class:`Histogram` per latency metric
(TTFT, ITL, TPOT, E2E, TTFO, reasoning time; successful requests only, except that TTFT
also holds requests interrupted by the end of the test after their first token: that wait
is what the user saw) and the counters (requests by outcome, tokens, reasoning, errors by
kind, time users spent backing off after errors), one example message per error kind (the
first seen: merging keeps the one already there), the phases of its successful requests
(:class:`~llmload.metrics.phases.PhaseStats`), and for a conversation class its per-turn
statistics (:mod:`llmload.metrics.turns`, ``turns``: turn key → TurnStats). :class:`MetricSet` maps class name → ClassStats; it merges by
addition and travels as a dict of primitives (``to_wire``/``from_wire``), which is what
workers send to the master.

:class:`Recorder` is the one listener that turns each finished
:class:`~llmload.metrics.record.RequestRecord` into statistics. It keeps a *pending* set
(since the last :meth:`Recorder.drain`) and a *drained* cumulative set, so the same
process can both ship deltas and read its own totals. Records that started in the steady
window of a load step also go into that step's own :class:`MetricSet`
(:meth:`Recorder.drain_steps`), so ramps and warm-ups never blur a step's figures.

**SLOs** (:meth:`Recorder.set_slos`): when the run has any, each successful request is
judged once, as it is recorded (:func:`~llmload.metrics.definitions.slo_missed`): a good
one adds to ``good`` and ``good_output_tokens``, a miss to ``slo_missed_<key>`` for each SLO
it missed. These are counters like the others, so they merge worker → master by addition.
Without SLOs they stay 0 (and never travel: zero counters are left off the wire).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from llmload.metrics.definitions import (
    METRICS,
    client_wait_s,
    e2e_s,
    hidden_reasoning,
    itl_s,
    reasoning_s,
    slo_missed,
    tpot_s,
    ttfo_s,
    ttft_s,
)
from llmload.metrics.histogram import Histogram
from llmload.metrics.phases import PhaseStats
from llmload.metrics.record import RequestRecord
from llmload.metrics.slo import SLO, SLO_KEYS
from llmload.metrics.turns import TurnStats, turn_key

__all__ = ["CLIENT_WAIT", "COUNTERS", "ClassStats", "MetricSet", "Recorder"]

#: The open-loop histogram beside :data:`~llmload.metrics.definitions.METRICS`: client wait
#: (actual − intended send) of every sent request, whatever its outcome; empty in a closed loop.
CLIENT_WAIT = "client_wait"

#: Integer counters kept per class. ``output_tokens``/``input_tokens`` cover successful
#: requests; ``output_tokens + partial_output_tokens`` is every output token that arrived.
COUNTERS = (
    "requests",
    "ok",
    "errors",
    "interrupted",
    "output_tokens",
    "input_tokens",
    "output_tokens_from_usage",  # successful requests whose output count came from usage
    "partial_output_tokens",  # tokens received by requests that then failed or were cut
    "reconnects",  # requests sent again on a fresh connection (stale keep-alive), any outcome
    "reasoning_tokens",  # reasoning tokens of successful requests (usage when sent, else counted)
    "reasoning_from_usage",  # successful requests with reasoning tokens > 0, the count from usage
    "reasoning_counted",  # successful requests with reasoning tokens > 0, counted from the stream
    "hidden_reasoning",  # successful requests whose usage says reasoning tokens the stream never showed
    "buffered_token_jumps",  # events that carried k > 1 tokens (a usage jump), any outcome
    "good",  # successful requests that met every SLO of their class (runs with SLOs only)
    "good_output_tokens",  # their output tokens
    *(f"slo_missed_{k}" for k in SLO_KEYS),  # successful requests that missed this SLO
    "backoffs",  # waits after a failed request (--error-backoff)
    "backoff_ms",  # user-time spent in those waits, milliseconds
    "retry_afters",  # failed requests whose answer (429/503) carried a readable Retry-After
    "retry_after_ms",  # ... the waits they asked for, milliseconds
    "cached_prompt_tokens",  # successful requests: prompt tokens the server served from its prefix cache
    "cache_stated_input_tokens",  # successful requests whose answer stated cached_tokens: their prompt tokens
    "usage_input_requests",  # successful requests whose prompt size came from usage
    "usage_input_tokens",  # ... their prompt tokens as the server counted them
    "usage_input_asked",  # ... their prompt tokens as llmload built them (the profile's, a dataset's estimate)
)


class ClassStats:
    """Histograms and counters of one request class (and of each turn, for a conversation class)."""

    __slots__ = ("counters", "errors_by_kind", "errors_examples", "hist", "phases", "turns")

    def __init__(self) -> None:
        self.hist: dict[str, Histogram] = {m: Histogram() for m in (*METRICS, CLIENT_WAIT)}
        self.phases = PhaseStats()
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.errors_by_kind: Counter[str] = Counter()
        self.errors_examples: dict[str, str] = {}  # kind -> the first message seen
        self.turns: dict[int, TurnStats] = {}

    def turn(self, key: int) -> TurnStats:
        t = self.turns.get(key)
        if t is None:
            t = self.turns[key] = TurnStats()
        return t

    def add(self, rec: RequestRecord, missed: tuple[str, ...] | None = None) -> None:
        """Count ``rec``. ``missed``: the SLOs a successful request missed (:func:`slo_missed`; () = good),
        None when the run has no SLOs."""
        c = self.counters
        c["requests"] += 1
        if rec.reconnects:
            c["reconnects"] += rec.reconnects
        if rec.buffered_token_jumps:
            c["buffered_token_jumps"] += rec.buffered_token_jumps
        if rec.intended_ns:  # open loop: the wait before the send, any outcome
            wait = client_wait_s(rec)
            if wait is not None:
                self.hist[CLIENT_WAIT].record(wait)
        if rec.outcome == "ok":
            c["ok"] += 1
            c["output_tokens"] += rec.output_tokens
            c["input_tokens"] += rec.input_tokens
            if rec.input_tokens_from_usage:
                c["usage_input_requests"] += 1
                c["usage_input_tokens"] += rec.input_tokens
                c["usage_input_asked"] += rec.asked_input_tokens
            c["output_tokens_from_usage"] += rec.output_tokens_from_usage
            if missed is not None:
                if not missed:
                    c["good"] += 1
                    c["good_output_tokens"] += rec.output_tokens
                for key in missed:
                    c[f"slo_missed_{key}"] += 1
            cached = rec.cached_prompt_tokens
            if cached is not None:
                c["cached_prompt_tokens"] += cached
                c["cache_stated_input_tokens"] += rec.input_tokens
            h = self.hist
            ttft = ttft_s(rec)
            if ttft is not None:
                h["ttft"].record(ttft)
            h["itl"].record_many(itl_s(rec))
            tpot = tpot_s(rec)
            if tpot is not None:
                h["tpot"].record(tpot)
            e2e = e2e_s(rec)
            h["e2e"].record(e2e)
            ttfo = ttfo_s(rec)
            if ttfo is not None:
                h["ttfo"].record(ttfo)
            reasoning = reasoning_s(rec)
            if reasoning is not None:
                h["reasoning"].record(reasoning)
            if rec.reasoning_tokens:
                self._add_reasoning(rec)
            self.phases.add(rec, ttft)
            if rec.turn:
                self.turn(turn_key(rec.turn)).add(True, ttft, tpot, e2e, rec.input_tokens, cached)
            return
        c["partial_output_tokens"] += rec.output_tokens
        ttft = None
        if rec.outcome == "error":
            c["errors"] += 1
            kind = rec.error_kind or "unknown"
            self.errors_by_kind[kind] += 1
            if kind not in self.errors_examples:
                self.errors_examples[kind] = rec.error_message or ""
            if rec.retry_after_s is not None:
                c["retry_afters"] += 1
                c["retry_after_ms"] += round(min(rec.retry_after_s, 86_400.0) * 1000)  # a day at most: a counter, no inf
        else:
            c["interrupted"] += 1
            ttft = ttft_s(rec)  # cut by the end of the test after its first token: the user saw that wait
            if ttft is not None:
                self.hist["ttft"].record(ttft)
        if rec.turn:
            self.turn(turn_key(rec.turn)).add(False, ttft, None, 0.0, 0, None)

    def _add_reasoning(self, rec: RequestRecord) -> None:
        """A successful request that reasoned (``reasoning_tokens > 0``, streamed or not)."""
        c = self.counters
        c["reasoning_tokens"] += rec.reasoning_tokens
        c["reasoning_from_usage" if rec.reasoning_tokens_from_usage else "reasoning_counted"] += 1
        if hidden_reasoning(rec):
            c["hidden_reasoning"] += 1

    def merge(self, other: ClassStats) -> None:
        for m, h in other.hist.items():
            self.hist[m].merge(h)
        for k, v in other.counters.items():
            self.counters[k] = self.counters.get(k, 0) + v
        self.errors_by_kind.update(other.errors_by_kind)
        self.phases.merge(other.phases)
        for key, t in other.turns.items():
            self.turn(key).merge(t)
        for kind, message in other.errors_examples.items():
            self.errors_examples.setdefault(kind, message)

    def add_backoff(self, seconds: float) -> None:
        self.counters["backoffs"] += 1
        self.counters["backoff_ms"] += round(seconds * 1000)

    @property
    def empty(self) -> bool:
        """Nothing counted (a backoff alone, after an error already drained, is something)."""
        return not any(self.counters.values())

    def to_wire(self) -> dict[str, Any]:
        out = {
            "h": {m: h.to_wire() for m, h in self.hist.items() if h.count},
            "c": {k: v for k, v in self.counters.items() if v},
            "e": dict(self.errors_by_kind),
            "x": dict(self.errors_examples),
        }
        if not self.phases.empty:
            out["p"] = self.phases.to_wire()
        if self.turns:
            out["t"] = {str(k): t.to_wire() for k, t in self.turns.items()}
        return out

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ClassStats:
        s = cls()
        for m, hw in wire.get("h", {}).items():
            s.hist[m] = Histogram.from_wire(hw)
        for k, v in wire.get("c", {}).items():
            s.counters[k] = int(v)
        s.errors_by_kind.update({k: int(v) for k, v in wire.get("e", {}).items()})
        if "p" in wire:
            s.phases = PhaseStats.from_wire(wire["p"])
        s.errors_examples.update({str(k): str(v) for k, v in wire.get("x", {}).items()})
        for k, tw in wire.get("t", {}).items():
            s.turns[int(k)] = TurnStats.from_wire(tw)
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

    def to_wire(self) -> dict[str, Any]:
        return {name: s.to_wire() for name, s in self.classes.items() if not s.empty}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> MetricSet:
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
        self._pending.add(rec, missed)
        if rec.step is not None:
            step = self._pending_steps.get(rec.step)
            if step is None:
                step = self._pending_steps[rec.step] = MetricSet()
            step.add(rec, missed)

    def add_backoff(self, rec: RequestRecord, seconds: float) -> None:
        """A user waited ``seconds`` after the failed ``rec`` (counted in its class, and its step)."""
        self._pending.stats(rec.class_name).add_backoff(seconds)
        if rec.step is not None:
            step = self._pending_steps.get(rec.step)
            if step is None:
                step = self._pending_steps[rec.step] = MetricSet()
            step.stats(rec.class_name).add_backoff(seconds)

    def drain_steps(self) -> dict[str, Any]:
        """Wire form of the per-step statistics since the last call: ``{str(step): MetricSet wire}``."""
        pending, self._pending_steps = self._pending_steps, {}
        return {str(i): m.to_wire() for i, m in pending.items()}

    def drain(self) -> dict[str, Any]:
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
