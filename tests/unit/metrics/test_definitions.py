from __future__ import annotations

import pytest

from llmload.metrics.definitions import (
    e2e_s,
    hidden_reasoning,
    itl_s,
    reasoning_s,
    settle_reasoning,
    settle_token_counts,
    slo_missed,
    tpot_s,
    ttfo_s,
    ttft_s,
)
from llmload.metrics.record import RequestRecord
from llmload.metrics.slo import SLO

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


# -- reasoning channel ------------------------------------------------------------------------


def test_reasoning_first_then_answer_gives_ttfo_and_reasoning_time():
    # 4 reasoning events (100..130 ms), then the answer from 140 ms.
    r = record([100, 110, 120, 130, 140, 150])
    settle_reasoning(r, first_output_chunk=4, reasoning_chunks=4, reasoning_extra_tokens=0, usage_reasoning=None)
    assert ttft_s(r) == pytest.approx(0.100)  # TTFT stays the first token of any channel
    assert ttfo_s(r) == pytest.approx(0.140)
    assert reasoning_s(r) == pytest.approx(0.040)
    assert (r.reasoning_tokens, r.reasoning_tokens_from_usage) == (4, False)
    assert not hidden_reasoning(r)


def test_counted_reasoning_tokens_include_stated_counts_and_usage_wins():
    r = record([100, 110, 120])
    settle_reasoning(r, 1, reasoning_chunks=1, reasoning_extra_tokens=5, usage_reasoning=None)
    assert (r.reasoning_tokens, r.reasoning_tokens_from_usage) == (6, False)
    settle_reasoning(r, 1, reasoning_chunks=1, reasoning_extra_tokens=5, usage_reasoning=9)
    assert (r.reasoning_tokens, r.reasoning_tokens_from_usage) == (9, True)


def test_without_reasoning_ttfo_is_ttft_and_there_is_no_reasoning_time():
    r = record([50, 60])
    settle_reasoning(r, -1, 0, 0, None)  # an adapter that notes no channels: every event is output
    assert r.first_output_chunk == 0
    assert ttfo_s(r) == ttft_s(r) == pytest.approx(0.050)
    assert reasoning_s(r) is None
    assert r.reasoning_tokens == 0 and not hidden_reasoning(r)


def test_hidden_reasoning_is_usage_reasoning_with_nothing_streamed():
    r = record([900, 910])
    settle_reasoning(r, 0, reasoning_chunks=0, reasoning_extra_tokens=0, usage_reasoning=192)
    assert hidden_reasoning(r)
    assert reasoning_s(r) is None  # its time is inside TTFT and TTFO alike
    assert ttfo_s(r) == ttft_s(r)
    settle_reasoning(r, 0, 0, 0, usage_reasoning=0)  # OpenAI's details on a non-reasoning model
    assert not hidden_reasoning(r)


def test_reasoning_without_any_output_has_no_ttfo():
    r = record([100, 110, 120])
    settle_reasoning(r, -1, reasoning_chunks=3, reasoning_extra_tokens=0, usage_reasoning=None)
    assert r.first_output_chunk == -1
    assert ttfo_s(r) is None and reasoning_s(r) is None
    assert ttft_s(r) == pytest.approx(0.100) and r.reasoning_tokens == 3
    empty = record([])
    settle_reasoning(empty, -1, 0, 0, None)
    assert empty.first_output_chunk == -1 and ttfo_s(empty) is None


def test_reasoning_after_the_answer_began_is_not_reasoning_time():
    r = record([100, 110, 120])
    settle_reasoning(r, 0, reasoning_chunks=1, reasoning_extra_tokens=0, usage_reasoning=None)
    assert ttfo_s(r) == ttft_s(r) and reasoning_s(r) is None
    assert r.reasoning_tokens == 1


def test_buffered_token_jumps_count_multi_token_events_only():
    r = RequestRecord("x", 1, 40)
    r.chunk_ns.append(1)
    r.add_counted_chunk(2, 16)
    r.chunk_ns.append(3)
    r.add_counted_chunk(4, 2)
    assert r.buffered_token_jumps == 2
    assert r.counted_tokens == 20
    assert len(itl_s(r)) == 3  # one gap per event


# -- good requests (SLOs) -------------------------------------------------------------------


def _slo_record(ttft_ms: float, itl_ms: float, n: int, tail_ms: float = 1.0) -> RequestRecord:
    from llmload.metrics.definitions import settle_token_counts

    ms = 1_000_000
    r = RequestRecord("c", input_tokens=1, max_tokens=n)
    r.start_ns = 10_000 * ms
    r.chunk_ns = [r.start_ns + int((ttft_ms + i * itl_ms) * ms) for i in range(n)]
    r.end_ns = (r.chunk_ns[-1] if n else r.start_ns) + int(tail_ms * ms)
    settle_token_counts(r, None, None)
    r.outcome = "ok"
    return r


def test_a_request_is_good_when_it_meets_every_slo_of_its_class():
    from llmload.metrics.definitions import slo_missed
    from llmload.metrics.slo import SLO

    r = _slo_record(ttft_ms=50, itl_ms=10, n=5)  # TTFT 50, TPOT 10, E2E 91
    assert slo_missed(r, SLO(ttft_ms=60, tpot_ms=10, e2e_ms=91)) == ()  # limits are inclusive
    assert slo_missed(r, SLO()) == ()
    assert slo_missed(r, SLO(ttft_ms=40)) == ("ttft_ms",)
    assert slo_missed(r, SLO(tpot_ms=9.99)) == ("tpot_ms",)
    assert slo_missed(r, SLO(e2e_ms=90)) == ("e2e_ms",)
    assert slo_missed(r, SLO(ttft_ms=1, tpot_ms=1, e2e_ms=1)) == ("ttft_ms", "tpot_ms", "e2e_ms")


def test_a_one_token_answer_meets_a_tpot_slo_and_no_content_misses_ttft():
    from llmload.metrics.definitions import slo_missed
    from llmload.metrics.slo import SLO

    assert slo_missed(_slo_record(ttft_ms=5, itl_ms=0, n=1), SLO(tpot_ms=0.001)) == ()
    assert slo_missed(_slo_record(ttft_ms=5, itl_ms=0, n=0), SLO(ttft_ms=1000)) == ("ttft_ms",)


def test_attainment_and_goodput_formulas():
    from llmload.metrics.definitions import attainment, goodput_per_s

    assert attainment(9, 10, 2) == 0.75 and attainment(0, 0, 0) is None
    assert goodput_per_s(30, 10.0) == 3.0 and goodput_per_s(5, 0.0) == 0.0
def test_open_loop_latencies_run_from_the_intended_send_time():
    from llmload.metrics.definitions import achieved_rate, client_wait_s, origin_ns

    r = record([350, 355, 360], start_ms=300, end_ms=361)
    settle_token_counts(r, None, None)
    assert client_wait_s(r) is None and origin_ns(r) == r.start_ns  # closed loop: from the send
    assert ttft_s(r) == pytest.approx(0.050) and e2e_s(r) == pytest.approx(0.061)
    r.intended_ns = 100 * MS  # the schedule said 100 ms; a free user sent it at 300 ms
    assert client_wait_s(r) == pytest.approx(0.200)
    assert ttft_s(r) == pytest.approx(0.250) and e2e_s(r) == pytest.approx(0.261)
    assert tpot_s(r) == pytest.approx(0.005) and itl_s(r).tolist() == pytest.approx([0.005, 0.005])  # unchanged
    assert achieved_rate(30, 10.0) == 3.0 and achieved_rate(5, 0.0) == 0.0
    r.first_output_chunk = 0
    assert ttfo_s(r) == pytest.approx(0.250)  # TTFO too runs from the intended send time


def test_an_open_loop_request_misses_its_ttft_and_e2e_slo_by_the_wait_in_the_client():
    # Due at 0, sent at 400 ms (the -u cap held it), first token 100 ms after the send, ended at 600:
    # its TTFT is 500 ms and its E2E 600 ms from when it was due, as ttft_s/e2e_s say.
    r = record([500, 550, 600], start_ms=400, end_ms=600)
    r.intended_ns = 1  # due at (almost) 0
    settle_token_counts(r, None, None)
    assert ttft_s(r) == pytest.approx(0.5, abs=1e-6)
    assert slo_missed(r, SLO(ttft_ms=300, e2e_ms=550)) == ("ttft_ms", "e2e_ms")
    r.intended_ns = 0  # a closed loop: the same request timed from its send meets both
    assert slo_missed(r, SLO(ttft_ms=300, e2e_ms=550)) == ()
