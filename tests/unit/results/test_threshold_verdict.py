"""Thresholds judged on a run's results: value, interval, passed, the note, and the exit code."""

from __future__ import annotations

import io
from dataclasses import replace

from llmload.metrics.parts.goodput import SloFigures
from llmload.metrics.thresholds import parse_thresholds
from llmload.report.console import render_summary
from llmload.results import from_summary, to_summary
from llmload.results.model import Goodput, Latency, RunResult, Stats
from llmload.results.threshold_verdict import ThresholdResult, evaluate, exit_code


def _result(errors: int = 0, ok: int = 400) -> RunResult:
    ttft = Latency(count=ok, p50=50.0, p90=52.0, p99=55.0, ci95={"p50": (49.8, 50.3), "p90": (51.0, 53.0), "p99": (53.0, 58.0)})
    s = Stats(requests=ok + errors, ok=ok, errors=errors, output_tokens_per_s=1200.0,
              latency={"ttft": ttft, "tpot": Latency(count=ok, p50=10.0, ci95={"p50": (9.9, 10.1), "p90": None, "p99": None})})  # fmt: skip
    thin = Stats(requests=20, ok=20, latency={"ttft": Latency(count=20, p99=90.0, ci95={"p99": None})})
    return RunResult(duration_s=10.0, users_max=4, overall=s, classes={"a": s, "thin": thin})


def test_each_threshold_gets_its_value_interval_and_verdict():
    res = evaluate(_result(), parse_thresholds(["ttft_p99_ms<40", "ttft_p50_ms<60", "output_tokens_per_s>1000"]))
    fail, ok, rate = res
    assert (fail.value, fail.ci95, fail.passed) == (55.0, (53.0, 58.0), False)
    assert ok.passed is True and ok.note == ""
    assert rate.passed is True and rate.ci95 is None
    assert exit_code(res) == 1


def test_a_limit_inside_the_interval_is_noted():
    (t,) = evaluate(_result(), parse_thresholds("ttft_p99_ms<56"))
    assert t.passed is True and "inside the 95 % interval" in t.note


def test_error_rate_has_a_wilson_interval_and_too_few_samples_are_said():
    (err,) = evaluate(_result(errors=4, ok=396), parse_thresholds("error_rate<0.05"))
    assert err.value == 0.01 and err.passed and 0.003 < err.ci95[0] < 0.01 < err.ci95[1] < 0.03
    (thin,) = evaluate(_result(), parse_thresholds("thin:ttft_p99_ms<100"))
    assert thin.passed is True and thin.note == "n=20: too few for a p99 interval (needs 368)"


def test_a_figure_the_run_lacks_is_inconclusive():
    res = evaluate(_result(), parse_thresholds(["goodput.attainment>=0.99", "ttft_p50_ms<60"]))
    assert res[0].passed is None and "no SLOs" in res[0].note
    assert exit_code(res) == 3
    r = _result()
    with_slo = replace(r, overall=r.overall.with_part(SloFigures(Goodput(good_requests=396, attainment=0.99))))
    (att,) = evaluate(with_slo, parse_thresholds("goodput.attainment>=0.99"))
    assert att.passed is True and att.ci95 is not None
    assert exit_code(evaluate(r, parse_thresholds("ttft_p50_ms<60"))) == 0 and exit_code(()) == 0


def test_the_summary_holds_them_and_the_console_shows_the_table():
    r = _result()
    r = replace(r, thresholds=evaluate(r, parse_thresholds(["ttft_p99_ms<40", "ttft_p50_ms<60"])))
    d = to_summary(r)
    assert d["thresholds"][0] == {"expr": "ttft_p99_ms<40", "value": 55.0, "ci95": [53.0, 58.0], "passed": False, "note": ""}
    assert from_summary(d).thresholds == r.thresholds
    assert "thresholds" not in to_summary(replace(r, thresholds=()))
    out = io.StringIO()
    render_summary(r, out)
    text = out.getvalue()
    assert "thresholds: FAIL (1 of 2 failed; exit code 1)" in text
    line = next(ln for ln in text.splitlines() if "ttft_p99_ms<40" in ln)
    assert "55" in line and "[53, 58]" in line and line.rstrip().endswith("FAIL")
    assert ThresholdResult("x").status == "no value"
