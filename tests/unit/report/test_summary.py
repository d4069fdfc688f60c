from __future__ import annotations

import io
import json

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.report.console import render_summary
from llmload.report.summary import SCHEMA, build_summary

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


def make_summary():
    r = Recorder()
    for _ in range(3):
        r.add(rec("short"))
    r.add(rec("medium"))
    r.add(rec("medium", "error", "http_500", n=0))
    r.add(rec("long", "interrupted", n=4))
    return build_summary(r.snapshot(), duration_s=2.0, users_max=4, weights={"short": 3, "medium": 4, "long": 3, "idle": 1})


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
    render_summary(make_summary(), out)
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
    render_summary(s, out)
    text = out.getvalue()
    assert "verdict: safe concurrency 1 users; ttft_p50 broke the limit at 8 users (900 > 75)" in text
    assert "finding 1: Batch / admission cap (high) — running flat at 4" in text
