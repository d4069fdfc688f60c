"""The summary writer (``llmload.summary/2``) over results built from real histograms, and the console table."""

from __future__ import annotations

import io
import json

from llmload import redact
from llmload.metrics.definitions import settle_reasoning, settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.report.console import render_summary
from llmload.results import SCHEMA, build_result, from_summary, to_summary

MS = 1_000_000
STAT_KEYS = {"requests", "ok", "errors", "interrupted", "output_tokens", "input_tokens", "output_tokens_per_s", "requests_per_s"}
LAT_KEYS = {"mean", "p50", "p90", "p99", "max"}


def rec(cls, outcome="ok", kind=None, n=10):
    r = RequestRecord(cls, input_tokens=100, max_tokens=n)
    r.start_ns = 0
    r.chunk_ns = [(50 + 5 * i) * MS for i in range(n)]
    r.end_ns = (r.chunk_ns[-1] if n else 10 * MS) + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind = outcome, kind
    return r


def make_result():
    r = Recorder()
    for _ in range(3):
        r.add(rec("short"))
    r.add(rec("medium"))
    r.add(rec("medium", "error", "http_500", n=0))
    r.add(rec("long", "interrupted", n=4))
    return build_result(r.snapshot(), duration_s=2.0, users_max=4, weights={"short": 3, "medium": 4, "long": 3, "idle": 1})


def make_summary():
    return to_summary(make_result())


def test_contract_keys_and_values():
    s = make_summary()
    assert s["schema"] == SCHEMA and s["duration_s"] == 2.0 and s["users_max"] == 4
    for block in [s["overall"], *s["classes"].values()]:
        assert block.keys() >= STAT_KEYS
        for m in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
            assert block[m].keys() >= LAT_KEYS
        assert block["requests"] == block["ok"] + block["errors"] + block["interrupted"]
    o = s["overall"]
    assert (o["requests"], o["ok"], o["errors"], o["interrupted"]) == (6, 4, 1, 1)
    assert o["output_tokens"] == 40 and o["output_tokens_per_s"] == 20.0 and o["requests_per_s"] == 2.0
    assert o["ttft_ms"]["p50"] == 50.0 and o["itl_ms"]["p50"] == 5.0 and o["tpot_ms"]["mean"] == 5.0
    assert s["errors_by_kind"] == {"http_500": 1}
    assert list(s["classes"]) == ["short", "medium", "long", "idle"]  # profile order, idle class included
    assert s["classes"]["medium"]["weight"] == 4 and s["classes"]["idle"]["requests"] == 0
    assert s["classes"]["idle"]["ttft_ms"]["p50"] is None
    json.dumps(s)  # plain JSON


def test_console_table_lists_every_class_and_the_identity():
    out = io.StringIO()
    render_summary(make_result(), out)
    text = out.getvalue()
    for name in ("short", "medium", "long", "idle", "overall", "TTFT p50", "TPOT p50", "ITL p50", "E2E p50", "out tok/s"):
        assert name in text
    assert "requests = ok 4 + errors 1 + interrupted 1 = 6" in text
    assert "errors by kind: http_500 1" in text


def test_console_shows_the_ladder_verdict_and_top_finding():
    s = make_summary()
    s["steps"] = [{"index": 0, "users": 1, "overall": s["overall"]}, {"index": 1, "users": 8, "overall": s["overall"]}]
    s["verdict"] = {"status": "breach", "safe_users": 1, "recommended_limit": 1,
                    "breach": {"metric": "ttft_p50", "users": 8, "value": 900.0, "limit": 75.0}}  # fmt: skip
    s["findings"] = [{"title": "Batch / admission cap", "confidence": "high", "evidence_text": ["running flat at 4"]}]
    out = io.StringIO()
    render_summary(from_summary(s), out)
    text = out.getvalue()
    assert "verdict: safe concurrency 1 users; ttft_p50 broke the limit at 8 users (900 > 75)" in text
    assert "finding 1: Batch / admission cap (high) — running flat at 4" in text


def test_received_tokens_count_every_outcome_and_reconnects_are_kept():
    s = make_summary()
    o = s["overall"]
    assert o["received_output_tokens"] == 40 + 4  # 4 successful x 10 + the interrupted one's 4
    assert o["received_output_tokens_per_s"] == 22.0
    assert s["classes"]["long"]["received_output_tokens"] == 4 and s["classes"]["long"]["output_tokens"] == 0
    assert o["ttft_ms"]["count"] == 5  # 4 successful + the interrupted one that had its first token
    assert o["e2e_ms"]["count"] == 4
    assert o["reconnects"] == 0
    r = Recorder()
    again = rec("short")
    again.reconnects = 1
    r.add(again)
    assert to_summary(build_result(r.snapshot(), duration_s=1.0, users_max=1, weights={}))["overall"]["reconnects"] == 1


def test_console_shows_received_throughput_and_reconnects():
    r = Recorder()
    again = rec("short")
    again.reconnects = 1
    r.add(again)
    out = io.StringIO()
    render_summary(build_result(r.snapshot(), duration_s=1.0, users_max=1, weights={}), out)
    text = out.getvalue()
    assert "recv tok/s" in text and "received (any outcome) 10" in text
    assert "reconnects: 1 requests sent again on a fresh connection" in text


def test_a_run_ended_with_most_requests_running_warns_and_says_what_to_change():
    def summary(ok: int, cut: int, errors: int = 0):
        r = Recorder()
        for _ in range(ok):
            r.add(rec("short"))
        for _ in range(cut):
            r.add(rec("short", "interrupted", n=3))
        for _ in range(errors):
            r.add(rec("short", "error", "http_500", n=0))
        result = build_result(r.snapshot(), duration_s=2.0, users_max=8, weights={}, load={"warnings": ("other",)})
        return to_summary(result)

    s = summary(ok=0, cut=5)  # nothing completed
    assert s["warnings"][0] == "other" and len(s["warnings"]) == 2
    assert "5 of 5 started requests interrupted, 0 completed" in s["warnings"][1]
    assert "received tok/s (15 tokens, 7.5/s)" in s["warnings"][1] and "-t" in s["warnings"][1]
    assert len(summary(ok=2, cut=3)["warnings"]) == 2  # more than half still running
    assert summary(ok=3, cut=3)["warnings"] == ["other"]  # half: not most
    assert summary(ok=0, cut=0, errors=3)["warnings"] == ["other"]  # nothing was running: errors say it all
    out = io.StringIO()
    render_summary(from_summary(s), out)
    assert "WARNING: most requests were still running when the test ended" in out.getvalue()


def test_a_summary_read_back_writes_the_same_summary():
    s = make_summary()
    assert to_summary(from_summary(json.loads(json.dumps(s)))) == s


def test_nothing_is_rounded_before_the_writer():
    r = make_result()
    assert r.overall.lat("ttft").p50 == s_ttft_p50() and r.overall.output_tokens_per_s == 20.0
    assert make_summary()["overall"]["ttft_ms"]["p50"] == round(s_ttft_p50(), 3)


def s_ttft_p50() -> float:
    """The histogram's own p50 of the records above, in ms (unrounded)."""
    r = Recorder()
    for _ in range(3):
        r.add(rec("short"))
    r.add(rec("medium"))
    return r.snapshot().overall().hist["ttft"].percentile(0.5) * 1000.0


def reasoning_result():
    """Class ``think``: 2 requests streaming 4 reasoning events first (usage says 4), 1 hidden (usage 30);
    class ``plain``: 2 requests without reasoning, one with a buffered 16-token event."""
    r = Recorder()
    for _ in range(2):
        x = rec("think")
        settle_reasoning(x, 4, 4, 0, 4)
        r.add(x)
    hidden = rec("think")
    settle_reasoning(hidden, 0, 0, 0, 30)
    r.add(hidden)
    for i in range(2):
        x = rec("plain")
        if i:
            x.add_counted_chunk(x.chunk_ns[-1] + MS, 16)
        settle_reasoning(x, -1, 0, 0, None)
        r.add(x)
    return build_result(r.snapshot(), duration_s=1.0, users_max=2, weights={"think": 1, "plain": 1})


def test_reasoning_keys_overall_and_per_class():
    s = to_summary(reasoning_result())
    o, think, plain = s["overall"], s["classes"]["think"], s["classes"]["plain"]
    # TTFO of every successful request: 50 + 4 x 5 ms where reasoning streamed first, else == TTFT.
    assert think["ttfo_ms"]["count"] == 3 and think["ttfo_ms"]["max"] == 70.0 and think["ttfo_ms"]["min"] == 50.0
    assert plain["ttfo_ms"]["p50"] == plain["ttft_ms"]["p50"] == 50.0
    assert think["reasoning_ms"]["count"] == 2 and think["reasoning_ms"]["p50"] == 20.0
    assert plain["reasoning_ms"] == {"mean": None, "p50": None, "p90": None, "p99": None, "max": None, "min": None,
                                     "count": 0}  # fmt: skip
    assert think["reasoning_tokens"] == {"total": 38, "mean": 12.667, "from_usage": 3, "counted": 0}
    assert plain["reasoning_tokens"] == {"total": 0, "mean": None, "from_usage": 0, "counted": 0}
    assert (think["hidden_reasoning"], plain["hidden_reasoning"], o["hidden_reasoning"]) == (1, 0, 1)
    assert (think["buffered_token_jumps"], plain["buffered_token_jumps"], o["buffered_token_jumps"]) == (0, 1, 1)
    assert o["reasoning_tokens"]["total"] == 38 and o["ttfo_ms"]["count"] == 5
    assert to_summary(from_summary(json.loads(json.dumps(s)))) == s  # read back: the same summary


def test_console_shows_ttfo_only_where_reasoning_happened():
    out = io.StringIO()
    render_summary(reasoning_result(), out)
    text = out.getvalue()
    assert "TTFO p50" in text and "reason p50" in text
    assert "reasoning tokens 38 over 3 requests: from server usage in 3, counted from the stream in 0" in text
    assert "hidden reasoning: in 1 requests" in text
    assert "buffered token jumps: 1 events carried more than one token" in text
    plain = io.StringIO()
    render_summary(make_result(), plain)  # nothing reasoned, nothing jumped
    assert "TTFO" not in plain.getvalue() and "reasoning" not in plain.getvalue()
    assert "buffered token jumps" not in plain.getvalue()


def conversation_result():
    r = Recorder()
    for turn, cached in ((1, 0), (1, 0), (2, 90), (2, 100), (3, 200), (11, 300), (12, None)):
        x = rec("chat", n=4)
        x.turn, x.input_tokens, x.cached_prompt_tokens = turn, 100 * turn, cached
        r.add(x)
    cut = rec("chat", "error", "http_500", n=0)
    cut.turn = 2
    r.add(cut)
    r.add(rec("short"))
    return build_result(r.snapshot(), duration_s=2.0, users_max=2, weights={"chat": 1, "short": 1})


def test_by_turn_and_cache_figures_per_class_and_overall():
    s = to_summary(conversation_result())
    chat = s["classes"]["chat"]
    assert list(chat["by_turn"]) == ["1", "2", "3", "10+"]  # turns 11 and 12 merged into the tail entry
    t2 = chat["by_turn"]["2"]
    assert (t2["requests"], t2["ok"], t2["input_tokens"], t2["input_tokens_mean"]) == (3, 2, 400, 200.0)
    assert t2["cached_prompt_tokens"] == 190 and t2["prefix_cache_hit_ratio"] == round(190 / 400, 4)
    assert t2.keys() >= {"ttft_ms", "tpot_ms", "e2e_ms"} and t2["ttft_ms"]["count"] == 2
    tail = chat["by_turn"]["10+"]
    assert tail["requests"] == 2 and tail["prefix_cache_hit_ratio"] == round(300 / 1100, 4)  # the turn-12 answer did not say
    assert chat["cached_prompt_tokens"] == 690
    assert chat["prefix_cache_hit_ratio"] == round(690 / (100 + 100 + 200 + 200 + 300 + 1100), 4)
    assert "by_turn" not in s["classes"]["short"]  # a single-request class has no turns
    assert s["classes"]["short"]["prefix_cache_hit_ratio"] is None  # its answers never stated cached tokens
    assert s["overall"]["by_turn"]["1"]["requests"] == 2
    assert to_summary(from_summary(json.loads(json.dumps(s)))) == s
def test_a_closed_loop_summary_says_only_its_arrival_mode():
    s = make_summary()
    assert s["arrival"] == {"mode": "closed"}
    assert "client_wait_ms" not in s["overall"]
    assert from_summary(s).arrival.mode == "closed"


def test_an_open_loop_summary_has_client_wait_and_the_arrival_block():
    from llmload.metrics.arrival_stats import ArrivalStats
    from llmload.results.build import arrival_result

    r = Recorder()
    for i in range(10):
        x = rec("short")
        x.start_ns, x.intended_ns = 1000 * MS, (1000 - 100 * (i % 2)) * MS  # half waited 100 ms
        x.chunk_ns = [c + 1000 * MS for c in x.chunk_ns]
        x.end_ns += 1000 * MS
        r.add(x)
    stats = ArrivalStats()
    stats.arrivals, stats.sent, stats.waited = 10, 10, 5
    for lag in [0.0005] * 9 + [0.030]:
        stats.lag.record(lag)
    result = build_result(r.snapshot(), duration_s=5.0, users_max=2, weights={"short": 1},
                          arrival=arrival_result("poisson", 4.0, stats, 0, 0.0))  # fmt: skip
    s = to_summary(result)
    a = s["arrival"]
    assert a["mode"] == "poisson" and a["offered_rate"] == 4.0 and a["achieved_rate"] == 2.0  # 10 requests / 5 s
    assert (a["arrivals"], a["sent"], a["unsent"], a["unsent_wait_max_ms"], a["waited"]) == (10, 10, 0, None, 5)
    assert a["schedule_lag_ms"]["max"] == 30.0 and a["scheduler_behind"]  # p99 30 ms > the 10 ms bound
    cw = s["overall"]["client_wait_ms"]
    assert cw["count"] == 10 and cw["max"] == 100.0 and cw["min"] == 0.0
    assert s["overall"]["ttft_ms"]["max"] == 150.0  # 50 ms TTFT + 100 ms wait
    assert "client_wait_ms" in s["classes"]["short"]
    assert any("held arrivals back: 5 of 10 arrivals" in w for w in s["warnings"])
    assert any("scheduler fell behind" in w for w in s["warnings"])
    back = from_summary(json.loads(json.dumps(s)))
    again = to_summary(back)
    assert again["arrival"] == a and again["overall"]["client_wait_ms"] == cw


def test_a_trace_replay_has_its_trace_block_a_console_line_and_reads_back():
    import io

    from llmload.metrics.arrival_stats import ArrivalStats
    from llmload.report.console import render_summary
    from llmload.results.build import arrival_result
    from llmload.results.model import TraceReplay

    r = Recorder()
    for _ in range(3):
        x = rec("trace")
        x.intended_ns = x.start_ns
        r.add(x)
    stats = ArrivalStats()
    stats.arrivals = stats.sent = 3
    for lag in (0.001, 0.002, 0.004):
        stats.lag.record(lag)
    replay = TraceReplay("/data/mooncake.jsonl", 4, 2.0, 1.5, 0.25)
    result = build_result(r.snapshot(), duration_s=2.0, users_max=4, weights={"trace": 1},
                          arrival=arrival_result("trace", replay.offered_rate, stats, 0, 0.0, trace=replay))  # fmt: skip
    s = to_summary(result)
    a = s["arrival"]
    assert a["mode"] == "trace" and a["offered_rate"] == round(4 / 1.5, 3)
    assert a["trace"] == {"file": "/data/mooncake.jsonl", "entries": 4, "speedup": 2.0, "span_s": 1.5,
                          "block_reuse": 0.25, "sent": 3, "complete": False}  # fmt: skip
    assert any("not replayed to its end: 3 of its 4 entries were sent" in w for w in s["warnings"])
    back = from_summary(json.loads(json.dumps(s)))
    assert back.arrival.trace == replay and to_summary(back)["arrival"] == a
    out = io.StringIO()
    render_summary(result, out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("trace replay"))
    assert line.startswith("trace replay mooncake.jsonl: 3 of 4 entries sent at speedup 2 (span 1.5 s, 25% of hash_ids")
    assert "send lag p50" in line and "p99" in line


def test_a_key_in_a_message_is_masked_in_the_summary_and_the_console():
    """Guard behind the record's own masking: a key that reached the results (a message kept before the key was
    known, a plugin's text) is not written to the summary (whence --summary-json and the run directory) nor
    printed."""
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    r = Recorder()
    bad = rec("medium", "error", "http_401", n=0)
    bad.error_message = f"Incorrect API key provided: {key}."
    r.add(bad)
    result = build_result(r.snapshot(), duration_s=2.0, users_max=1, weights={"medium": 1})
    redact.remember(key)
    s = to_summary(result)
    out = io.StringIO()
    render_summary(result, out)
    assert s["errors_examples"] == {"http_401": f"Incorrect API key provided: {redact.MASK}."}
    assert key[:8] not in json.dumps(s) and key[-8:] not in json.dumps(s)
    assert f"e.g. http_401: Incorrect API key provided: {redact.MASK}." in out.getvalue()
    assert key[:8] not in out.getvalue() and key[-8:] not in out.getvalue()
