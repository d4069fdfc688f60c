from __future__ import annotations

import math

from analysis_data import stats, step, views

from llmload.analysis.steps import Perf, derive_stats, median_ci, step_ci, step_views
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.histogram import Histogram
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet

MS = 1_000_000


def test_error_rate_counts_ok_and_errors_not_interrupted():
    d = derive_stats(stats(ok=95, errors=5, interrupted=7), users=4, steady_s=10.0)
    assert d["error_rate"] == 0.05
    assert derive_stats(stats(ok=0, errors=0, interrupted=3), 4, 10.0)["error_rate"] is None


def test_in_flight_is_littles_law_capped_at_users():
    # 20 requests started in 10 s, each 1.5 s on average: L = 2/s x 1.5 s = 3
    assert derive_stats(stats(ok=20, e2e=1500.0), users=8, steady_s=10.0)["in_flight_mean"] == 3.0
    # a closed loop cannot hold more requests than users
    assert derive_stats(stats(ok=20, e2e=9000.0), users=8, steady_s=10.0)["in_flight_mean"] == 8.0
    assert derive_stats(stats(ok=20), users=8, steady_s=0.0)["in_flight_mean"] is None


def test_median_ci_brackets_the_median_and_narrows_with_samples():
    small, big = Histogram(), Histogram()
    for v in range(1, 21):
        small.record(v / 1000.0)
    for v in range(1, 2001):
        big.record((v / 20) / 1000.0)  # 0.05 .. 100 ms
    lo, hi = median_ci(small)
    assert lo < small.percentile(0.5) * 1000 < hi
    # n = 20: ranks 10 +- 0.98*sqrt(20) = 10 +- 4.4 -> about the 6th and 15th samples
    assert 5.5 <= lo <= 6.5 and 14.5 <= hi <= 15.5
    blo, bhi = median_ci(big)
    assert (bhi - blo) / 50 < 0.1 < (hi - lo) / 10
    one = Histogram()
    one.record(0.042)
    assert median_ci(one) == (42.0, 42.0)
    assert median_ci(Histogram()) is None


def _rec(ttft_ms: float, n: int = 5) -> RequestRecord:
    r = RequestRecord("a", input_tokens=10, max_tokens=n)
    r.start_ns = 0
    r.chunk_ns = [int((ttft_ms + 10 * i) * MS) for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.outcome = "ok"
    return r


def test_step_ci_from_a_steps_histograms():
    m = MetricSet()
    for t in range(40, 60):
        m.add(_rec(float(t)))
    ci = step_ci(m)
    assert set(ci) == {"ttft_ms", "tpot_ms"}
    assert ci["ttft_ms"][0] < 50 < ci["ttft_ms"][1]
    assert math.isclose(ci["tpot_ms"][0], 10.0, rel_tol=0.02)
    assert step_ci(None) == {} and step_ci(MetricSet()) == {}


def test_step_views_read_entries_in_index_order_with_classes_and_signals():
    v = views(
        step(1, 4, ttft=60.0, server={"waiting": 2.0}, classes={"a": stats(ttft=70.0, ok=5)}),
        step(-1, 1, ttft=50.0, ci={"ttft_ms": [45.0, 55.0]}),
        step(0, 1, ttft=52.0),
    )
    assert [s.index for s in v] == [-1, 0, 1]
    assert v[0].interval("ttft") == (45.0, 55.0) and v[1].interval("ttft") is None
    assert v[2].s("waiting") == 2.0 and v[2].s("running") is None and v[2].g("utilization") is None
    assert v[2].classes["a"].ttft_p50 == 70.0 and v[2].perf.value("ttft_p50") == 60.0
    assert v[0].label == "the baseline pre-run" and v[2].label == "4 users"


def test_whole_run_view_without_a_ladder_uses_the_run_signals():
    s = {
        "users_max": 8,
        "duration_s": 30.0,
        "overall": stats(ok=40, steady_s=30.0),
        "classes": {"a": stats(ok=40)},
        "server": {"signals": {
            "waiting": {"unit": "requests", "samples": 10, "mean": 3.0, "min": 0.0, "max": 7.0, "p50": 3.0, "last": 2.0},
            "preemptions": {"unit": "requests", "increase": 30.0, "rate_per_s": 1.0, "rate_max_per_s": 4.0},
            "ttft_ms": {"count": 40, "mean": 120.0, "p50": 100.0},
            "prefix_cache_hit_rate": {"unit": "ratio", "value": 0.3, "from": "counters"},
        }},
        "gpu": {"signals": {"utilization": {"unit": "ratio", "mean": 0.9, "max": 1.0}}},
    }  # fmt: skip
    (v,) = step_views(s)
    assert v.index is None and v.users == 8 and v.steady_s == 30.0 and v.label == "8 users (whole run)"
    assert v.s("waiting") == 3.0 and v.s("waiting", "max") == 7.0
    assert v.s("preemptions_rate_per_s") == 1.0 and v.s("preemptions_rate_per_s", "max") == 4.0
    assert v.s("ttft_mean_ms") == 120.0 and v.s("prefix_cache_hit_rate") == 0.3
    assert v.g("utilization") == 0.9


def test_perf_from_missing_stats_is_empty():
    p = Perf.from_stats(None, 4, 10.0)
    assert p.finished == 0 and p.ttft_p50 is None and p.error_rate is None
    p = Perf.from_stats(stats(ok=10, errors=2, input_tokens=300), 4, 10.0)
    assert p.finished == 12 and p.input_tokens_mean == 300.0
