"""The console table's extra lines: TTFT grades, output tok/s per GPU, goodput and the SLO verdict."""

from __future__ import annotations

import io
from dataclasses import replace

from llmload.metrics.parts.goodput import SloFigures
from llmload.metrics.parts.prefix_cache import CacheFigures
from llmload.report.console import render_summary
from tests.helpers.samples import slo_result


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
    plain = replace(result, overall=result.overall.with_part(SloFigures()), steps=(),
                    classes={n: s.with_part(SloFigures()) for n, s in result.classes.items()})  # fmt: skip
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


def _cached(result, interrupted: int, server: dict | None):
    o = replace(result.overall, interrupted=interrupted).with_part(CacheFigures(841, 0.5227))
    return replace(result, overall=o, classes={}, steps=(), server=server)


LLAMACPP_RATE = {"signals": {"prefix_cache_hit_rate": {"unit": "ratio", "value": 0.617763, "from": "counters",
                                                       "hits": 1718.0, "queries": 2781.0}}}  # fmt: skip


def test_the_engines_cache_figure_stands_beside_the_clients_and_the_cut_requests_are_named():
    """llama.cpp (88 M model, 4 users, 5 s of 4-turn conversations): usage 52.3 %, the server's counters 61.8 %.

    The 4 requests cut at the end had their prompts counted by the server and no usage at the
    client; the console printed the client's figure alone, so the two sides read as disagreeing.
    """
    text = rendered(_cached(slo_result(gpus=0), 4, LLAMACPP_RATE))
    line = next(x for x in text.splitlines() if x.startswith("prefix cache"))
    assert line == (
        "prefix cache (the server's usage.cached_tokens): 841 prompt tokens cached, hit ratio 52.3 %; "
        "engine counters: 61.8 % (1,718 of 2,781 prompt tokens), which also counts the prompts of the 4 requests "
        "interrupted at the end (no usage reached the client; --stop-timeout lets them finish)"
    )
    whole = rendered(_cached(slo_result(gpus=0), 0, LLAMACPP_RATE))
    assert "hit ratio 52.3 %; engine counters: 61.8 % (1,718 of 2,781 prompt tokens)\n" in whole
    alone = rendered(_cached(slo_result(gpus=0), 0, None))
    assert "hit ratio 52.3 %\n" in alone and "engine" not in alone.split("prefix cache")[1].splitlines()[0]


def test_the_header_counts_sessions_when_every_request_was_a_sessions_turn():
    from tests.helpers.session_data import session_result

    result = session_result({1: 50.0, 4: 60.0, 8: 120.0})
    text = rendered(result)
    assert "\nllmload summary: 90.0 s, up to 8 sessions, api openai-chat, model m\n" in text
    assert result.users_max == 8  # the summary's key and value are what they were
    mixed = rendered(session_result({1: 50.0, 4: 60.0, 8: 120.0}, single=True))
    assert "\nllmload summary: 90.0 s, up to 8 users, api openai-chat, model m\n" in mixed


def test_a_trace_of_sessions_says_sessions_sent_and_their_turns():
    from llmload.results import from_summary
    from tests.helpers import samples

    s = samples.open_loop_summary(trace=True)
    assert "trace replay mooncake.jsonl: 1200 of 1500 entries sent at speedup 2" in rendered(from_summary(s))
    s["overall"]["by_turn"] = {"1": {"requests": 40, "ok": 40}, "2": {"requests": 80, "ok": 80}}  # 120 requests: all turns
    assert "trace replay mooncake.jsonl: 1200 of 1500 sessions sent (120 turns) at speedup 2" in rendered(from_summary(s))
