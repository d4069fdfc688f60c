"""Embeddings per class: texts embedded and their input tokens per second (``--api openai-embeddings``).

Over successful requests that carried a batch of texts (``RequestRecord.inputs`` > 0): how many,
their texts and their input tokens (the server's ``usage.prompt_tokens`` when it states it). Summary
key ``embeddings`` (only in a class that sent such requests: a chat run's keys do not change)::

    "embeddings": {"requests": 16, "inputs": 64, "inputs_per_request": 4.0, "inputs_per_s": 12.8,
                   "input_tokens": 13352, "input_tokens_per_s": 2670.4}

An embeddings request is one JSON answer: its latency is its E2E (``e2e_ms``; its ``ttft_ms`` is the
same time, to the whole answer), it has no TPOT/ITL and 0 output tokens (docs/embeddings.md).
Counters ``llmload_embedding_inputs`` / ``llmload_embedding_input_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.latency import rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["EmbeddingFigures", "Embeddings", "EmbeddingsWire"]


class EmbeddingsWire(TypedDict):
    n: int  # successful embeddings requests
    i: int  # texts they embedded
    t: int  # their input tokens


@dataclass(frozen=True, slots=True)
class EmbeddingFigures:
    key: ClassVar[str] = "embeddings"
    requests: int = 0
    inputs: int = 0
    input_tokens: int = 0
    inputs_per_s: float = 0.0
    input_tokens_per_s: float = 0.0

    def to_dict(self) -> dict[str, Json]:
        if not self.requests:
            return {}
        return {"embeddings": {"requests": self.requests, "inputs": self.inputs,
                               "inputs_per_request": rnd(self.inputs / self.requests, 2),
                               "inputs_per_s": rnd(self.inputs_per_s), "input_tokens": self.input_tokens,
                               "input_tokens_per_s": rnd(self.input_tokens_per_s)}}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EmbeddingFigures:
        e = d.get("embeddings") or {}
        return cls(int(e.get("requests") or 0), int(e.get("inputs") or 0), int(e.get("input_tokens") or 0),
                   float(e.get("inputs_per_s") or 0.0), float(e.get("input_tokens_per_s") or 0.0))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        if not self.requests:
            return []
        return [f"embeddings: {self.inputs_per_s:.1f} inputs/s ({self.inputs / self.requests:g} per request), "
                f"{self.input_tokens_per_s:.0f} input tokens/s; latency = E2E (one JSON answer: no TPOT/ITL)"]  # fmt: skip


class Embeddings:
    __slots__ = ("input_tokens", "inputs", "requests")
    key: ClassVar[str] = "embeddings"
    order: ClassVar[int] = 85
    figures: ClassVar[type[EmbeddingFigures]] = EmbeddingFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("embedding_inputs", "Texts embedded by successful /v1/embeddings requests", lambda p: p.inputs),
        Exported("embedding_input_tokens", "Input tokens of successful /v1/embeddings requests",
                 lambda p: p.input_tokens),
    )  # fmt: skip

    def __init__(self) -> None:
        self.requests = self.inputs = self.input_tokens = 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.inputs and rec.outcome == "ok":
            self.requests += 1
            self.inputs += rec.inputs
            self.input_tokens += rec.input_tokens

    def merge(self, other: Embeddings) -> None:
        self.requests += other.requests
        self.inputs += other.inputs
        self.input_tokens += other.input_tokens

    @property
    def empty(self) -> bool:
        return not self.requests

    def to_wire(self) -> EmbeddingsWire:
        return {"n": self.requests, "i": self.inputs, "t": self.input_tokens}

    @classmethod
    def from_wire(cls, wire: EmbeddingsWire) -> Embeddings:
        p = cls()
        p.requests, p.inputs, p.input_tokens = int(wire.get("n", 0)), int(wire.get("i", 0)), int(wire.get("t", 0))
        return p

    def result(self, ctx: Context) -> EmbeddingFigures:
        return EmbeddingFigures(self.requests, self.inputs, self.input_tokens, ctx.per_s(self.inputs),
                                ctx.per_s(self.input_tokens))  # fmt: skip


PART = Embeddings
