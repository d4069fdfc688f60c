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
from llmload.errors import MalformedChunk, StreamError, StreamFormatMismatch
from llmload.metrics.record import RequestRecord
from llmload.users.stream import consume

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
SSE = sorted(
    p
    for api in ("openai-chat", "openai-completions", "openai-responses", "anthropic-messages")
    for p in (FIXTURES / api).glob("*.sse")
)


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


NDJSON = sorted(FIXTURES.glob("*/*.ndjson"))


class GeventLikeReader(PiecesReader):
    """Also reads lines the way geventhttpclient's ``readline`` does: ``b""`` at the end of the
    body, whatever is buffered without a newline then lost (what BodyReader.readline returns)."""

    def __init__(self, pieces: list[bytes]) -> None:
        super().__init__(pieces)
        self._buf = b""

    def readline(self) -> bytes:
        while b"\n" not in self._buf:
            if not self._pieces:
                return b""
            self._buf += self._pieces.pop(0)
        line, _, self._buf = self._buf.partition(b"\n")
        return line + b"\n"


@pytest.mark.parametrize("path", NDJSON, ids=[f"{p.parent.name}/{p.stem}" for p in NDJSON])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_cut_of_an_ndjson_transcript_gives_its_events(path, seed):
    """The NDJSON loop over any cut, a last line without its newline included (issue 22, item 7:
    that line was dropped with its token, usage and finish reason)."""
    expect = json.loads(path.with_suffix(".expect.json").read_text())
    adapter = get_adapter_class(path.parent.name)(AdapterConfig())
    rec, state = RequestRecord("c", 1, 10), StreamState()
    reader = GeventLikeReader(cut(path.read_bytes(), random.Random(seed)))
    assert consume(Framing.NDJSON, reader, adapter, state, rec, "fast") is expect["done"]
    assert (len(rec.chunk_ns), rec.counted_tokens) == (expect["content_events"], expect["tokens_sum"])
    assert state.finish_reason == expect["finish_reason"]
    assert (state.usage_prompt_tokens, state.usage_completion_tokens) == (
        expect["usage_prompt_tokens"], expect["usage_completion_tokens"])  # fmt: skip
    assert state.text_chars == expect["text_chars"]


def test_ndjson_lines_that_arrive_together_share_one_stamp_and_the_last_keeps_its_read(monkeypatch):
    clock = iter(range(1000, 100_000, 1000))  # one stamp per read: 1000, 2000, ...
    monkeypatch.setattr("llmload.users.stream.perf_counter_ns", lambda: next(clock))
    pieces = [b'{"text":"a"}\n{"text":"b"}\n{"te', b'xt":"c"}\n', b'{"text":"d","finish_reason":"stop"}']
    adapter = get_adapter_class("stream")(AdapterConfig())
    rec, state = RequestRecord("c", 1, 10), StreamState()
    assert consume(Framing.NDJSON, PiecesReader(pieces), adapter, state, rec, "fast") is False
    assert rec.chunk_ns == [1000, 1000, 2000, 3000] and state.finish_reason == "stop"


@pytest.mark.parametrize(
    ("framing", "api", "body", "says", "was"),
    [
        (Framing.SSE, "openai-chat", "openai-responses/openai_text_completed.sse", "use --api openai-responses", None),
        (Framing.SSE, "anthropic-messages", "openai-chat/llamacpp_timings.sse", "use --api openai-chat", None),
        (Framing.SSE, "openai-chat", "stream/ollama_generate.ndjson", "use --stream-format ndjson --api stream", None),
        (Framing.NDJSON, "openai-chat", "openai-chat/llamacpp_timings.sse", "use --stream-format sse", MalformedChunk),
        (Framing.RAW, "openai-chat", "openai-chat/llamacpp_timings.sse", "use --stream-format sse", MalformedChunk),
    ],
)  # fmt: skip
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_answer_in_another_format_is_a_stream_format_mismatch(framing, api, body, says, was, seed):
    """Issue 22, item 11: these were empty_response (no content read) or malformed_chunk, the answer unnamed.

    The first read holds the server's first write (its first event or line), the rest is cut anywhere."""
    adapter = get_adapter_class(api)(AdapterConfig(stream_format=framing.value))
    raw = (FIXTURES / body).read_bytes()
    first = raw.index(b"\n\n" if body.endswith(".sse") else b"\n") + 2
    reader = PiecesReader([raw[:first], *cut(raw[first:], random.Random(seed))])
    with pytest.raises(StreamFormatMismatch, match=says) as caught:
        consume(framing, reader, adapter, StreamState(), RequestRecord("c", 1, 10), "fast")
    assert caught.value.kind == "stream_format_mismatch"
    assert caught.value.__cause__ is None if was is None else isinstance(caught.value.__cause__, was)


def test_a_first_read_that_shows_nothing_leaves_the_original_outcome():
    """Only the first read is looked at (nothing is kept per chunk): a fragment that tells nothing tells nothing."""
    raw = (FIXTURES / "openai-responses" / "openai_text_completed.sse").read_bytes()
    adapter = get_adapter_class("openai-chat")(AdapterConfig())
    rec = RequestRecord("c", 1, 10)
    consume(Framing.SSE, PiecesReader([raw[:20], raw[20:]]), adapter, StreamState(), rec, "fast")
    assert rec.chunk_ns == []  # empty_response, as before


def test_a_truly_empty_answer_is_left_to_the_empty_check():
    adapter = get_adapter_class("openai-chat")(AdapterConfig())
    rec = RequestRecord("c", 1, 10)
    assert consume(Framing.SSE, PiecesReader([b"data: [DONE]\n\n"]), adapter, StreamState(), rec, "fast") is True
    assert rec.chunk_ns == []  # the user's completeness check calls it empty_response


def test_events_that_arrive_together_share_one_stamp():
    ev = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    adapter = get_adapter_class("openai-chat")(AdapterConfig())
    rec = RequestRecord("c", 1, 10)
    consume(Framing.SSE, PiecesReader([ev * 3, ev, b"data: [DONE]\n\n"]), adapter, StreamState(), rec, "fast")
    assert len(rec.chunk_ns) == 4
    assert rec.chunk_ns[0] == rec.chunk_ns[1] == rec.chunk_ns[2] <= rec.chunk_ns[3]


def test_a_usage_jump_of_16_is_16_tokens_at_one_stamp_and_no_zero_gaps(monkeypatch):
    import itertools

    import orjson

    from llmload.metrics.definitions import itl_s, settle_token_counts, tpot_s

    clock = itertools.count(0, 7_000_000)  # the loop's clock: +7 ms per read, one read per event
    monkeypatch.setattr("llmload.users.stream.perf_counter_ns", lambda: next(clock))

    def ev(delta, n, finish=None):
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + orjson.dumps({"choices": [choice], "usage": {"completion_tokens": n}}) + b"\n\n"

    call = {"index": 0, "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    pieces = [ev({"role": "assistant", "content": ""}, 0), ev({"content": "a"}, 1), ev({"tool_calls": [call]}, 17),
              ev({"content": "b"}, 18), ev({}, 18, "stop"), b"data: [DONE]\n\n"]  # fmt: skip
    adapter = get_adapter_class("openai-chat")(AdapterConfig())
    rec, state = RequestRecord("c", 1, 18), StreamState()
    rec.start_ns = -1
    assert consume(Framing.SSE, PiecesReader(pieces), adapter, state, rec, "fast") is True
    assert rec.tokens_per_chunk() == [1, 16, 1]
    assert rec.buffered_token_jumps == 1
    gaps = itl_s(rec)
    assert len(gaps) == 2 and (gaps > 0).all()  # one gap per event: never 15 zero-length samples
    settle_token_counts(rec, None, None)  # usage lost: the stated counts still give every token
    assert rec.output_tokens == 18
    assert tpot_s(rec) == pytest.approx(0.014 / 17)
