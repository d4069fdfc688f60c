from __future__ import annotations

import pytest

from llmload.metrics.definitions import e2e_s, itl_s, settle_token_counts, tpot_s, ttft_s
from llmload.metrics.record import RequestRecord

MS = 1_000_000


def record(chunks_ms, start_ms=0, end_ms=None):
    r = RequestRecord("short", input_tokens=50, max_tokens=len(chunks_ms))
    r.start_ns = start_ms * MS
    r.chunk_ns = [int(c * MS) for c in chunks_ms]
    r.end_ns = (end_ms if end_ms is not None else (chunks_ms[-1] if chunks_ms else start_ms)) * MS
    return r


def test_ttft_itl_tpot_e2e_on_integer_ns_fixture():
    r = record([50, 55, 60, 70], end_ms=71)
    settle_token_counts(r, None, None)
    assert ttft_s(r) == pytest.approx(0.050)
    assert itl_s(r).tolist() == pytest.approx([0.005, 0.005, 0.010])
    assert r.output_tokens == 4 and not r.output_tokens_from_usage
    assert tpot_s(r) == pytest.approx(0.020 / 3)
    assert e2e_s(r) == pytest.approx(0.071)


def test_usage_wins_over_counted_chunks_for_tpot():
    # 3 events carrying 6 tokens (several tokens per chunk): ITL is per event, TPOT per token.
    r = record([100, 110, 120])
    settle_token_counts(r, usage_prompt=42, usage_completion=6)
    assert r.output_tokens == 6 and r.output_tokens_from_usage
    assert r.input_tokens == 42 and r.input_tokens_from_usage
    assert itl_s(r).tolist() == pytest.approx([0.010, 0.010])
    assert tpot_s(r) == pytest.approx(0.020 / 5)


def test_stated_token_counts_per_event():
    r = RequestRecord("x", 1, 10)
    r.start_ns = 0
    r.chunk_ns.append(5 * MS)
    r.add_counted_chunk(9 * MS, 3)
    assert r.chunk_tokens == [1, 3] and r.counted_tokens == 4
    settle_token_counts(r, None, None)
    assert r.output_tokens == 4


def test_metrics_that_do_not_exist():
    r = record([])
    settle_token_counts(r, None, None)
    assert ttft_s(r) is None and tpot_s(r) is None and len(itl_s(r)) == 0
    one = record([30])
    settle_token_counts(one, None, None)
    assert ttft_s(one) == pytest.approx(0.03) and tpot_s(one) is None


def test_one_token_events_after_a_counted_event_still_count():
    r = RequestRecord("x", 1, 10)
    r.chunk_ns.append(1)
    r.add_counted_chunk(2, 3)
    r.chunk_ns.append(3)  # the hot path: a one-token event after a counted one
    r.chunk_ns.append(4)
    r.add_counted_chunk(5, 2)
    assert r.counted_tokens == 1 + 3 + 1 + 1 + 2
    assert r.tokens_per_chunk() == [1, 3, 1, 1, 2]
