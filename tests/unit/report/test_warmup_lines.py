"""The console's warm-up lines (a run with --warmup): its requests and TTFT beside the measured part's, its errors."""

from __future__ import annotations

import io

from llmload.report.warmup_lines import render_warmup


def test_the_warmup_line_sets_its_ttft_beside_the_measured_part_and_lists_its_errors():
    out = io.StringIO()
    render_warmup({"requests": 32, "ok": 30, "errors": 2, "duration_s": 6.0, "errors_by_kind": {"http_503": 2},
                   "errors_examples": {"http_503": "loading"}, "ttft_p50_ms": 1055.8, "ttft_p99_ms": 1074.7,
                   "measured_ttft_p50_ms": 51.8, "measured_ttft_p99_ms": 55.5}, out)  # fmt: skip
    assert out.getvalue().splitlines() == [
        "warm-up (not measured): 32 requests in 6 s, 2 failed; TTFT p50 1056 / p99 1075 ms, measured part p50 52 / p99 56 ms",
        "  warm-up errors: http_503 2, e.g. loading",
    ]


def test_no_warmup_writes_nothing_and_a_missing_ttft_is_a_dash():
    out = io.StringIO()
    render_warmup(None, out)
    assert out.getvalue() == ""
    render_warmup({"requests": 3, "duration_s": 1.5, "ttft_p50_ms": None}, out)
    assert "3 requests in 1.5 s; TTFT p50 - / p99 - ms" in out.getvalue()
