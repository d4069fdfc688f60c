"""The console table's extra lines: TTFT grades, output tok/s per GPU, goodput and the SLO verdict."""

from __future__ import annotations

import io
from dataclasses import replace

from llmload.report.console import render_summary
from tests.unit.report.samples import slo_result


def rendered(result) -> str:
    out = io.StringIO()
    render_summary(result, out)
    return out.getvalue()


def test_grades_goodput_per_gpu_and_the_slo_verdict():
    result = slo_result(gpus=2)
    text = rendered(result)
    assert "TTFT p50 grade (excellent < 300 ms, good < 800 ms, pass < 1.5 s, poor < 2 s, bad): " in text
    assert "fast excellent (" in text and "slow pass (" in text
    per_gpu = result.overall.output_tokens_per_s / 2
    assert f"output tok/s per GPU: {per_gpu:.1f} (2 GPUs)" in text
    # 20 + 20 fast good, 20 + 10 slow good of 80
    assert "overall           70 good of 80      attainment  87.5%" in text
    assert "(ttft_ms <= 1200)" in text
    assert "SLO attainment >= 99.0% up to 1 user; at 4 users 75.0% (first failed: ttft_ms)" in text
    assert "attainment  good req/s" in text  # the ladder's column


def test_nothing_extra_without_slos_or_gpus():
    result = slo_result(gpus=0)
    plain = replace(result, overall=replace(result.overall, goodput=None), steps=(),
                    classes={n: replace(s, goodput=None) for n, s in result.classes.items()})  # fmt: skip
    text = rendered(plain)
    assert "goodput" not in text and "per GPU" not in text and "TTFT p50 grade" in text


def _as_rate_ladder(result, rates=(1.0, 2.0)):
    """``result``'s steps as a rate ladder's (every step at the -u cap of 4, each with its offered rate), re-judged."""
    from llmload.analysis import analyze

    steps = tuple(replace(st, users=4, rate_offered=r, rate_achieved=r) for st, r in zip(result.steps, rates, strict=True))  # fmt: skip
    rated = replace(result, steps=steps, judgement=None)
    return replace(rated, judgement=analyze(rated))


def test_a_rate_ladder_words_its_slo_line_and_recommended_limit_in_rates():
    text = rendered(_as_rate_ladder(slo_result(gpus=0)))
    assert "SLO attainment >= 99.0% up to 1 req/s; at 2 req/s 75.0% (first failed: ttft_ms)" in text
    verdict = next(line for line in text.splitlines() if line.startswith("verdict: "))
    assert "recommended rate limit" in verdict and "users" not in verdict


def test_an_inconclusive_rate_ladder_names_its_rates_not_its_cap():
    result = _as_rate_ladder(slo_result(gpus=0))
    v = result.judgement.verdict
    v = replace(v, status="inconclusive", note="inconclusive: few", inconclusive={"judged_status": "breach"},
                safe_rate=1.0, recommended_rate=1.0)  # fmt: skip
    text = rendered(replace(result, judgement=replace(result.judgement, verdict=v)))
    assert "(as measured, not to rely on: safe rate 1 req/s, recommended rate limit 1 req/s)" in text
    assert "safe concurrency" not in text
