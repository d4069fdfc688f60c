"""Per-turn statistics: keys and labels, the tail merge, and merging across workers."""

from __future__ import annotations

import msgpack

from llmload.metrics.definitions import prefix_cache_hit_ratio, settle_token_counts
from llmload.metrics.parts.turns import TURN_LIMIT, turn_key, turn_label
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder

MS = 1_000_000


def turn_rec(turn: int, outcome="ok", ttft_ms=50, n=4, input_tokens=100, cached=None) -> RequestRecord:
    r = RequestRecord("chat", input_tokens=input_tokens, max_tokens=n)
    r.turn = turn
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + 5 * i) * MS for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS if n else r.start_ns + MS
    settle_token_counts(r, None, None)
    r.cached_prompt_tokens = cached
    r.outcome = outcome
    if outcome == "error":
        r.error_kind = "http_500"
    return r


def test_keys_and_labels_merge_the_tail():
    assert [turn_key(t) for t in (1, 2, TURN_LIMIT - 1, TURN_LIMIT, TURN_LIMIT + 7)] == [1, 2, 9, 10, 10]
    assert [turn_label(k) for k in (1, 9, 10)] == ["1", "9", "10+"]


def test_turns_are_kept_per_class_and_single_requests_have_none():
    rec = Recorder()
    for t in (1, 2, 2, 3, 12, 15):
        rec.add(turn_rec(t, cached=0 if t == 1 else 80))
    rec.add(turn_rec(2, "error", n=0))
    rec.add(turn_rec(3, "interrupted", ttft_ms=70, n=1))
    single = turn_rec(0)
    single.class_name = "q"
    rec.add(single)
    snap = rec.snapshot()
    assert snap.classes["q"].turns == {}
    turns = snap.classes["chat"].turns
    assert sorted(turns) == [1, 2, 3, TURN_LIMIT]
    assert [turns[k].counters["requests"] for k in (1, 2, 3, 10)] == [1, 3, 2, 2]
    assert [turns[k].counters["ok"] for k in (1, 2, 3, 10)] == [1, 2, 1, 2]
    assert turns[3].hist["ttft"].count == 2 and turns[3].hist["e2e"].count == 1  # TTFT also the cut one
    assert turns[2].counters["cached_prompt_tokens"] == 160 and turns[2].counters["cache_stated_input_tokens"] == 200
    c = snap.classes["chat"].counters
    assert c["cached_prompt_tokens"] == 5 * 80 and c["cache_stated_input_tokens"] == 6 * 100


def test_turns_merge_across_workers_like_one_process():
    workers, single = [Recorder(), Recorder()], Recorder()
    for i in range(30):
        r = turn_rec(1 + i % 4, ttft_ms=20 + 10 * (i % 4) + i % 3, cached=i)
        workers[i % 2].add(r)
        single.add(r)
    merged = MetricSet()
    for w in workers:
        merged.merge(MetricSet.from_wire(msgpack.unpackb(msgpack.packb(w.drain()), strict_map_key=False)))
    a, b = merged.classes["chat"].turns, single.snapshot().classes["chat"].turns
    assert sorted(a) == sorted(b) == [1, 2, 3, 4]
    for k in a:
        assert a[k].counters == b[k].counters
        assert a[k].hist["ttft"].percentiles([0.5, 0.99]) == b[k].hist["ttft"].percentiles([0.5, 0.99])


def test_hit_ratio_is_none_when_no_answer_stated_cached_tokens():
    assert prefix_cache_hit_ratio(0, 0) is None
    assert prefix_cache_hit_ratio(0, 500) == 0.0
    assert prefix_cache_hit_ratio(900, 1000) == 0.9


def test_a_sub_agents_turns_stay_out_of_the_per_turn_table():
    from llmload.workload.agent import AgentTurn

    rec = Recorder()
    parent, child = turn_rec(1), turn_rec(1, ttft_ms=90)
    parent.agent, child.agent = AgentTurn(), AgentTurn(child=True)
    rec.add(parent)
    rec.add(child)
    turns = rec.snapshot().classes["chat"].turns
    assert turns[1].counters["requests"] == 1 and turns[1].hist["ttft"].max < 60e-3 * 1.02
