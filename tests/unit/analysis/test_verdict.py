from __future__ import annotations

from llmload.analysis.baseline import choose_baseline
from llmload.analysis.verdict import concurrency_of, judge_steps
from tests.helpers.analysis_data import analyzed, stats, step, summary, views


def verdict_of(*entries, degradation=0.5):
    v = views(*entries)
    b, problem, _ = choose_baseline(v)
    assert problem is None
    return judge_steps(v, b, degradation).to_dict()


def test_breach_at_the_first_step_after_the_baseline():
    v = verdict_of(step(0, 1, ttft=50.0, tpot=20.0), step(1, 4, ttft=80.0, tpot=21.0), step(2, 8, ttft=500.0))
    assert v["status"] == "breach" and v["safe_step"] == 0 and v["safe_users"] == 1
    assert v["breach"] == {"step": 1, "users": 4, "metric": "ttft_p50", "value": 80.0, "limit": 75.0, "baseline": 50.0,
                           "ratio": 1.6, "also": []}  # fmt: skip
    assert v["limits"] == {"ttft_p50_ms": 75.0, "tpot_p50_ms": 30.0, "error_rate": 0.01}
    assert v["top_users"] == 8 and v["steps_judged"] == 3


def test_no_breach_means_the_top_step_is_safe_and_the_ladder_should_go_higher():
    v = verdict_of(step(0, 1), step(1, 2, ttft=60.0, tpot=24.0), step(2, 4, ttft=74.0, tpot=29.0))
    assert v["status"] == "ok" and v["breach"] is None and v["safe_users"] == 4 == v["top_users"]
    assert "extend --ladder" in v["note"]
    assert v["recommended_limit"] == 4


def test_the_limit_is_inclusive_and_degradation_sets_it():
    assert verdict_of(step(0, 1, ttft=50.0), step(1, 4, ttft=75.0))["status"] == "ok"  # == (1 + 0.5) x baseline
    v = verdict_of(step(0, 1, ttft=50.0), step(1, 4, ttft=75.0), degradation=0.2)
    assert v["breach"]["metric"] == "ttft_p50" and v["breach"]["limit"] == 60.0 and v["degradation"] == 0.2


def test_error_rate_breach_with_latencies_fine():
    v = verdict_of(step(0, 1), step(1, 4), step(2, 8, ok=95, errors=5, kinds={"http_503": 5}))
    assert v["safe_users"] == 4
    assert v["breach"]["metric"] == "error_rate" and v["breach"]["value"] == 0.05 and v["breach"]["limit"] == 0.01
    # below 1 %: safe
    assert verdict_of(step(0, 1), step(1, 4, ok=199, errors=1))["status"] == "ok"


def test_errors_at_the_baseline_step_leave_no_safe_level():
    v = verdict_of(step(0, 1, ok=90, errors=10), step(1, 4))
    assert v["status"] == "breach" and v["breach"]["step"] == 0 and v["safe_users"] is None
    assert v["recommended_limit"] is None


def test_several_limits_broken_at_once_name_the_largest_excess():
    v = verdict_of(step(0, 1, ttft=50.0, tpot=20.0), step(1, 4, ttft=80.0, tpot=60.0))
    assert v["breach"]["metric"] == "tpot_p50" and v["breach"]["also"] == ["ttft_p50"]


def test_p99_variant_judged_separately():
    v = verdict_of(
        step(0, 1, ttft=50.0, ttft99=100.0, tpot=20.0, tpot99=30.0),
        step(1, 4, ttft=55.0, ttft99=140.0, tpot=21.0, tpot99=31.0),
        step(2, 8, ttft=60.0, ttft99=400.0, tpot=22.0, tpot99=33.0),
    )
    assert v["status"] == "ok" and v["safe_users"] == 8
    p99 = v["p99"]
    assert p99["status"] == "breach" and p99["safe_users"] == 4 and p99["breach"]["metric"] == "ttft_p99"
    assert p99["limits"] == {"ttft_p99_ms": 150.0, "tpot_p99_ms": 45.0, "error_rate": 0.01}


def test_an_under_sampled_step_stops_the_judgement():
    v = verdict_of(step(0, 1), step(1, 4), step(2, 8, ok=2), step(3, 16, ttft=900.0))
    assert v["status"] == "insufficient_data" and v["safe_users"] == 4 and v["breach"] is None
    assert "finished only 2 requests" in v["note"]


def test_per_class_verdicts_against_each_class_baseline():
    base = {"short": stats(ttft=20.0, ok=10), "long": stats(ttft=200.0, ok=10), "rare": stats(ttft=30.0, ok=1)}
    mid = {"short": stats(ttft=25.0, ok=10), "long": stats(ttft=400.0, ok=10), "rare": stats(ttft=30.0, ok=3)}
    v = verdict_of(step(0, 1, classes=base), step(1, 4, classes=mid))
    pc = v["per_class"]
    assert pc["short"]["status"] == "ok" and pc["short"]["safe_users"] == 4
    assert (
        pc["long"]["status"] == "breach"
        and pc["long"]["breach"]["metric"] == "ttft_p50"
        and pc["long"]["safe_users"] == 1
    )
    assert pc["rare"]["status"] == "no_baseline" and pc["rare"]["safe_users"] is None


def test_narrow_intervals_give_a_tight_band_and_the_safe_step_as_the_limit():
    ci = lambda t, p: {"ttft_ms": [t * 0.98, t * 1.02], "tpot_ms": [p * 0.98, p * 1.02]}  # noqa: E731
    v = verdict_of(
        step(0, 1, ttft=50.0, tpot=20.0, ci=ci(50, 20)),
        step(1, 4, ttft=60.0, tpot=22.0, ci=ci(60, 22)),
        step(2, 8, ttft=200.0, tpot=22.0, ci=ci(200, 22)),
    )
    assert v["safe_users"] == 4 and v["confidence"]["band_users"] == [4, 4]
    assert v["recommended_limit"] == 4 and "order statistics" in v["confidence"]["method"]


def test_a_wide_band_lowers_the_recommended_limit():
    ci = lambda t, p, w: {"ttft_ms": [t / w, t * w], "tpot_ms": [p, p]}  # noqa: E731
    v = verdict_of(
        step(0, 1, ttft=50.0, tpot=20.0, ci=ci(50, 20, 1.05)),
        step(1, 2, ttft=55.0, tpot=20.0, ci=ci(55, 20, 1.05)),
        step(2, 4, ttft=70.0, tpot=20.0, ci=ci(70, 20, 1.3)),  # p50 1.4x, but the interval reaches 1.8x
        step(3, 8, ttft=200.0, tpot=20.0, ci=ci(200, 20, 1.05)),
    )
    assert v["safe_users"] == 4 and v["confidence"]["band_users"] == [2, 4] and v["confidence"]["band_steps"] == [1, 2]
    assert v["recommended_limit"] == 2 and "wide" in v["recommended_note"]


def test_optimistic_band_end_can_reach_past_the_breach():
    ci = {"ttft_ms": [60.0, 100.0], "tpot_ms": [20.0, 20.0]}
    v = verdict_of(
        step(0, 1, ttft=50.0, ci={"ttft_ms": [49.0, 51.0]}), step(1, 4, ttft=80.0, ci=ci), step(2, 8, ttft=900.0)
    )
    assert v["safe_users"] == 1 and v["confidence"]["band_users"] == [1, 4]


def test_without_intervals_the_band_is_the_verdict():
    v = verdict_of(step(0, 1), step(1, 4), step(2, 8, ttft=500.0))
    assert v["confidence"]["band_users"] == [4, 4] and "no per-step confidence intervals" in v["confidence"]["method"]


def test_think_time_makes_the_limit_count_requests_in_flight():
    # 8 users, but 20 requests/10 s x 2 s = 4 in flight: users idle half the time
    (_, s) = views(step(0, 1), step(1, 8, e2e=2000.0))
    assert s.perf.in_flight == 4.0 and concurrency_of(s) == 4
    (_, busy) = views(step(0, 1), step(1, 8, e2e=3800.0))
    assert concurrency_of(busy) == 8


def test_analyze_statuses_without_ladder_or_baseline():
    s = analyzed({"overall": stats(), "classes": {}, "users_max": 4, "duration_s": 10.0})
    assert s["verdict"]["status"] == "no_ladder" and s["baseline"] is None
    assert s["verdict"]["safe_users"] is None and s["verdict"]["confidence"]["band_users"] == [None, None]
    s = analyzed(summary([step(0, 1, ok=0, errors=4), step(1, 4)]))
    assert s["verdict"]["status"] == "no_baseline" and s["baseline"] is None and s["verdict"]["top_users"] == 4
    s = analyzed(summary([step(0, 1, ok=2), step(1, 4)]))
    assert s["verdict"]["status"] == "insufficient_data"
    s = analyzed(summary([step(0, 2), step(1, 4)]))
    assert s["baseline"]["source"] == "lowest-step" and "no 1-user step" in s["verdict"]["baseline_note"]


def test_analyze_adds_derived_figures_to_every_step():
    s = analyzed(summary([step(0, 1, classes={"a": stats()}), step(1, 4, ok=90, errors=10)]))
    o = s["steps"][1]["overall"]
    assert o["error_rate"] == 0.1 and o["in_flight_mean"] == 4.0
    assert s["steps"][0]["classes"]["a"]["error_rate"] == 0.0


VERDICT_KEYS = {"status", "note", "degradation", "limits", "safe_step", "safe_users", "top_users", "steps_judged", "breach",
                "p99", "confidence", "recommended_limit", "recommended_note", "per_class", "inconclusive"}  # fmt: skip


def test_keys_match_docs_summary_schema():
    s = analyzed(summary([step(0, 1, classes={"a": stats()}, ci={"ttft_ms": [45.0, 55.0]}),
                         step(1, 4, ttft=500.0, classes={"a": stats(ttft=500.0)})]))  # fmt: skip
    v = s["verdict"]
    assert set(v) == VERDICT_KEYS
    assert set(v["breach"]) == {"step", "users", "metric", "value", "limit", "baseline", "ratio", "also"}
    assert set(v["p99"]) == {"status", "limits", "safe_step", "safe_users", "breach"}
    assert set(v["confidence"]) == {"band_users", "band_steps", "method", "note"}
    assert set(v["per_class"]["a"]) == {"status", "limits", "safe_step", "safe_users", "breach"}
    assert set(s["baseline"]) == {
        "step",
        "users",
        "source",
        "requests",
        "ttft_ms",
        "tpot_ms",
        "itl_ms",
        "e2e_ms",
        "p50_ci95",
        "classes",
    }
    assert set(s["baseline"]["e2e_ms"]) == {"p50", "p99", "mean"}
    assert {"error_rate", "in_flight_mean"} <= set(s["steps"][1]["overall"]) and {
        "error_rate",
        "in_flight_mean",
    } <= set(s["steps"][1]["classes"]["a"])
    for status_summary in (
        analyzed({"overall": stats(), "users_max": 1, "duration_s": 1.0}),
        analyzed(summary([step(0, 1, ok=0)])),
    ):
        assert set(status_summary["verdict"]) == VERDICT_KEYS


def rate_step(index, rate, achieved, **kw):
    entry = step(index, 16, **kw)
    entry.update(rate_offered=rate, rate_achieved=achieved)
    return entry


def test_a_rate_ladder_names_the_safe_rate_and_a_latency_breach():
    v = verdict_of(rate_step(0, 1.0, 1.0, ttft=50.0), rate_step(1, 2.0, 2.0, ttft=60.0), rate_step(2, 4.0, 3.9, ttft=90.0))
    assert v["status"] == "breach" and v["safe_rate"] == 2.0 and v["safe_step"] == 1
    assert v["breach"]["metric"] == "ttft_p50" and v["breach"]["rate"] == 4.0 and v["breach"]["users"] == 16


def test_a_rate_step_that_does_not_achieve_95_percent_of_its_offered_rate_breaks_the_limit():
    # Latencies fine, but the 8 req/s step only got 7 req/s out (the cap or the client fell short).
    v = verdict_of(rate_step(0, 2.0, 2.0), rate_step(1, 4.0, 3.9), rate_step(2, 8.0, 7.0))
    assert v["safe_rate"] == 4.0
    b = v["breach"]
    assert b["metric"] == "achieved_rate" and b["value"] == 7.0 and b["limit"] == 7.6 and b["rate"] == 8.0
    assert b["baseline"] == 2.0


def test_a_rate_ladder_without_a_breach_is_ok_at_its_top_rate_and_a_concurrency_ladder_has_no_safe_rate():
    v = verdict_of(rate_step(0, 1.0, 1.0), rate_step(1, 2.0, 2.0))
    assert v["status"] == "ok" and v["safe_rate"] == 2.0 and "extend --rate-ladder" in v["note"]
    assert "safe_rate" not in verdict_of(step(0, 1), step(1, 4))


def test_a_rate_ladder_recommends_a_rate_and_words_its_band_in_rates():
    """Every rate step runs at the same -u cap: "16 users either way" and a limit of 16 users said nothing."""
    ci = lambda t, w: {"ttft_ms": [t / w, t * w], "tpot_ms": [20.0, 20.0]}  # noqa: E731
    v = verdict_of(
        rate_step(0, 1.0, 1.0, ttft=50.0, tpot=20.0, ci=ci(50, 1.05)),
        rate_step(1, 2.0, 2.0, ttft=55.0, tpot=20.0, ci=ci(55, 1.05)),
        rate_step(2, 4.0, 4.0, ttft=70.0, tpot=20.0, ci=ci(70, 1.3)),  # p50 1.4x, but the interval reaches 1.8x
        rate_step(3, 8.0, 8.0, ttft=200.0, tpot=20.0, ci=ci(200, 1.05)),
    )
    assert v["safe_rate"] == 4.0 and v["confidence"]["band_steps"] == [1, 2]
    # the band's low end is a lower rate at the same users: it sets the limit (users alone never differed)
    assert v["recommended_rate"] == 2.0
    assert v["recommended_note"] == (
        "the confidence band is wide (safe for certain only up to 2 req/s): the limit is set at its low end"
    )
    assert v["confidence"]["note"].startswith("safe for certain up to 2 req/s, possibly up to 4 req/s")
    assert "users" not in v["recommended_note"] + v["confidence"]["note"]


def test_a_rate_ladder_recommends_its_safe_rate_and_a_concurrency_ladder_keeps_its_wording():
    v = verdict_of(rate_step(0, 1.0, 1.0), rate_step(1, 2.0, 2.0), rate_step(2, 4.0, 3.9, ttft=500.0))
    assert (v["safe_rate"], v["recommended_rate"]) == (2.0, 2.0)
    assert v["recommended_note"] == "the safe step's offered rate"
    assert v["confidence"]["note"].startswith("2 req/s either way")
    none = verdict_of(rate_step(0, 1.0, 1.0, ok=90, errors=10), rate_step(1, 2.0, 2.0))
    assert none["recommended_rate"] is None
    assert none["recommended_note"] == "no step is safe: no rate limit can be recommended"
    closed = verdict_of(step(0, 1), step(1, 4), step(2, 8, ttft=500.0))
    assert "recommended_rate" not in closed and closed["recommended_note"] == "the safe step's concurrency"
    assert closed["confidence"]["note"].startswith("4 users either way")


def embeddings_step(index, users, latency, classes=None):
    """A step of embeddings requests: one JSON answer each (TTFT = E2E = latency, no TPOT), a batch of 4 texts."""
    entry = step(index, users, ttft=latency, tpot=None, e2e=latency, classes=classes)
    entry["overall"]["inputs"] = {"requests": 20, "inputs": 80, "inputs_per_request": 4.0, "inputs_per_s": 8.0,
                                      "input_tokens": 8000, "input_tokens_per_s": 800.0}  # fmt: skip
    return entry


def test_an_embeddings_ladder_is_judged_on_latency_p50():
    a = lambda ms: {**stats(ttft=ms, tpot=None, e2e=ms), "inputs": {"requests": 20, "inputs": 80}}  # noqa: E731
    v = verdict_of(embeddings_step(0, 1, 40.0, {"a": a(40.0)}), embeddings_step(1, 4, 55.0, {"a": a(55.0)}),
                   embeddings_step(2, 8, 70.0, {"a": a(70.0)}))  # fmt: skip
    assert v["limits"] == {"e2e_p50_ms": 60.0, "error_rate": 0.01}
    assert v["status"] == "breach" and v["safe_users"] == 4
    assert v["breach"]["metric"] == "e2e_p50" and v["breach"]["value"] == 70.0 and v["breach"]["baseline"] == 40.0
    assert v["p99"]["limits"] == {"e2e_p99_ms": 90.0, "error_rate": 0.01}
    assert v["per_class"]["a"]["breach"]["metric"] == "e2e_p50"


def test_fan_out_makes_the_limit_count_the_sub_agents_requests_in_flight():
    # 8 sessions, each fan-out starts 2 sub-agents at once: 40 requests/10 s x 3 s = 12 in flight on average,
    # more than the sessions; the limit counts requests in flight (capped at 8 x 2)
    fan = {"agent": {"sessions": {}, "fanout": {"fanouts": 5, "children_started": 10, "child_requests": 20}}}
    (_, s) = views(step(0, 1), step(1, 8, ok=40, e2e=3000.0) | {"overall": stats(ok=40, e2e=3000.0) | fan})
    assert s.perf.in_flight == 12.0 and concurrency_of(s) == 12
    (_, capped) = views(step(0, 1), step(1, 8, ok=40, e2e=9000.0) | {"overall": stats(ok=40, e2e=9000.0) | fan})
    assert capped.perf.in_flight == 16.0 and concurrency_of(capped) == 16
    (_, plain) = views(step(0, 1), step(1, 8, ok=40, e2e=3000.0))  # no fan-out: one request per user at most
    assert plain.perf.in_flight == 8.0 and concurrency_of(plain) == 8
