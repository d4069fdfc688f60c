from __future__ import annotations

from llmload.analysis.steps import Perf, per_user, step_views
from llmload.results import from_summary
from llmload.results.summary_reader import stats_from_dict
from tests.helpers.analysis_data import stats, step, views


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
    (v,) = step_views(from_summary(s))
    assert v.index is None and v.users == 8 and v.steady_s == 30.0 and v.label == "8 users (whole run)"
    assert v.s("waiting") == 3.0 and v.s("waiting", "max") == 7.0
    assert v.s("preemptions_rate_per_s") == 1.0 and v.s("preemptions_rate_per_s", "max") == 4.0
    assert v.s("ttft_mean_ms") == 120.0 and v.s("prefix_cache_hit_rate") == 0.3
    assert v.g("utilization") == 0.9


def test_perf_from_missing_stats_is_empty():
    p = Perf.from_stats(None, 4, 10.0)
    assert p.finished == 0 and p.ttft_p50 is None and p.error_rate is None
    assert Perf.from_stats(stats_from_dict({}), 4, 10.0) == p
    p = Perf.from_stats(stats_from_dict(stats(ok=10, errors=2, input_tokens=300)), 4, 10.0)
    assert p.finished == 12 and p.input_tokens_mean == 300.0


def test_per_user_is_the_children_of_a_fan_out():
    assert per_user(stats_from_dict(stats())) == 1
    fan = {"agent": {"sessions": {}, "fanout": {"fanouts": 4, "children_started": 9}}}  # one fan-out under way
    assert per_user(stats_from_dict(stats() | fan)) == 3
    none = {"agent": {"sessions": {}, "fanout": {"fanouts": 0, "children_started": 0}}}
    assert per_user(stats_from_dict(stats() | none)) == 1
