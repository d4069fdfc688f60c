"""The verdict's slo, built end to end: records -> Recorder with SLOs -> build_result -> analyze -> summary -> loader."""

from __future__ import annotations

from dataclasses import replace

import pytest

from llmload.analysis import analyze
from llmload.analysis.slo_verdict import failed_slo, judge_slo
from llmload.ladder import StepWindow
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.parts.goodput import SloFigures
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder
from llmload.metrics.slo import SLO
from llmload.results import build_result, from_summary, to_summary
from llmload.results.model import Goodput, Stats
from llmload.results.setup import RunSetup

MS = 1_000_000


def rec(
    cls: str, ttft_ms: float, step: int | None, *, n: int = 5, itl_ms: float = 10, outcome: str = "ok"
) -> RequestRecord:
    r = RequestRecord(cls, input_tokens=10, max_tokens=n)
    r.start_ns = 0
    r.chunk_ns = [int((ttft_ms + itl_ms * i) * MS) for i in range(n)]
    r.end_ns = (r.chunk_ns[-1] if n else 0) + MS
    settle_token_counts(r, None, None)
    r.outcome = outcome
    r.error_kind = "http_500" if outcome == "error" else None
    r.step = step
    return r


def ladder_run(ttfts: dict[int, list[float]], *, slos: dict[str, SLO] | None, flag: SLO | None,
               errors: dict[int, int] | None = None, target: float = 0.99):  # fmt: skip
    """Steps 0.. with 10 s steady windows; ``ttfts[step]`` = one request of class ``a`` per value."""
    recorder = Recorder()
    recorder.set_slos(slos, flag)
    windows = []
    for i, values in ttfts.items():
        for t in values:
            recorder.add(rec("a", t, i))
            recorder.add(rec("b", 20, i))  # class b: always fast
        for _ in range((errors or {}).get(i, 0)):
            recorder.add(rec("a", 20, i, n=0, outcome="error"))
        windows.append(StepWindow(i, 2**i, 100.0 + 20 * i, 110.0 + 20 * i, 120.0 + 20 * i))
    steps = {int(key): MetricSet.from_wire(wire) for key, wire in recorder.drain_steps().items()}
    config = {"slo": flag.to_dict() if flag else None, "slo_attainment": target}
    profile = {"classes": [{"name": n, "weight": 1, **({"slo": s.to_dict()} if s and not s.empty else {})}
                           for n, s in (slos or {"a": None, "b": None}).items()]}  # fmt: skip
    result = build_result(recorder.snapshot(), duration_s=60.0, users_max=8, weights={"a": 1, "b": 1},
                          windows=windows, step_metrics=steps, setup=RunSetup.from_summary(config, profile),
                          slos=slos is not None)  # fmt: skip
    return result


def test_the_largest_step_meeting_the_target_and_the_slo_that_failed_first():
    flag = SLO(ttft_ms=100.0, tpot_ms=50.0)
    slos = {"a": SLO(ttft_ms=100.0, tpot_ms=50.0), "b": SLO(ttft_ms=100.0, tpot_ms=50.0)}
    # step 0: all good; step 1: 1 of 20 class-a requests slow (attainment 39/40 = 0.975 < 0.99);
    # step 2 would be all good again: not judged (first breach ends it).
    result = ladder_run({0: [50] * 20, 1: [50] * 19 + [500], 2: [50] * 20}, slos=slos, flag=flag)
    v = judge_slo(result)
    assert v.target == 0.99 and v.slos["a"] == {"ttft_ms": 100.0, "tpot_ms": 50.0}
    o = v.overall
    assert (o.status, o.safe_step, o.safe_users, o.attainment) == ("breach", 0, 1, 1.0)
    assert (o.failed_step, o.failed_users, o.failed_slo) == (1, 2, "ttft_ms")
    assert o.failed_attainment == pytest.approx(39 / 40)
    assert v.per_class["a"].status == "breach" and v.per_class["a"].failed_attainment == pytest.approx(19 / 20)
    assert (v.per_class["b"].status, v.per_class["b"].safe_step) == ("ok", 2)


def test_errors_fail_first_when_they_outnumber_the_misses():
    slos = {"a": SLO(ttft_ms=100.0), "b": SLO()}
    result = ladder_run({0: [50] * 20, 1: [50] * 19 + [500]}, slos=slos, flag=None, errors={1: 3})
    o = judge_slo(result).overall
    assert o.status == "breach" and o.failed_slo == "errors" and o.failed_attainment == pytest.approx(39 / 43)


def test_a_lower_target_lets_the_step_pass_and_too_few_requests_stop_the_judgement():
    slos = {"a": SLO(ttft_ms=100.0), "b": SLO()}
    result = ladder_run({0: [50] * 20, 1: [50] * 19 + [500], 2: [50]}, slos=slos, flag=None, target=0.9)
    o = judge_slo(result).overall
    assert o.status == "insufficient_data" and o.safe_step == 1 and "finished only 2 requests" in o.note


def test_no_slos_no_slo_verdict_and_the_summary_keeps_its_keys():
    result = ladder_run({0: [50] * 20}, slos=None, flag=None)
    assert result.overall.goodput is None and judge_slo(result) is None
    summary = to_summary(result)
    assert "goodput" not in summary["overall"] and "goodput" not in summary["steps"][0]["overall"]


def test_the_slo_verdict_survives_the_summary_round_trip():
    slos = {"a": SLO(ttft_ms=100.0), "b": SLO(ttft_ms=100.0)}
    result = ladder_run({0: [50] * 20, 1: [50] * 10 + [500] * 10}, slos=slos, flag=SLO(ttft_ms=100.0))
    result = replace(result, judgement=analyze(result))
    summary = to_summary(result)
    assert summary["overall"]["goodput"] == {
        "good_requests": 70, "attainment": 0.875, "requests_per_s": round(70 / 60, 3),
        "output_tokens_per_s": round(350 / 60, 3), "good_output_tokens": 350,
        "missed": {"ttft_ms": 10, "tpot_ms": 0, "e2e_ms": 0},
    }  # fmt: skip
    assert summary["steps"][1]["classes"]["a"]["goodput"]["attainment"] == 0.5
    assert summary["verdict"]["slo"]["overall"]["failed_slo"] == "ttft_ms"
    back = from_summary(summary)
    assert back.judgement.verdict.slo == result.judgement.verdict.slo
    assert back.overall.goodput.good_requests == 70 and back.steps[1].overall.goodput.missed["ttft_ms"] == 10
    assert judge_slo(back) == result.judgement.verdict.slo  # re-judged from the stored summary alone


def test_a_plain_run_is_met_or_missed_over_the_whole_run():
    result = ladder_run({0: [50] * 20}, slos={"a": SLO(ttft_ms=100.0), "b": SLO()}, flag=None)
    plain = replace(result, steps=())
    v = judge_slo(plain)
    assert v.overall.status == "met" and v.overall.attainment == 1.0
    strict = replace(plain, setup=replace(plain.setup, slo_attainment=1.0))
    assert judge_slo(strict).overall.status == "met"
    missed = replace(plain, overall=Stats(requests=10, ok=10).with_part(SloFigures(Goodput(9, 0.9, missed={"e2e_ms": 1}))))
    assert (judge_slo(missed).overall.status, judge_slo(missed).overall.failed_slo) == ("missed", "e2e_ms")


def test_no_goodput_no_failed_slo():
    assert failed_slo(Stats()) is None


def test_a_rate_ladder_step_with_too_few_requests_is_named_by_its_rate():
    slos = {"a": SLO(ttft_ms=100.0), "b": SLO()}
    result = ladder_run({0: [50] * 20, 1: [50] * 20, 2: [50]}, slos=slos, flag=None)
    rates = (1.0, 2.0, 4.0)
    steps = tuple(replace(st, users=8, rate_offered=r) for st, r in zip(result.steps, rates, strict=True))
    result = replace(result, steps=steps)
    o = judge_slo(result).overall
    assert o.status == "insufficient_data" and o.safe_step == 1
    assert o.note == "the step of 4 req/s finished only 2 requests (at least 3 needed)"
    closed = judge_slo(ladder_run({0: [50] * 20, 1: [50] * 20, 2: [50]}, slos=slos, flag=None)).overall
    assert closed.note == "the step of 4 users finished only 2 requests (at least 3 needed)"
