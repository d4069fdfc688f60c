from __future__ import annotations

import msgpack
import pytest

from llmload.metrics.definitions import settle_reasoning, settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder

MS = 1_000_000


def finished(cls, outcome="ok", kind=None, n=5, ttft_ms=50, itl_ms=5):
    r = RequestRecord(cls, input_tokens=10, max_tokens=n)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + i * itl_ms) * MS for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS if n else r.start_ns + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind = outcome, kind
    return r


def test_counters_keep_the_accounting_identity():
    rec = Recorder()
    rec.add(finished("short"))
    rec.add(finished("short", "error", "http_429", n=0))
    rec.add(finished("long", "error", "stall_timeout", n=3))
    rec.add(finished("long", "interrupted", n=2))
    overall = rec.snapshot().overall()
    c = overall.counters
    assert c["requests"] == 4 == c["ok"] + c["errors"] + c["interrupted"]
    assert (c["ok"], c["errors"], c["interrupted"]) == (1, 2, 1)
    assert c["output_tokens"] == 5 and c["partial_output_tokens"] == 5
    assert dict(overall.errors_by_kind) == {"http_429": 1, "stall_timeout": 1}
    # Latencies cover successful requests only; TTFT also the interrupted request that had its first token.
    assert overall.hist["ttft"].count == 2 and overall.hist["itl"].count == 4
    assert overall.hist["e2e"].count == 1 and overall.hist["tpot"].count == 1


def test_interrupted_before_the_first_token_has_no_ttft():
    rec = Recorder()
    rec.add(finished("short", "interrupted", n=0))
    s = rec.snapshot().overall()
    assert s.counters["interrupted"] == 1 and s.hist["ttft"].count == 0


def test_reconnects_and_received_tokens_merge_across_workers():
    workers = [Recorder(), Recorder()]
    for i, w in enumerate(workers):
        ok = finished("short")
        ok.reconnects = 1
        w.add(ok)
        cut = finished("short", "interrupted", n=2 + i)
        w.add(cut)
    master = MetricSet()
    for w in workers:
        master.merge(MetricSet.from_wire(w.drain()))
    c = master.overall().counters
    assert c["reconnects"] == 2
    assert c["output_tokens"] + c["partial_output_tokens"] == 5 + 2 + 5 + 3
    assert master.overall().hist["ttft"].count == 4


def test_drain_ships_deltas_and_totals_survive():
    rec = Recorder()
    rec.add(finished("short"))
    first = rec.drain()
    rec.add(finished("short"))
    rec.add(finished("medium"))
    second = rec.drain()
    assert rec.drain() == {}
    assert first["short"]["outcomes"]["c"]["requests"] == 1
    assert second["short"]["outcomes"]["c"]["requests"] == 1 and second["medium"]["outcomes"]["c"]["requests"] == 1
    assert rec.snapshot().overall().counters["requests"] == 3


def test_master_merge_of_worker_deltas_equals_one_process():
    workers = [Recorder(), Recorder()]
    single = Recorder()
    for i in range(40):
        r = finished(["short", "medium", "long"][i % 3], ttft_ms=40 + i, itl_ms=3 + i % 4)
        workers[i % 2].add(r)
        single.add(r)
    merged = MetricSet()
    for w in workers:
        wire = msgpack.unpackb(msgpack.packb(w.drain()), strict_map_key=False)  # as Locust ships it
        merged.merge(MetricSet.from_wire(wire))
    a, b = merged.overall(), single.snapshot().overall()
    assert a.counters == b.counters
    for m in ("ttft", "itl", "tpot", "e2e"):
        assert a.hist[m].percentiles([0.5, 0.9, 0.99]) == b.hist[m].percentiles([0.5, 0.9, 0.99])
        assert a.hist[m].sum == pytest.approx(b.hist[m].sum)


def reasoned(cls="r", reasoning=3, usage=None, n=8, outcome="ok"):
    """A request whose first ``reasoning`` events are reasoning (0: hidden when ``usage`` says some)."""
    r = finished(cls, outcome, "http_500" if outcome == "error" else None, n=n)
    settle_reasoning(r, reasoning if reasoning else 0, reasoning, 0, usage)
    return r


def test_ttfo_reasoning_time_and_reasoning_counters():
    rec = Recorder()
    rec.add(reasoned(reasoning=3))  # streamed, counted: TTFO at the 4th event
    rec.add(reasoned(reasoning=2, usage=5))  # streamed, usage says 5
    rec.add(reasoned(reasoning=0, usage=40))  # hidden: usage only
    rec.add(reasoned(reasoning=0))  # no reasoning at all
    rec.add(reasoned(reasoning=3, outcome="error"))  # failed: none of it counts
    s = rec.snapshot().overall()
    c, h = s.counters, s.hist
    assert c["reasoning_tokens"] == 3 + 5 + 40
    assert (c["reasoning_from_usage"], c["reasoning_counted"], c["hidden_reasoning"]) == (2, 1, 1)
    # TTFO of every successful request (== TTFT without reasoning); reasoning time only where streamed first.
    assert h["ttfo"].count == 4 and h["reasoning"].count == 2
    assert h["ttfo"].min == pytest.approx(0.050, rel=0.005) and h["ttfo"].max == pytest.approx(0.065, rel=0.005)
    assert h["reasoning"].min == pytest.approx(0.010, rel=0.005) and h["reasoning"].max == pytest.approx(0.015, rel=0.005)


def test_buffered_token_jumps_count_every_outcome_and_travel():
    w = Recorder()
    for outcome in ("ok", "error", "interrupted"):
        r = finished("s", outcome, "http_500" if outcome == "error" else None, n=2)
        r.add_counted_chunk(r.chunk_ns[-1] + MS, 16)
        if outcome == "ok":
            settle_reasoning(r, -1, 0, 0, None)  # what the user does for a successful request
        w.add(r)
    m = MetricSet.from_wire(msgpack.unpackb(msgpack.packb(w.drain())))
    assert m.overall().counters["buffered_token_jumps"] == 3
    assert m.overall().hist["ttfo"].count == 1  # the successful one


# -- SLOs: good requests, decided once per request as it is recorded ---------------------------


def test_without_slos_no_request_is_judged_and_nothing_new_travels():
    rec = Recorder()
    rec.add(finished("short"))
    c = rec.snapshot().overall().counters
    assert c["good"] == c["good_output_tokens"] == c["slo_missed_ttft_ms"] == 0
    assert not rec.judges_slos
    assert all("goodput" not in w for w in rec.drain().values())  # the goodput part stays empty: it never travels


def test_good_requests_and_misses_per_class_and_step():
    from llmload.metrics.slo import SLO

    rec = Recorder()
    rec.set_slos({"short": SLO(ttft_ms=60.0), "long": SLO(ttft_ms=40.0, tpot_ms=4.0)}, SLO(ttft_ms=60.0))
    assert rec.judges_slos
    for _ in range(3):
        rec.add(finished("short", n=5, ttft_ms=50, itl_ms=5))  # good
    r = finished("long", n=4, ttft_ms=50, itl_ms=5)  # misses both limits of its class
    r.step = 2
    rec.add(r)
    rec.add(finished("long", "error", "http_500", n=0))  # failed: never good, never a "miss"
    rec.add(finished("other", n=2, ttft_ms=70))  # not in the table: --slo applies, misses TTFT
    snap = rec.snapshot()
    short, long_ = snap.classes["short"].counters, snap.classes["long"].counters
    assert (short["good"], short["good_output_tokens"]) == (3, 15)
    assert (long_["good"], long_["slo_missed_ttft_ms"], long_["slo_missed_tpot_ms"], long_["errors"]) == (0, 1, 1, 1)
    assert snap.classes["other"].counters["slo_missed_ttft_ms"] == 1
    step = MetricSet.from_wire(rec.drain_steps()["2"])
    assert step.classes["long"].counters["slo_missed_tpot_ms"] == 1 and step.classes["long"].counters["ok"] == 1


def test_good_counters_merge_worker_to_master_by_addition():
    from llmload.metrics.slo import SLO

    workers = [Recorder(), Recorder()]
    for i, w in enumerate(workers):
        w.set_slos({"short": SLO(e2e_ms=1000.0)}, None)
        for _ in range(i + 2):
            w.add(finished("short"))
        w.add(finished("short", n=3, ttft_ms=2000))  # E2E > 1 s
    master = MetricSet()
    for w in workers:
        master.merge(MetricSet.from_wire(msgpack.unpackb(msgpack.packb(w.drain()))))
    c = master.classes["short"].counters
    assert (c["good"], c["good_output_tokens"], c["slo_missed_e2e_ms"], c["ok"]) == (5, 25, 2, 7)


def test_set_slos_none_turns_judging_off():
    from llmload.metrics.slo import SLO

    rec = Recorder()
    rec.set_slos({"short": SLO(ttft_ms=1.0)})
    rec.set_slos(None)
    rec.add(finished("short"))
    assert rec.snapshot().overall().counters["slo_missed_ttft_ms"] == 0


def _failed(kind: str, message: str, step: int | None = None) -> RequestRecord:
    r = RequestRecord("short", 10, 16)
    r.outcome, r.error_kind, r.error_message, r.step = "error", kind, message, step
    return r


def test_one_example_per_error_kind_first_seen_wins_and_merges_over_the_wire():
    a, b = Recorder(), Recorder()
    a.add(_failed("http_400", "maximum context length is 32768 tokens"))
    a.add(_failed("http_400", "another message"))
    b.add(_failed("http_400", "from the second worker"))
    b.add(_failed("connection", "ConnectionRefusedError: [Errno 111]"))
    merged = MetricSet.from_wire(msgpack.unpackb(msgpack.packb(a.drain())))
    merged.merge(MetricSet.from_wire(msgpack.unpackb(msgpack.packb(b.drain()))))
    s = merged.overall()
    assert s.errors_examples == {"http_400": "maximum context length is 32768 tokens",
                                 "connection": "ConnectionRefusedError: [Errno 111]"}  # fmt: skip
    assert s.errors_by_kind == {"http_400": 3, "connection": 1}
    c = s.counters
    assert c["requests"] == c["ok"] + c["errors"] + c["interrupted"] == 4


def test_backoff_time_is_counted_per_class_and_step_even_after_the_error_was_drained():
    r = Recorder()
    rec = _failed("http_500", "boom", step=2)
    r.add(rec)
    first = MetricSet.from_wire(r.drain())
    r.drain_steps()
    r.add_backoff(rec, 0.25)
    r.add_backoff(rec, 0.5)
    later = MetricSet.from_wire(r.drain())  # only the waits: still shipped
    steps = r.drain_steps()
    assert later.classes["short"].counters["backoffs"] == 2
    assert later.classes["short"].counters["backoff_ms"] == 750
    assert later.classes["short"].counters["requests"] == 0
    assert MetricSet.from_wire(steps["2"]).classes["short"].counters["backoff_ms"] == 750
    first.merge(later)
    assert first.overall().counters["backoff_ms"] == 750 and first.overall().counters["errors"] == 1


def test_a_refusals_retry_after_is_counted_and_merges_over_the_wire():
    """Issue 22: the Retry-After of a 429/503 was on the record only; the summary could not say it was seen."""
    a, b = Recorder(), Recorder()
    for recorder, waits in ((a, (2.0, 0.5)), (b, (1e308,))):  # an absurd header is capped, never inf
        for wait in waits:
            r = _failed("http_429", "Too Many Requests")
            r.retry_after_s = wait
            recorder.add(r)
    a.add(_failed("http_429", "no header"))
    merged = MetricSet.from_wire(msgpack.unpackb(msgpack.packb(a.drain())))
    merged.merge(MetricSet.from_wire(msgpack.unpackb(msgpack.packb(b.drain()))))
    c = merged.overall().counters
    assert (c["errors"], c["retry_afters"], c["retry_after_ms"]) == (4, 3, 2500 + 86_400_000)
