"""Every headline percentile carries its 95 % interval: built from the histograms, written to the summary
(``ci95``), read back, and shown by the console as ``p99 812 ms (±9 %)`` or ``(n=74: too few for a p99)``."""

from __future__ import annotations

import io

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.report.console import render_summary
from llmload.report.intervals import interval_rows, percentile_text
from llmload.results import build_result, from_summary, to_summary
from llmload.results.model import Latency

MS = 1_000_000


def _rec(cls: str, ttft_ms: float, n: int = 4) -> RequestRecord:
    r = RequestRecord(cls, input_tokens=10, max_tokens=n)
    r.start_ns = 0
    r.chunk_ns = [int((ttft_ms + 10 * i) * MS) for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.outcome = "ok"
    return r


def _result(big: int = 400, small: int = 74):
    r = Recorder()
    for i in range(big):
        r.add(_rec("big", 50.0 + (i % 20)))  # 50..69 ms
    for i in range(small):
        r.add(_rec("small", 80.0 + (i % 10)))
    return build_result(r.snapshot(), duration_s=10.0, users_max=4, weights={"big": 1, "small": 1})


def test_headline_latencies_carry_intervals_per_class_and_overall():
    result = _result()
    big = result.classes["big"].lat("ttft")
    assert set(big.ci95) == {"p50", "p90", "p99"}
    lo, hi = big.ci95["p50"]
    assert lo <= big.p50 <= hi and lo > 55 and hi < 65
    assert big.ci95["p99"] is not None  # 400 >= 368
    small = result.classes["small"].lat("ttft")
    assert small.ci95["p99"] is None and small.ci95["p90"] is not None  # 74: too few for a p99, enough for a p90
    for m in ("ttft", "tpot", "itl", "e2e"):
        assert result.overall.lat(m).ci95, m
    assert not result.overall.lat("ttfo").ci95  # not a headline latency
    assert not result.overall.phases.lat("prefill").ci95


def test_the_summary_writes_ci95_and_reads_it_back():
    result = _result()
    d = to_summary(result)
    ci = d["classes"]["big"]["ttft_ms"]["ci95"]
    assert set(ci) == {"p50", "p90", "p99"} and len(ci["p50"]) == 2 and ci["p50"][0] <= d["classes"]["big"]["ttft_ms"]["p50"]
    assert d["classes"]["small"]["ttft_ms"]["ci95"]["p99"] is None
    assert "ci95" not in d["overall"]["ttfo_ms"] and "ci95" not in d["overall"]["phases"]["prefill_ms"]
    back = from_summary(d)
    assert back.classes["big"].lat("ttft").ci95["p50"] == tuple(ci["p50"])
    assert back.classes["small"].lat("ttft").ci95["p99"] is None


def test_percentile_text_says_the_interval_or_too_few():
    lat = Latency(count=500, p50=100.0, p90=300.0, p99=812.0, ci95={"p50": (99.0, 101.0), "p90": None, "p99": (760.0, 885.0)})
    assert percentile_text(lat, "p99") == "p99 812 ms (±9.0 %)"
    assert percentile_text(lat, "p50") == "p50 100 ms (±1.0 %)"
    lat = Latency(count=74, p99=812.0, ci95={"p99": None})
    assert percentile_text(lat, "p99") == "p99 812 ms (n=74: too few for a p99)"
    assert percentile_text(Latency(count=74, p99=812.0), "p99") == "p99 812 ms"  # an old summary: no interval known
    assert percentile_text(Latency(), "p99") is None


def test_the_console_shows_each_class_and_overall_with_its_intervals():
    out = io.StringIO()
    render_summary(_result(), out)
    text = out.getvalue()
    assert "95 % intervals (order statistics" in text and "fewest samples: p50 6, p90 36, p99 368" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("  small ") and "TTFT" in ln)
    assert "(n=74: too few for a p99)" in line and "p50 " in line and "(±" in line
    big = next(ln for ln in text.splitlines() if ln.startswith("  big ") and "TTFT" in ln)
    assert big.count("(±") == 3
    rows = interval_rows(_result())
    assert {(r["name"], r["metric"]) for r in rows} >= {("big", "ttft"), ("overall", "e2e")}
