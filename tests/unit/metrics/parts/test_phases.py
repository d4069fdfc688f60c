"""Phase definitions, PhaseStats merge and the tail attribution (metrics/definitions.py, metrics/phases.py)."""

from __future__ import annotations

import pytest

from llmload.metrics.definitions import client_wait_s, decode_s, gateway_s, prefill_s, server_queue_s, tail_parts
from llmload.metrics.parts.contract import Seen
from llmload.metrics.parts.phases import PhaseStats
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import ClassStats, MetricSet

MS = 1_000_000


def rec(ttft_ms, e2e_ms=None, queue_ms=None, prefill_ms=None, fmt="vllm", outcome="ok"):
    r = RequestRecord("c", 10, 4)
    r.start_ns = 1000 * MS
    r.chunk_ns = [int((1000 + ttft_ms) * MS), int((1000 + ttft_ms + 5) * MS)]
    r.end_ns = int((1000 + (e2e_ms if e2e_ms is not None else ttft_ms + 5)) * MS)
    r.output_tokens = 2
    r.outcome = outcome
    if prefill_ms is not None:
        r.server_timing = fmt
        r.server_queue_ms = queue_ms
        r.server_prefill_ms = prefill_ms
        r.server_decode_ms = 5.0
    return r


def test_phases_of_a_vllm_request_add_up_to_its_ttft_and_e2e():
    r = rec(ttft_ms=100, e2e_ms=150, queue_ms=70, prefill_ms=20)
    assert server_queue_s(r) == pytest.approx(0.070)
    assert prefill_s(r) == pytest.approx(0.020)
    assert gateway_s(r) == pytest.approx(0.010)  # 100 - (70 + 20)
    assert decode_s(r) == pytest.approx(0.050)  # 150 - 100
    assert tail_parts(r) == pytest.approx((0.0, 0.1, 0.7, 0.2, 0.0))


def test_llamacpp_has_no_queue_so_no_gateway_and_the_rest_is_other():
    r = rec(ttft_ms=100, queue_ms=None, prefill_ms=30, fmt="llamacpp")
    assert server_queue_s(r) is None and gateway_s(r) is None
    assert prefill_s(r) == pytest.approx(0.030)
    assert tail_parts(r) == pytest.approx((0.0, 0.0, 0.0, 0.3, 0.7))


def test_server_clock_ahead_of_the_client_never_gives_negative_parts():
    r = rec(ttft_ms=100, queue_ms=80, prefill_ms=30)  # 110 ms reported within a 100 ms TTFT
    assert gateway_s(r) == 0.0
    w, g, q, p, o = tail_parts(r)
    assert min(w, g, q, p, o) >= 0 and w + g + q + p + o == pytest.approx(1.0)


def test_without_server_timing_only_decode_exists_and_closed_loop_has_no_client_wait():
    r = rec(ttft_ms=100, e2e_ms=130)
    assert (server_queue_s(r), prefill_s(r), gateway_s(r), tail_parts(r)) == (None, None, None, None)
    assert decode_s(r) == pytest.approx(0.030)
    assert client_wait_s(r) is None


def test_an_open_loops_client_wait_is_its_own_share_of_the_ttft_and_the_server_splits_the_rest():
    """TTFT runs from the intended send: a run held back by the -u cap has its tail in the client,
    not in the server's prefill (a fixed-latency server behind a 4 s client queue read '98 % prefill')."""

    class Open(RequestRecord):
        __slots__ = ("intended_ns",)

    r = Open("c", 10, 4)
    r.intended_ns, r.start_ns = 1000 * MS, 1300 * MS  # 300 ms waiting for a free user
    r.chunk_ns = [1400 * MS, 1405 * MS]  # 100 ms from the send: 70 queue + 20 prefill + 10 gateway
    r.end_ns = 1410 * MS
    r.server_timing, r.server_queue_ms, r.server_prefill_ms = "vllm", 70.0, 20.0
    assert tail_parts(r) == pytest.approx((0.75, 0.025, 0.175, 0.05, 0.0))
    assert gateway_s(r) == pytest.approx(0.010)  # the server's split is of the sent part alone


def test_client_wait_reads_the_open_loop_intended_stamp_when_a_record_has_one():
    class Open(RequestRecord):
        __slots__ = ("intended_ns",)

    r = Open("c", 1, 1)
    r.start_ns, r.intended_ns = 500 * MS, 380 * MS
    assert client_wait_s(r) == pytest.approx(0.120)


def test_coverage_counts_timed_successful_requests_only():
    s = ClassStats()
    s.add(rec(100, queue_ms=50, prefill_ms=40))
    s.add(rec(100))
    s.add(rec(100, queue_ms=50, prefill_ms=40, outcome="error"))
    assert s.phases.timed == 1
    assert s.phases.hist["server_queue"].count == 1
    assert s.phases.hist["decode"].count == 2


def test_the_tail_is_the_slowest_timed_requests_and_merge_equals_one_process():
    fast = [rec(50, queue_ms=5, prefill_ms=40) for _ in range(90)]  # prefill-bound, fast
    slow = [rec(1000, queue_ms=900, prefill_ms=50) for _ in range(10)]  # queue-bound, slow
    one = PhaseStats()
    a, b = PhaseStats(), PhaseStats()
    for i, r in enumerate(fast + slow):
        ttft = 0.05 if r in fast else 1.0
        one.add(r, Seen(ttft))
        (a if i % 2 else b).add(r, Seen(ttft))
    merged = PhaseStats.from_wire(a.to_wire())
    merged.merge(PhaseStats.from_wire(b.to_wire()))
    for q in (0.0, 0.5, 0.9, 0.99):
        (t1, n1, s1), (t2, n2, s2) = merged.tail(q), one.tail(q)
        assert (t1, n1) == (t2, n2) and s1 == pytest.approx(s2, abs=1e-12)  # addition merges; only the order differs
    threshold, n, shares = one.tail(0.9)  # the slowest 10 %: exactly the slow bucket
    assert n == 10 and threshold == pytest.approx(1.0, rel=0.005)
    assert shares["server_queue"] == pytest.approx(0.9)
    assert shares["prefill"] == pytest.approx(0.05)
    assert shares["gateway"] == pytest.approx(0.05)
    assert one.tail(0.99)[1] == 10  # ceil(1 %) = 1 request: its whole bucket (all at or above its TTFT)
    threshold, n_all, all_shares = one.tail(0.5)  # 50 needed: reaches into the fast bucket, taken whole
    assert n_all == 100 and threshold == pytest.approx(0.05, rel=0.005)
    assert max(all_shares, key=all_shares.get) == "prefill"  # the body is prefill-bound
    assert PhaseStats().tail(0.99) is None


def test_a_tail_is_never_empty_while_timed_requests_exist():
    s = PhaseStats()
    for k in range(7):  # 7 timed requests: ceil(1 % of 7) = 1, ceil(10 %) = 1
        s.add(rec(100 + k, queue_ms=60, prefill_ms=30), Seen(0.1 + k / 1000))
    for q in (0.9, 0.99, 0.999):
        threshold, n, shares = s.tail(q)
        assert n == 1 and threshold == pytest.approx(0.106, rel=0.006) and sum(shares.values()) == pytest.approx(1.0)


def test_the_p99_tail_is_not_emptied_by_cut_requests_with_the_slowest_first_tokens():
    """A queue-bound run ends with requests cut after their first token; they waited longest in the
    queue, so the TTFT histogram's p99 is theirs. The tail is over timed successful requests: its
    threshold comes from them, and it holds the slowest of them (it was empty: no ok request at or
    above the p99 of every first token)."""
    from llmload.results.build import stats_of

    m = MetricSet()
    for k in range(180):  # ok, queue-bound: 50 ms prefill, queue growing to ~1.35 s
        queue = 7.5 * k
        m.add(rec(queue + 51, queue_ms=queue, prefill_ms=50))
    for k in range(4):  # cut at the end after their first token, the longest waits of the run
        m.add(rec(1400 + 10 * k, outcome="interrupted"))
    s = stats_of(m.overall(), 30.0)
    assert s.interrupted == 4 and s.latency["ttft"].p99 > 1400  # the p99 of every first token: a cut request's
    p99 = s.phases.tail["p99"]
    assert p99.requests >= 2 and p99.ranked()[0][0] == "server_queue"  # ceil(1 % of 180) = 2
    assert p99.ttft_ms < 1400  # the threshold of the timed requests, not of every first token
    p90 = s.phases.tail["p90"]
    assert p90.requests >= 18 and p90.ranked()[0][0] == "server_queue"
    for name in ("p90", "p99"):  # per class as well
        assert s.phases.tail[name].requests == stats_of(m.classes["c"], 30.0).phases.tail[name].requests


def test_metricset_wire_carries_phases_and_omits_them_when_empty():
    m = MetricSet()
    m.add(rec(100, queue_ms=60, prefill_ms=30))
    wire = m.to_wire()
    assert "phases" in wire["c"]
    back = MetricSet.from_wire(wire)
    assert back.classes["c"].phases.timed == 1
    assert back.classes["c"].phases.tail(0.0)[2] == pytest.approx(
        {"client_wait": 0.0, "gateway": 0.1, "server_queue": 0.6, "prefill": 0.3, "other": 0.0}
    )
    empty = ClassStats()
    empty.add(rec(100, outcome="error"))
    assert "phases" not in empty.to_wire()
