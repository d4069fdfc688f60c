"""The contract every registered part keeps (metrics/parts/contract.py): it counts, merges by addition, travels as
primitives and gives figures that read back from their own summary keys."""

from __future__ import annotations

import orjson
import pytest

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.histogram import Histogram
from llmload.metrics.parts import parts
from llmload.metrics.parts.contract import Context
from llmload.metrics.parts.outcomes import Outcomes
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import seen_of
from llmload.workload.agent import AgentTurn, ToolCall

MS = 1_000_000


def _rec(i: int) -> RequestRecord:
    """A mixed bag: ok (some reasoned, from usage, cached, with server timing, in a conversation), errors with a
    Retry-After, requests cut after their first token, reconnects and buffered jumps."""
    r = RequestRecord("c", input_tokens=100 + i, max_tokens=8)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (40 + i + k * 5) * MS for k in range(8)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, 100 + i if i % 3 == 0 else None, None)
    r.reconnects = i % 4 == 0
    r.buffered_token_jumps = i % 5 == 0
    r.turn = i % 12
    r.inputs = 4 if i % 6 == 1 else 0  # an embeddings request of 4 texts
    r.images, r.request_bytes = (2, 90_000) if i % 4 == 2 else (0, 300)  # an image class's request: 2 images
    if i % 3 == 1:  # an agent class's turn: a tool call or an answer, after a tool wait, some the session's last
        r.agent = AgentTurn(r.start_ns - 500 * MS if i % 2 else 0, 300 + i, last=i % 4 == 0, waited_s=0.5 * (i % 2))
        r.agent.calls = (ToolCall("c", "search", "{}"),) if i % 5 < 3 else None
    r.outcome = ("ok", "ok", "ok", "error", "interrupted")[i % 5]
    if r.outcome == "error":
        r.error_kind, r.error_message, r.retry_after_s = "http_429", "slow down", 1.5 if i % 2 else None
        r.output_tokens = 0
    if r.outcome == "ok":
        r.reasoning_tokens, r.reasoning_tokens_from_usage = (i % 3) * 10, i % 2 == 0
        r.cached_prompt_tokens = 64 if i % 2 else None
        r.finish_reason = "length" if i % 7 == 0 else "stop"
        if i % 3:
            r.server_timing, r.server_queue_ms, r.server_prefill_ms, r.server_decode_ms = "vllm", 10.0 + i, 20.0, 5.0
    return r


RECORDS = [_rec(i) for i in range(60)]
MISSED = [None if r.outcome != "ok" else (("ttft_ms",) if i % 2 else ()) for i, r in enumerate(RECORDS)]


def _ctx(core: Outcomes) -> Context:
    c = core.counters
    return Context(30.0, slos=True, open_loop=False, ok=c["ok"], errors=c["errors"], ttft=core.hist["ttft"])


def _filled(kind, records=RECORDS, missed=MISSED):
    part, core = kind(), Outcomes()
    for r, m in zip(records, missed, strict=True):
        seen = seen_of(r, m)
        part.add(r, seen)
        core.add(r, seen)
    return part, core


def test_the_registry_holds_every_part_once_in_order():
    keys = [p.key for p in parts()]
    assert len(keys) == len(set(keys)) and Outcomes.key not in keys
    assert {"reconnects", "reasoning", "phases", "goodput", "backoff", "prefix_cache", "prompt_usage", "turns", "agent"} <= set(keys)
    assert [p.order for p in parts()] == sorted(p.order for p in parts())
    assert all(p.figures.key == p.key for p in parts())  # one key: the wire's, the figures'


@pytest.mark.parametrize("kind", parts(), ids=lambda p: p.key)
def test_a_part_merged_from_halves_gives_the_figures_of_one(kind):
    one, core = _filled(kind)
    a, _ = _filled(kind, RECORDS[::2], MISSED[::2])
    b, _ = _filled(kind, RECORDS[1::2], MISSED[1::2])
    a.merge(b)
    assert a.result(_ctx(core)).to_dict() == one.result(_ctx(core)).to_dict()


@pytest.mark.parametrize("kind", parts(), ids=lambda p: p.key)
def test_a_part_travels_as_primitives_and_arrives_whole(kind):
    part, core = _filled(kind)
    assert kind().empty and not part.empty  # these records touch every part
    wire = orjson.loads(orjson.dumps(part.to_wire()))  # primitives only (msgpack takes the same)
    back = kind.from_wire(wire)
    assert back.result(_ctx(core)).to_dict() == part.result(_ctx(core)).to_dict()


@pytest.mark.parametrize("kind", parts(), ids=lambda p: p.key)
def test_figures_read_back_from_their_own_summary_keys(kind):
    part, core = _filled(kind)
    figures = part.result(_ctx(core))
    d = orjson.loads(orjson.dumps(figures.to_dict()))
    assert kind.figures.from_dict(d).to_dict() == d
    empty = kind.figures()  # a summary without the keys (older, or the part had nothing): empty figures
    assert kind.figures.from_dict({}).to_dict() == empty.to_dict()
    assert all(isinstance(line, str) for line in figures.console_lines(users_max=4))


@pytest.mark.parametrize("kind", parts(), ids=lambda p: p.key)
def test_a_part_exports_counters_that_never_go_backwards(kind):
    part, _ = _filled(kind, RECORDS[:30], MISSED[:30])
    more, _ = _filled(kind, RECORDS[30:], MISSED[30:])
    before = [e.value(part) for e in kind.exported]
    part.merge(more)
    assert all(after >= b for after, b in zip((e.value(part) for e in kind.exported), before, strict=True))


def test_the_goodput_figures_are_there_only_when_the_run_judged_slos():
    part, core = _filled(parts()[[p.key for p in parts()].index("goodput")])
    judged = part.result(_ctx(core))
    assert judged.to_dict()["goodput"]["good_requests"] == part.good > 0
    unjudged = part.result(Context(30.0, ok=core.counters["ok"], ttft=Histogram()))
    assert unjudged.to_dict() == {}
