"""The core part of a class's statistics: outcomes, tokens, errors and the latency histograms.

:class:`Outcomes` counts every request by outcome (``requests = ok + errors + interrupted``),
the tokens of successful ones (``output_tokens``, ``input_tokens``, and how many took their
output count from usage), the tokens received by requests that then failed or were cut
(``partial_output_tokens``), the stream events that carried more than one token
(``buffered_token_jumps``, any outcome), errors by kind with one example message each (the
first seen: merging keeps the one already there), and one histogram per latency metric
(:data:`~llmload.metrics.definitions.METRICS`, successful requests; TTFT also interrupted ones
after their first token) plus :data:`CLIENT_WAIT` (open loop: every sent request).

Its figures are the :class:`~llmload.results.model.Stats` fields themselves (built in
:mod:`llmload.results.build`): every other figure is a part of its own (:mod:`llmload.metrics.parts`).
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, TypedDict

from llmload.metrics.definitions import METRICS, client_wait_s, itl_s, reasoning_s, ttfo_s
from llmload.metrics.histogram import Histogram, HistogramWire
from llmload.metrics.parts.contract import Exported, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["CLIENT_WAIT", "COUNTERS", "Outcomes", "OutcomesWire"]

#: The open-loop histogram beside :data:`~llmload.metrics.definitions.METRICS`: client wait
#: (actual − intended send) of every sent request, whatever its outcome; empty in a closed loop.
CLIENT_WAIT = "client_wait"

#: ``output_tokens``/``input_tokens`` cover successful requests; ``output_tokens + partial_output_tokens``
#: is every output token that arrived.
COUNTERS = (
    "requests",
    "ok",
    "errors",
    "interrupted",
    "output_tokens",
    "input_tokens",
    "output_tokens_from_usage",  # successful requests whose output count came from usage
    "partial_output_tokens",  # tokens received by requests that then failed or were cut
    "buffered_token_jumps",  # events that carried k > 1 tokens (a usage jump), any outcome
)


class OutcomesWire(TypedDict, total=False):
    h: dict[str, HistogramWire]  # metric → histogram (non-empty ones)
    c: dict[str, int]  # counter → value (non-zero ones)
    e: dict[str, int]  # error kind → count
    x: dict[str, str]  # error kind → first message


class Outcomes:
    """Outcomes, tokens, errors and latency histograms of one class (module docstring)."""

    __slots__ = ("counters", "errors_by_kind", "errors_examples", "hist")
    key: ClassVar[str] = "outcomes"
    order: ClassVar[int] = 0
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("output_tokens", "Output tokens of successful requests (usage when sent, else counted)",
                 lambda p: p.counters["output_tokens"]),
        Exported("input_tokens", "Prompt tokens of successful requests", lambda p: p.counters["input_tokens"]),
        Exported("partial_output_tokens", "Tokens received by requests that then failed or were interrupted",
                 lambda p: p.counters["partial_output_tokens"]),
        Exported("buffered_token_jumps",
                 "Stream events that carried more than one token (the usage count jumped): why ITL looks coarse",
                 lambda p: p.counters["buffered_token_jumps"]),
    )  # fmt: skip

    def __init__(self) -> None:
        self.hist: dict[str, Histogram] = {m: Histogram() for m in (*METRICS, CLIENT_WAIT)}
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.errors_by_kind: Counter[str] = Counter()
        self.errors_examples: dict[str, str] = {}  # kind -> the first message seen

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        c = self.counters
        c["requests"] += 1
        if rec.buffered_token_jumps:
            c["buffered_token_jumps"] += rec.buffered_token_jumps
        if rec.intended_ns:  # open loop: the wait before the send, any outcome
            wait = client_wait_s(rec)
            if wait is not None:
                self.hist[CLIENT_WAIT].record(wait)
        if seen.ttft is not None:  # successful, or interrupted after its first token
            self.hist["ttft"].record(seen.ttft)
        if rec.outcome == "ok":
            self._add_ok(rec, seen)
            return
        c["partial_output_tokens"] += rec.output_tokens
        if rec.outcome != "error":
            c["interrupted"] += 1
            return
        c["errors"] += 1
        kind = rec.error_kind or "unknown"
        self.errors_by_kind[kind] += 1
        if kind not in self.errors_examples:
            self.errors_examples[kind] = rec.error_message or ""

    def _add_ok(self, rec: RequestRecord, seen: Seen) -> None:
        c, h = self.counters, self.hist
        c["ok"] += 1
        c["output_tokens"] += rec.output_tokens
        c["input_tokens"] += rec.input_tokens
        c["output_tokens_from_usage"] += rec.output_tokens_from_usage
        h["itl"].record_many(itl_s(rec))
        if seen.tpot is not None:
            h["tpot"].record(seen.tpot)
        h["e2e"].record(seen.e2e)
        ttfo = ttfo_s(rec)
        if ttfo is not None:
            h["ttfo"].record(ttfo)
        reasoning = reasoning_s(rec)
        if reasoning is not None:
            h["reasoning"].record(reasoning)

    def merge(self, other: Outcomes) -> None:
        for m, h in other.hist.items():
            self.hist[m].merge(h)
        for k, v in other.counters.items():
            self.counters[k] = self.counters.get(k, 0) + v
        self.errors_by_kind.update(other.errors_by_kind)
        for kind, message in other.errors_examples.items():
            self.errors_examples.setdefault(kind, message)

    @property
    def empty(self) -> bool:
        return not any(self.counters.values())

    def to_wire(self) -> OutcomesWire:
        return {
            "h": {m: h.to_wire() for m, h in self.hist.items() if h.count},
            "c": {k: v for k, v in self.counters.items() if v},
            "e": dict(self.errors_by_kind),
            "x": dict(self.errors_examples),
        }

    @classmethod
    def from_wire(cls, wire: OutcomesWire) -> Outcomes:
        s = cls()
        for m, hw in wire.get("h", {}).items():
            s.hist[m] = Histogram.from_wire(hw)
        for k, v in wire.get("c", {}).items():
            s.counters[k] = int(v)
        s.errors_by_kind.update({k: int(v) for k, v in wire.get("e", {}).items()})
        s.errors_examples.update({str(k): str(v) for k, v in wire.get("x", {}).items()})
        return s
