"""Batched inputs per class: the texts of embeddings requests, the documents of rerank requests, per second.

Over successful requests that carried a batch of inputs (``RequestRecord.inputs`` > 0: ``--api
openai-embeddings`` texts, ``--api rerank`` documents): how many, their inputs and their input tokens (the
server's ``usage.prompt_tokens`` when it states it). Summary key ``inputs`` (only in a class that sent such
requests: a chat run's keys do not change)::

    "inputs": {"requests": 16, "inputs": 64, "inputs_per_request": 4.0, "inputs_per_s": 12.8,
               "input_tokens": 13352, "input_tokens_per_s": 2670.4}

Such a request is one JSON answer: its latency is its E2E (``e2e_ms``; its ``ttft_ms`` is the same time, to
the whole answer), it has no TPOT/ITL and 0 output tokens (docs/embeddings.md).
Counters ``llmload_batch_inputs`` / ``llmload_batch_input_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.latency import rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["BatchInputFigures", "BatchInputs", "BatchInputsWire"]


class BatchInputsWire(TypedDict):
    n: int  # successful requests with a batch of inputs
    i: int  # their inputs
    t: int  # their input tokens


@dataclass(frozen=True, slots=True)
class BatchInputFigures:
    key: ClassVar[str] = "inputs"
    requests: int = 0
    inputs: int = 0
    input_tokens: int = 0
    inputs_per_s: float = 0.0
    input_tokens_per_s: float = 0.0

    def to_dict(self) -> dict[str, Json]:
        if not self.requests:
            return {}
        return {"inputs": {"requests": self.requests, "inputs": self.inputs,
                           "inputs_per_request": rnd(self.inputs / self.requests, 2),
                           "inputs_per_s": rnd(self.inputs_per_s), "input_tokens": self.input_tokens,
                           "input_tokens_per_s": rnd(self.input_tokens_per_s)}}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BatchInputFigures:
        e = d.get("inputs") or {}
        return cls(int(e.get("requests") or 0), int(e.get("inputs") or 0), int(e.get("input_tokens") or 0),
                   float(e.get("inputs_per_s") or 0.0), float(e.get("input_tokens_per_s") or 0.0))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        if not self.requests:
            return []
        return [f"inputs: {self.inputs_per_s:.1f} inputs/s ({self.inputs / self.requests:g} per request), "
                f"{self.input_tokens_per_s:.0f} input tokens/s; latency = E2E (one JSON answer: no TPOT/ITL)"]  # fmt: skip


class BatchInputs:
    __slots__ = ("input_tokens", "inputs", "requests")
    key: ClassVar[str] = "inputs"
    order: ClassVar[int] = 85
    figures: ClassVar[type[BatchInputFigures]] = BatchInputFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("batch_inputs", "Inputs (embedded texts, reranked documents) of successful batched requests",
                 lambda p: p.inputs),
        Exported("batch_input_tokens", "Input tokens of successful batched requests", lambda p: p.input_tokens),
    )  # fmt: skip

    def __init__(self) -> None:
        self.requests = self.inputs = self.input_tokens = 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.inputs and rec.outcome == "ok":
            self.requests += 1
            self.inputs += rec.inputs
            self.input_tokens += rec.input_tokens

    def merge(self, other: BatchInputs) -> None:
        self.requests += other.requests
        self.inputs += other.inputs
        self.input_tokens += other.input_tokens

    @property
    def empty(self) -> bool:
        return not self.requests

    def to_wire(self) -> BatchInputsWire:
        return {"n": self.requests, "i": self.inputs, "t": self.input_tokens}

    @classmethod
    def from_wire(cls, wire: BatchInputsWire) -> BatchInputs:
        p = cls()
        p.requests, p.inputs, p.input_tokens = int(wire.get("n", 0)), int(wire.get("i", 0)), int(wire.get("t", 0))
        return p

    def result(self, ctx: Context) -> BatchInputFigures:
        return BatchInputFigures(self.requests, self.inputs, self.input_tokens, ctx.per_s(self.inputs),
                                 ctx.per_s(self.input_tokens))  # fmt: skip


PART = BatchInputs
