"""The stream loop over recorded transcripts, with the body cut into reads at random places.

Real sockets deliver an SSE stream in arbitrary pieces (an event split across reads,
several events in one read). Whatever the cut, the loop must see exactly the events of
the transcript; and events that arrived in one read share that read's stamp.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from llmload.adapters import get_adapter_class
from llmload.adapters.base import AdapterConfig, Framing, StreamState
from llmload.errors import StreamError
from llmload.metrics.record import RequestRecord
from llmload.users.stream import consume

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
SSE = sorted(p for api in ("openai-chat", "openai-completions") for p in (FIXTURES / api).glob("*.sse"))


class PiecesReader:
    """Stands in for BodyReader: hands out the body in the given pieces."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = list(pieces)

    def read_some(self) -> bytes:
        return self._pieces.pop(0) if self._pieces else b""

    def readline(self) -> bytes:  # the sseclient path reads lines
        raise AssertionError("the fast SSE path must not read line by line")


def cut(body: bytes, rng: random.Random) -> list[bytes]:
    points = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(1, 40))))
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]


@pytest.mark.parametrize("path", SSE, ids=[f"{p.parent.name}/{p.stem}" for p in SSE])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_cut_of_a_transcript_gives_its_events(path, seed):
    expect = json.loads(path.with_suffix(".expect.json").read_text())
    adapter = get_adapter_class(path.parent.name)(AdapterConfig())
    body = path.read_bytes()
    rec, state = RequestRecord("c", 1, 10), StreamState()
    error = None
    try:
        done = consume(Framing.SSE, PiecesReader(cut(body, random.Random(seed))), adapter, state, rec, "fast")
    except StreamError as e:
        error, done = e.kind, None
    assert error == expect["error"]
    if error is None:
        assert done == expect["done"]
        assert rec.counted_tokens == expect["tokens_sum"]
        assert state.finish_reason == expect["finish_reason"]
        assert state.usage_completion_tokens == expect["usage_completion_tokens"]


def test_events_that_arrive_together_share_one_stamp():
    ev = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    adapter = get_adapter_class("openai-chat")(AdapterConfig())
    rec = RequestRecord("c", 1, 10)
    consume(Framing.SSE, PiecesReader([ev * 3, ev, b"data: [DONE]\n\n"]), adapter, StreamState(), rec, "fast")
    assert len(rec.chunk_ns) == 4
    assert rec.chunk_ns[0] == rec.chunk_ns[1] == rec.chunk_ns[2] <= rec.chunk_ns[3]
