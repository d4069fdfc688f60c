from __future__ import annotations

from llmload.analysis.baseline import MIN_REQUESTS, choose_baseline
from tests.helpers.analysis_data import analyzed, step, summary, views


def test_the_pre_run_is_preferred_then_the_one_user_step():
    b, problem, note = choose_baseline(views(step(-1, 1, ttft=40.0), step(0, 1, ttft=50.0), step(1, 4)))
    assert problem is None and note == "" and b.source == "pre-run" and b.step.index == -1
    b, _, _ = choose_baseline(views(step(-1, 1, ok=1), step(0, 1, ttft=50.0), step(1, 4)))
    assert b.source == "step" and b.step.index == 0  # a pre-run with too few answers is passed over
    b, _, _ = choose_baseline(views(step(0, 1), step(1, 4)))
    assert b.source == "step" and analyzed(summary([step(0, 1), step(1, 4)]))["baseline"]["users"] == 1


def test_a_ladder_without_a_one_user_step_uses_its_lowest_step_and_says_so():
    b, problem, note = choose_baseline(views(step(0, 2, ttft=60.0), step(1, 4)))
    assert problem is None and b.source == "lowest-step" and b.step.users == 2
    assert "no 1-user step" in note


def test_too_few_or_no_successful_baseline_requests():
    b, problem, note = choose_baseline(views(step(0, 1, ok=MIN_REQUESTS - 1), step(1, 4)))
    assert b is None and problem == "insufficient_data" and "--step-time" in note
    b, problem, _ = choose_baseline(views(step(0, 1, ok=0, errors=5), step(1, 4)))
    assert b is None and problem == "no_baseline"
    assert choose_baseline([])[1] == "no_baseline"


def test_baseline_dict_carries_p50_and_p99_per_metric_and_class():
    entry = step(0, 1, ttft=50.0, ttft99=90.0, tpot=20.0, ci={"ttft_ms": [45.0, 55.0]})
    entry["classes"] = {"a": entry["overall"]}
    b, _, _ = choose_baseline(views(entry, step(1, 4)))
    assert b.ref().step == 0 and b.ref().source == "step"
    d = analyzed(summary([entry, step(1, 4)]))["baseline"]  # the summary's form: the step's own figures
    assert d["step"] == 0 and d["source"] == "step" and d["requests"] == 20
    assert d["ttft_ms"] == {"p50": 50.0, "p99": 90.0} and d["tpot_ms"]["p50"] == 20.0
    assert d["classes"]["a"]["ttft_ms"]["p99"] == 90.0 and d["p50_ci95"] == {"ttft_ms": [45.0, 55.0]}
    assert b.class_perf("a").ttft_p50 == 50.0 and b.class_perf("missing") is None
