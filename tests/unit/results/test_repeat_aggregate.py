"""The aggregate of repeated runs: median, range and CV per scope and metric; the ladder's safe level per run."""

from __future__ import annotations

import statistics

import pytest

from llmload.results.repeat_aggregate import aggregate, aggregate_metrics, safe_levels, spread


def _stats(ttft_p99: float, ok: int = 100, errors: int = 0, tok_s: float = 50.0) -> dict:
    return {
        "ok": ok,
        "errors": errors,
        "requests": ok + errors,
        "output_tokens_per_s": tok_s,
        "requests_per_s": 5.0,
        "ttft_ms": {"p50": 50.0, "p90": 55.0, "p99": ttft_p99},
        "tpot_ms": {"p50": 10.0, "p90": 10.5, "p99": 11.0},
    }


def _summary(ttft_p99: float, **kw) -> dict:
    return {"overall": _stats(ttft_p99, **kw), "classes": {"chat": _stats(ttft_p99, **kw)}}


def test_spread_is_median_range_and_sample_cv():
    s = spread([80.0, 100.0, 120.0])
    assert (s["median"], s["min"], s["max"]) == (100.0, 80.0, 120.0)
    assert s["cv"] == pytest.approx(statistics.stdev([80, 100, 120]) / 100, abs=1e-4)  # 0.2
    assert s["values"] == [80.0, 100.0, 120.0]
    assert spread([5.0])["cv"] is None  # one value: no spread
    assert spread([0.0, 0.0])["cv"] is None  # a zero mean: no ratio


def test_every_scope_and_metric_in_the_gates_shape():
    agg = aggregate_metrics([_summary(80), _summary(120, errors=5), _summary(100)])
    assert list(agg) == ["overall", "chat"]
    p99 = agg["overall"]["ttft_p99_ms"]
    assert (p99["median"], p99["min"], p99["max"]) == (100.0, 80.0, 120.0)
    err = agg["chat"]["error_rate"]
    assert err["values"] == [0.0, pytest.approx(5 / 105), 0.0] and err["median"] == 0.0
    assert agg["overall"]["tpot_p50_ms"]["cv"] == 0.0
    assert agg["overall"]["output_tokens_per_s"]["median"] == 50.0
    assert "itl_p50_ms" not in agg["overall"]  # no repetition had it


def test_a_repetition_without_successful_requests_leaves_its_latencies_out():
    agg = aggregate_metrics([_summary(80), _summary(999, ok=0, errors=10, tok_s=0.0)])
    assert agg["overall"]["ttft_p99_ms"]["values"] == [80.0]
    assert agg["overall"]["error_rate"]["values"] == [0.0, 1.0]
    assert agg["overall"]["output_tokens_per_s"]["values"] == [50.0, 0.0]


def _ladder(safe_users: int | None, status: str = "ok") -> dict:
    return {**_summary(80), "steps": [{"index": 0}], "verdict": {"status": status, "safe_users": safe_users}}


def test_the_safe_level_per_repetition():
    safe = safe_levels([_ladder(8), _ladder(8), _ladder(8)])
    assert safe["text"] == "safe 8 users in 3 of 3 runs" and safe["values"] == [8, 8, 8]
    split = safe_levels([_ladder(8), _ladder(4, "breach"), _ladder(None, "breach")])
    assert split["level"] == 4 and split["count"] == 1  # a tie: the lower (cautious) level
    assert split["text"] == "safe 4 users in 1 of 3 runs (per run: 8, 4, none)"
    assert split["status"] == ["ok", "breach", "breach"]
    assert safe_levels([_ladder(None), _ladder(None)])["text"] == "no safe level in any of 2 runs"
    assert safe_levels([_summary(80)]) is None  # no ladder


def test_a_rate_ladders_safe_rate():
    runs = [{**_ladder(None), "verdict": {"status": "ok", "safe_users": 16, "safe_rate": 4.0}} for _ in range(2)]
    assert safe_levels(runs)["text"] == "safe 4 req/s in 2 of 2 runs"


def test_the_repeat_block():
    rep = aggregate([_ladder(8), _ladder(8)], seeds=[7, 8], paths=["rep-1.summary.json", "rep-2.summary.json"],
                    exit_codes=[0, 0])  # fmt: skip
    assert rep["runs"] == 2 and rep["seeds"] == [7, 8] and rep["exit_codes"] == [0, 0]
    assert rep["safe"]["text"] == "safe 8 users in 2 of 2 runs"
    assert rep["aggregate"]["overall"]["ttft_p99_ms"]["median"] == 80.0
    assert rep["steady"] == {"values": [None, None], "count": 0, "text": ""}


def test_steadiness_per_repetition():
    from llmload.results.repeat_aggregate import steadiness

    runs = [{"steady": {"run": {"steady": True}, "steps": []}}, {"steady": {"run": {"steady": False}, "steps": []}},
            {"steady": {"run": None, "steps": [{"steady": True}, {"steady": True}]}},
            {"steady": {"run": None, "steps": [{"steady": True}, {"steady": None}]}}]  # fmt: skip
    assert steadiness(runs) == {"values": [True, False, True, None], "count": 2, "text": "steady in 2 of 4 runs"}
