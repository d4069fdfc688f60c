"""The gate's decision over results built from synthetic histograms: PASS, FAIL beyond the noise,
INCONCLUSIVE for thin or noisy runs (with how many more requests), tails of single runs, comparability."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from llmload.gate.decide import decide, judge
from llmload.gate.figures import Figure
from llmload.gate.limits import DEFAULT_LIMITS
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.results import RunSetup, build_result
from llmload.results.model import RunResult

MS = 1_000_000
CONFIG = {"api": "openai-chat", "model": "m", "host": "http://127.0.0.1:1", "max_tokens_cap": None, "ignore_eos": False}
PROFILE = {"name": "tiny", "classes": [{"name": "a"}, {"name": "b"}]}


def run(n: int = 2000, ttft: float = 50.0, itl: float = 10.0, spread: float = 0.05, seed: int = 1,
        errors: int = 0, users: int = 8) -> RunResult:  # fmt: skip
    """``n`` requests per class a/b: lognormal TTFT around ``ttft`` ms, 4 tokens ``itl`` ms apart (x lognormal)."""
    rng = np.random.default_rng(seed)
    r = Recorder()
    for cls in ("a", "b"):
        for t, g in zip(rng.lognormal(np.log(ttft), spread, n), rng.lognormal(np.log(itl), spread, n), strict=True):
            rec = RequestRecord(cls, input_tokens=8, max_tokens=4)
            rec.start_ns = 0
            rec.chunk_ns = [int((t + g * i) * MS) for i in range(4)]
            rec.end_ns = rec.chunk_ns[-1] + MS
            settle_token_counts(rec, None, None)
            rec.outcome = "ok"
            r.add(rec)
        for _ in range(errors):
            rec = RequestRecord(cls, input_tokens=8, max_tokens=4)
            rec.outcome, rec.error_kind = "error", "http_500"
            r.add(rec)
    res = build_result(r.snapshot(), duration_s=30.0, users_max=users, weights={"a": 1, "b": 1},
                       setup=RunSetup.from_summary(CONFIG, PROFILE))  # fmt: skip
    return res


def test_two_samples_of_the_same_server_pass():
    for seed in range(5):
        g = decide(run(seed=seed), run(seed=seed + 100), DEFAULT_LIMITS)
        assert g.status == "PASS" and g.exit_code == 0, g.reasons
        assert {c.scope for c in g.checks} == {"overall", "a", "b"} and len(g.checks) == 3 * len(DEFAULT_LIMITS)


def test_itl_plus_20_percent_fails_naming_the_metric():
    g = decide(run(), run(itl=12.0, seed=7), DEFAULT_LIMITS)
    assert g.status == "FAIL" and g.exit_code == 1
    failed = {(c.scope, c.metric) for c in g.checks if c.status == "FAIL"}
    assert {("overall", "tpot_p50"), ("overall", "itl_p50"), ("a", "tpot_p50")} <= failed
    assert "ttft_p50" not in {m for _, m in failed}
    assert g.reasons[0].startswith("overall tpot_p50: regressed +20") or "tpot_p50: regressed" in " ".join(g.reasons)


def test_ttft_plus_50_percent_fails_on_ttft():
    g = decide(run(), run(ttft=75.0, seed=9), DEFAULT_LIMITS)
    assert g.status == "FAIL"
    check = next(c for c in g.checks if c.scope == "overall" and c.metric == "ttft_p50")
    assert check.status == "FAIL" and 0.45 < check.change < 0.55 and check.change_range[0] > 0.10


def test_a_thin_candidate_is_inconclusive_and_says_how_many_more_requests():
    g = decide(run(n=1000), run(n=10, seed=3), DEFAULT_LIMITS)
    assert g.status == "INCONCLUSIVE" and g.exit_code == 3
    p99 = next(c for c in g.checks if c.scope == "overall" and c.metric == "ttft_p99")
    assert p99.status == "INCONCLUSIVE"
    assert p99.reason == "candidate: 20 requests of overall, a p99 interval needs at least 368: 348 more requests would give one"
    assert any("a p99 interval needs at least 368" in r for r in g.reasons)


def test_a_noisy_candidate_over_the_limit_is_inconclusive_with_the_requests_that_would_decide():
    b = Figure(100.0, 99.0, 101.0, n=5000)
    c = Figure(108.0, 95.0, 122.0, n=200)  # +8 % against a 5 % limit, +-13 % noise
    check = judge("overall", "tpot_p50", 0.05, b, c)
    assert check.status == "INCONCLUSIVE" and "over the limit within the noise" in check.reason
    assert "more requests in the candidate would decide (n=200)" in check.reason
    more = int(check.reason.split("about ")[1].split(" more")[0])
    assert 1000 < more < 20000  # the noise must shrink ~5x: ~25x the samples


def test_pass_within_the_limit_with_noise_below_half_of_it():
    b, c = Figure(100.0, 99.0, 101.0, n=5000), Figure(103.0, 101.0, 105.5, n=3000)
    assert judge("overall", "tpot_p50", 0.05, b, c).status == "PASS"  # range reaches +6.6 %, noise < 2.5 %
    wide = Figure(103.0, 95.0, 112.0, n=300)
    assert judge("overall", "tpot_p50", 0.05, b, wide).status == "INCONCLUSIVE"


def test_a_single_runs_tail_beyond_its_noise_is_inconclusive_unless_strict():
    b, c = Figure(100.0, 95.0, 105.0, n=2000), Figure(180.0, 170.0, 190.0, n=2000)
    soft = judge("overall", "ttft_p99", 0.15, b, c)
    assert soft.status == "INCONCLUSIVE" and "--strict-tails" in soft.reason and "--repeat" in soft.reason
    assert judge("overall", "ttft_p99", 0.15, b, c, strict_tails=True).status == "FAIL"
    assert judge("overall", "ttft_p50", 0.15, b, c).status == "FAIL"
    runs_b, runs_c = replace(b, runs=True, n=3), replace(c, runs=True, n=3)
    assert judge("overall", "ttft_p99", 0.15, runs_b, runs_c).status == "FAIL"  # repetitions carry run-to-run spread


def test_error_rate_is_judged_in_points():
    g = decide(run(n=2000), run(n=2000, errors=200, seed=4), {"error_rate": 0.01})
    assert g.status == "FAIL" and all(c.metric == "error_rate" for c in g.checks)
    check = next(c for c in g.checks if c.scope == "overall")
    assert check.change == pytest.approx(400 / 4400) and check.change_range[0] > 0.01
    assert decide(run(n=2000), run(n=2000, seed=5), {"error_rate": 0.01}).status == "PASS"


def test_runs_that_differ_are_inconclusive_with_every_difference_listed():
    base = run()
    other = replace(run(seed=2, users=4), setup=RunSetup.from_summary({**CONFIG, "model": "m2", "host": "http://10.0.0.1:8000"},
                                                                  {"name": "other", "classes": []}))  # fmt: skip
    g = decide(base, other, DEFAULT_LIMITS)
    assert g.status == "INCONCLUSIVE" and g.exit_code == 3
    keys = [d.key for d in g.differences]
    assert keys == ["profile", "model", "host", "users"]
    assert "not comparable: profile: tiny vs other" in g.reasons and "not comparable: users: 8 vs 4" in g.reasons
    allowed = decide(base, replace(run(seed=2), setup=RunSetup.from_summary({**CONFIG, "host": "http://10.0.0.1:8000"}, PROFILE)), DEFAULT_LIMITS,
                     allow=["host"])  # fmt: skip
    assert allowed.status == "PASS" and not allowed.differences
    even_a_fail = decide(base, replace(run(itl=12.0), setup=RunSetup.from_summary({**CONFIG, "model": "m2"}, PROFILE)), DEFAULT_LIMITS)
    assert even_a_fail.status == "INCONCLUSIVE"


def test_a_repeat_aggregate_is_read_when_present():
    def with_repeat(res: RunResult, p99s: list[float]) -> RunResult:
        agg = {"ttft_p99_ms": {"median": float(np.median(p99s)), "min": min(p99s), "max": max(p99s), "cv": 0.02,
                               "values": p99s}}  # fmt: skip
        return replace(res, extra={"repeat": {"runs": len(p99s), "aggregate": {"overall": agg}}})

    base = with_repeat(run(), [60.0, 61.0, 62.0])
    cand = with_repeat(run(seed=3), [90.0, 92.0, 95.0])
    g = decide(base, cand, {"ttft_p99": 0.15})
    overall = next(c for c in g.checks if c.scope == "overall")
    assert overall.baseline.runs and overall.baseline.n == 3 and overall.baseline.value == 61.0
    assert overall.status == "FAIL" and g.status == "FAIL"
    a = next(c for c in g.checks if c.scope == "a")
    assert not a.baseline.runs  # no aggregate for the class: its run's own interval
