"""Each rule fires on its evidence and stays quiet otherwise (hand-built ladders, steady-window means)."""

from __future__ import annotations

from llmload.analysis.baseline import choose_baseline
from llmload.analysis.findings import build_context
from llmload.analysis.rules_memory import decode_bandwidth, kv_capacity, kv_fragmentation, prefill_interference
from llmload.analysis.rules_queue import (
    admission_cap,
    engine_saturated,
    errors_shedding,
    gateway_queueing,
    load_generator_saturated,
    scheduler_starved,
)
from llmload.analysis.verdict import judge_steps
from llmload.results import from_summary
from tests.helpers.analysis_data import stats, step, summary, views


def ctx_of(*entries, saturated=False, coarse=False, degradation=0.5):
    s = summary(list(entries), saturated=saturated)
    if coarse:
        s["gpu"] = {"devices": [{"key": "GPU-1", "coarse": ["memory_bandwidth_utilization"]}]}
    v = views(*entries)
    b, _, _ = choose_baseline(v)
    verdict = judge_steps(v, b, degradation) if b else None
    return build_context(v, b.step if b else None, verdict, from_summary(s), degradation)


def srv(waiting=0.0, running=1.0, kv=0.05, pre=0.0, **more):
    return {"waiting": waiting, "running": running, "kv_cache_usage": kv, "preemptions_rate_per_s": pre, **more}


def gpu(util=0.9, bw=0.4, **more):
    return {"utilization": util, "memory_bandwidth_utilization": bw, **more}


def only(findings, rule_id):
    assert [f.id for f in findings] == [rule_id], findings
    return findings[0]


# -- the load generator, errors -------------------------------------------------------------------


def test_load_generator_saturated():
    f = only(load_generator_saturated(ctx_of(step(0, 1), step(1, 4), saturated=True)), "load_generator_saturated")
    assert f.confidence == "high" and f.layer == "client" and f.evidence["saturated_processes"] == 1
    assert load_generator_saturated(ctx_of(step(0, 1), step(1, 4))) == []


def test_errors_shedding_names_what_the_errors_are():
    f = only(errors_shedding(ctx_of(step(0, 1), step(1, 4), step(2, 8, ok=80, errors=20, kinds={"http_429": 15, "http_500": 5}))),
             "errors_shedding")  # fmt: skip
    assert f.confidence == "high" and f.step == 2 and f.evidence["share_shed"] == 0.75 and "429" in f.change
    f = errors_shedding(ctx_of(step(0, 1), step(1, 4, ok=90, errors=10, kinds={"ttft_timeout": 10})))[0]
    assert f.confidence == "medium" and f.layer == "client" and "deadline" in f.change
    f = errors_shedding(ctx_of(step(0, 1), step(1, 4, ok=90, errors=10, kinds={"http_500": 10})))[0]
    assert f.confidence == "low" and f.layer == "engine"
    assert errors_shedding(ctx_of(step(0, 1), step(1, 4, ok=199, errors=1))) == []  # 0.5 %


# -- queueing -----------------------------------------------------------------------------------


def batch_starved(kv=0.04, util=0.62, with_gpu=True):
    g = (lambda: gpu(util=util, bw=0.36)) if with_gpu else (lambda: None)
    return (
        step(0, 1, ttft=50.0, tpot=17.0, server=srv(running=1.0, kv=0.01), gpu=g()),
        step(1, 4, ttft=65.0, tpot=17.0, server=srv(running=4.0, running_max=4.0, kv=kv), gpu=g()),
        step(2, 8, ttft=1190.0, tpot=17.0, server=srv(waiting=4.0, running=3.9, running_max=4.0, kv=kv), gpu=g()),
        step(3, 16, ttft=3800.0, tpot=17.0, server=srv(waiting=12.0, running=4.0, running_max=4.0, kv=kv), gpu=g()),
    )


def test_admission_cap_fires_on_a_flat_running_count_with_a_growing_queue():
    f = only(admission_cap(ctx_of(*batch_starved())), "admission_cap")
    assert f.confidence == "high" and f.step == 2 and f.users == 8 and f.explains == ("ttft",)
    assert f.evidence["running_ceiling"] == 4.0 and f.evidence["flat_steps"] == 3 and f.evidence["waiting"] == 4.0
    assert "--max-num-seqs" in f.change and any("room for a bigger batch" in t for t in f.evidence_text)
    assert admission_cap(ctx_of(*batch_starved(with_gpu=False)))[0].confidence == "medium"  # no GPU check
    assert (
        admission_cap(ctx_of(*batch_starved(util=0.97)))[0].confidence == "low"
    )  # GPU saturated: the cap may not matter


def test_admission_cap_quiet_when_running_grows_or_the_kv_cache_limits_it():
    growing = (
        step(0, 1, server=srv(running=1.0)),
        step(1, 4, server=srv(running=4.0)),
        step(2, 8, ttft=500.0, server=srv(waiting=2.0, running=8.0)),
        step(3, 16, ttft=900.0, server=srv(waiting=3.0, running=16.0)),
    )
    assert admission_cap(ctx_of(*growing)) == []
    assert admission_cap(ctx_of(*batch_starved(kv=0.95))) == []


def test_scheduler_starved_fires_when_requests_wait_and_the_gpu_idles():
    ladder = (
        step(0, 1, server=srv(), gpu=gpu(util=0.5)),
        step(1, 4, server=srv(running=4.0), gpu=gpu(util=0.45)),
        step(2, 8, ttft=300.0, server=srv(waiting=3.0, running=6.0, running_max=8.0), gpu=gpu(util=0.4)),
        step(3, 16, ttft=900.0, server=srv(waiting=8.0, running=8.0, running_max=8.0), gpu=gpu(util=0.4)),
    )
    f = only(scheduler_starved(ctx_of(*ladder)), "scheduler_starved")
    assert f.confidence == "high" and f.step == 2 and not f.evidence["at_batch_cap"]
    capped = scheduler_starved(ctx_of(*batch_starved(util=0.45)))[0]
    assert capped.confidence == "low" and capped.evidence["at_batch_cap"]  # the cap explains it first
    assert scheduler_starved(ctx_of(*batch_starved(util=0.62))) == []


def test_gateway_queueing_fires_when_the_engine_sees_fewer_requests_than_are_in_flight():
    ladder = (
        step(0, 1, ttft=50.0, server=srv(running=1.0)),
        step(1, 8, ttft=400.0, server=srv(running=2.0, ttft_mean_ms=60.0)),  # 8 in flight, 2 at the engine
    )
    f = only(gateway_queueing(ctx_of(*ladder)), "gateway_queueing")
    assert f.confidence == "high" and f.evidence["gap"] == 6.0 and f.evidence["server_ttft_mean_ms"] == 60.0
    medium = (step(0, 1, ttft=50.0, server=srv()), step(1, 8, ttft=400.0, server=srv(running=2.0)))
    assert gateway_queueing(ctx_of(*medium))[0].confidence == "medium"
    engine_holds_all = (step(0, 1, ttft=50.0, server=srv()), step(1, 8, ttft=400.0, server=srv(running=7.8)))
    assert gateway_queueing(ctx_of(*engine_holds_all)) == []
    assert gateway_queueing(ctx_of(*batch_starved())) == []  # the queue is in the engine


def test_engine_saturated_fires_past_the_knee_with_the_gpu_busy():
    ladder = (
        step(0, 1, ttft=50.0, server=srv(), gpu=gpu(util=0.9), tok_s=100.0),
        step(1, 4, ttft=60.0, server=srv(running=4.0), gpu=gpu(util=0.95), tok_s=380.0),
        step(2, 8, ttft=400.0, server=srv(waiting=2.0, running=6.0, queue_time_mean_ms=300.0, ttft_mean_ms=380.0),
             gpu=gpu(util=0.97), tok_s=400.0),
        step(3, 16, ttft=900.0, server=srv(waiting=8.0, running=8.0), gpu=gpu(util=0.98), tok_s=405.0),
    )  # fmt: skip
    f = only(engine_saturated(ctx_of(*ladder)), "engine_saturated")
    assert f.confidence == "medium" and f.step == 2 and f.evidence["tok_s_gain"] == 0.053
    assert f.evidence["queue_share_of_ttft"] > 0.5
    assert engine_saturated(ctx_of(*batch_starved())) == []  # at the cap: admission_cap's case


# -- memory and compute ----------------------------------------------------------------------------


def kv_ladder(kv=0.96, pre=3.0, kv_max=1.0):
    return (
        step(0, 1, ttft=12.0, tpot=7.0, server=srv(kv=0.15)),
        step(1, 2, ttft=16.0, tpot=7.0, server=srv(running=2.0, kv=0.31)),
        step(2, 4, ttft=17.0, tpot=7.2, server=srv(running=3.9, kv=0.66)),
        step(
            3, 8, ttft=120.0, tpot=8.4, server=srv(waiting=2.2, running=5.8, kv=kv, pre=pre, kv_cache_usage_max=kv_max)
        ),
    )


def test_kv_capacity_fires_on_a_full_cache_and_preemptions():
    f = only(kv_capacity(ctx_of(*kv_ladder())), "kv_capacity")
    assert f.confidence == "high" and f.step == 3 and f.evidence["preemptions_per_s"] == 3.0 and "fp8" in f.change
    assert kv_capacity(ctx_of(*kv_ladder(kv=0.92, pre=0.0)))[0].confidence == "medium"  # full, not preempting yet
    assert (
        kv_capacity(ctx_of(*kv_ladder(kv=0.75, pre=1.0, kv_max=0.8)))[0].confidence == "medium"
    )  # preempting under pressure
    assert kv_capacity(ctx_of(*kv_ladder(kv=0.75, pre=1.0)))[0].confidence == "high"  # ... with peaks at a full cache
    assert kv_capacity(ctx_of(*kv_ladder(kv=0.5, pre=0.0, kv_max=0.6))) == []
    assert kv_capacity(ctx_of(*batch_starved())) == []


def frag_ladder(kv=0.65, pre=0.0, kinds=None):
    kinds = kinds or {"http_500": 14, "server_error": 6}
    return (
        step(0, 1, server=srv(kv=0.1)),
        step(1, 4, server=srv(running=4.0, kv=0.4)),
        step(2, 8, ok=80, errors=20, kinds=kinds, server=srv(running=8.0, kv=kv, pre=pre)),
    )


def test_kv_fragmentation_fires_on_server_errors_with_free_kv():
    f = only(kv_fragmentation(ctx_of(*frag_ladder())), "kv_fragmentation")
    assert f.confidence == "high" and f.step == 2 and f.explains == ("errors",)
    assert f.evidence["server_error_share"] == 1.0 and f.evidence["kv_cache_usage"] == 0.65
    assert kv_fragmentation(ctx_of(*frag_ladder(kv=0.82)))[0].confidence == "medium"
    assert kv_fragmentation(ctx_of(*frag_ladder(pre=2.0)))[0].confidence == "low"
    assert kv_fragmentation(ctx_of(*frag_ladder(kv=0.95))) == []  # a full cache: capacity, not fragmentation
    assert kv_fragmentation(ctx_of(*frag_ladder(kinds={"http_429": 20}))) == []  # shedding, not memory


def bw_ladder(bw=0.58, tpot8=6.1, util=0.9):
    return (
        step(0, 1, ttft=19.0, tpot=2.7, server=srv(kv=0.05), gpu=gpu(util=0.78, bw=0.56)),
        step(1, 4, ttft=21.0, tpot=4.2, server=srv(running=4.0, kv=0.2), gpu=gpu(util=0.86, bw=0.57)),
        step(2, 8, ttft=25.0, tpot=tpot8, server=srv(running=8.0, kv=0.42), gpu=gpu(util=util, bw=bw)),
    )


def test_decode_bandwidth_fires_when_tpot_grows_with_the_batch_at_high_bandwidth():
    f = only(decode_bandwidth(ctx_of(*bw_ladder())), "decode_bandwidth")
    assert f.confidence == "high" and f.step == 1 and f.explains == ("tpot",)  # 4.2 / 2.7 = 1.56x at 4 users
    assert f.evidence["batch"] == 4.0 and f.evidence["bandwidth_share_of_busy"] == 0.663
    assert decode_bandwidth(ctx_of(*bw_ladder(), coarse=True))[0].confidence == "low"
    assert decode_bandwidth(ctx_of(*bw_ladder(bw=0.3), step(3, 16))) != []  # fires at 4 users already
    low_bw = tuple(
        step(i, u, tpot=t, server=srv(running=float(u)), gpu=gpu(bw=0.3))
        for i, (u, t) in enumerate([(1, 3.0), (8, 6.0)])
    )
    assert decode_bandwidth(ctx_of(*low_bw)) == []
    flat = tuple(step(i, u, tpot=3.0, server=srv(running=float(u)), gpu=gpu(bw=0.7)) for i, u in enumerate([1, 4, 8]))
    assert decode_bandwidth(ctx_of(*flat)) == []
    assert decode_bandwidth(ctx_of(*batch_starved())) == []


def test_decode_bandwidth_medium_below_the_breach():
    ladder = (
        step(0, 1, tpot=10.0, server=srv(), gpu=gpu(bw=0.6)),
        step(1, 8, tpot=13.0, server=srv(running=8.0), gpu=gpu(util=0.95, bw=0.62)),  # 1.3x: degrading, not breached
    )
    assert decode_bandwidth(ctx_of(*ladder))[0].confidence == "medium"


def pi_ladder(long_input=2000, prefill_ms=39.0, itl99=128.0):
    classes = lambda: {"short": stats(ok=30, input_tokens=20), "long": stats(ok=10, input_tokens=long_input)}  # noqa: E731
    return (
        step(0, 1, ttft=9.7, tpot=7.0, itl=7.0, itl99=10.5, classes=classes(), server=srv()),
        step(1, 4, ttft=15.0, tpot=7.9, itl=7.0, itl99=itl99, classes=classes(), ok=52,
             server=srv(running=3.9, prefill_time_mean_ms=prefill_ms, requests_finished_rate_per_s=8.7)),
    )  # fmt: skip


def test_prefill_interference_fires_on_itl_stalls_with_long_prompts():
    f = only(prefill_interference(ctx_of(*pi_ladder())), "prefill_interference")
    assert f.confidence == "high" and f.step == 1 and f.evidence["longest_prompt_tokens"] == 2000
    assert f.evidence["prefill_time_share"] == 0.339 and "chunked prefill" in f.change
    assert prefill_interference(ctx_of(*pi_ladder(long_input=40))) == []  # no long prompts
    assert prefill_interference(ctx_of(*pi_ladder(prefill_ms=5.0))) == []  # prefill is a small share of the time
    assert prefill_interference(ctx_of(*pi_ladder(itl99=20.0))) == []  # no ITL stalls


# -- per-request phase evidence (server timing) ----------------------------------------------------


def test_gateway_queueing_from_phases_needs_no_engine_gap_and_phases_can_veto_it():
    gw = {"gateway": 0.8, "server_queue": 0.05, "prefill": 0.15}
    # the engine holds every request (no gap, no server TTFT signal): only the phases see the gateway
    ladder = (step(0, 1, ttft=50.0, server=srv()), step(1, 8, ttft=400.0, server=srv(running=7.8), tail=gw))
    f = only(gateway_queueing(ctx_of(*ladder)), "gateway_queueing")
    assert f.confidence == "high" and f.evidence["gateway_share_p90_tail"] == 0.8
    assert any("per-request server timing (100 %" in t and "gateway" in t for t in f.evidence_text)
    # the window signals would fire (8 in flight, 2 at the engine), but per request the tail is in the engine
    engine = {"gateway": 0.05, "server_queue": 0.8, "prefill": 0.15}
    vetoed = (step(0, 1, ttft=50.0, server=srv()), step(1, 8, ttft=400.0, server=srv(running=2.0), tail=engine))
    assert gateway_queueing(ctx_of(*vetoed)) == []
    # too few requests timed: back to the window signals
    thin = (step(0, 1, ttft=50.0, server=srv()), step(1, 8, ttft=400.0, server=srv(running=2.0), tail=engine, coverage=0.2))
    assert gateway_queueing(ctx_of(*thin))[0].id == "gateway_queueing"


def test_admission_cap_confidence_follows_the_queue_share_of_the_tail():
    def ladder(tail, util=0.97):
        base = list(batch_starved(util=util))
        return (*base[:2], {**base[2], "overall": stats(ttft=1190.0, tpot=17.0, tail=tail)}, base[3])

    queued = only(admission_cap(ctx_of(*ladder({"server_queue": 0.9, "prefill": 0.08, "gateway": 0.02}, util=0.62))),
                  "admission_cap")  # fmt: skip
    assert queued.confidence == "high" and queued.evidence["queue_share_p90_tail"] == 0.9
    assert any("the engine's queue is 90 %" in t for t in queued.evidence_text)
    not_queue = admission_cap(ctx_of(*ladder({"server_queue": 0.1, "prefill": 0.85, "gateway": 0.05}, util=0.62)))
    assert not_queue[0].confidence == "low"  # requests wait, yet the tail's TTFT is not the queue
    assert admission_cap(ctx_of(*batch_starved()))[0].evidence["queue_share_p90_tail"] is None  # no timing: as before


def test_prefill_interference_reads_the_long_class_prefill_share():
    def ladder(long_tail):
        classes = {"short": stats(ok=30, input_tokens=20), "long": stats(ok=10, input_tokens=2000, tail=long_tail)}
        return (
            step(0, 1, ttft=9.7, tpot=7.0, itl=7.0, itl99=10.5, classes=classes, server=srv()),
            step(1, 4, ttft=15.0, tpot=7.9, itl=7.0, itl99=128.0, classes=classes, ok=52, server=srv(running=3.9)),
        )  # no engine prefill-time signal: only the phases can tell

    f = only(prefill_interference(ctx_of(*ladder({"prefill": 0.9, "server_queue": 0.08}))), "prefill_interference")
    assert f.confidence == "high" and f.evidence["prefill_share_p90_tail"] == 0.9
    assert any("prefill is 90 % of TTFT for long's requests" in t for t in f.evidence_text)
    assert prefill_interference(ctx_of(*ladder({"prefill": 0.2, "server_queue": 0.75}))) == []


def test_queue_findings_of_a_rate_ladder_name_its_steps_by_rate_not_by_the_shared_cap():
    """A rate ladder's steps all have -u users: "4 requests wait in the engine at 16 users" named no step."""
    rated = []
    for entry, rate in zip(batch_starved(), (1.0, 2.0, 4.0, 8.0), strict=True):
        entry.update(users=16, rate_offered=rate, rate_achieved=rate)
        rated.append(entry)
    f = only(admission_cap(ctx_of(*rated)), "admission_cap")
    assert f.step == 2
    assert f.evidence_text[:2] == ["running stays at 3.9 (highest 4) over 3 steps: 2, 4, 8 req/s",
                                   "4.0 requests wait in the engine at 4 req/s, more at the next steps"]  # fmt: skip
    closed = only(admission_cap(ctx_of(*batch_starved())), "admission_cap")
    assert closed.evidence_text[:2] == ["running stays at 3.9 (highest 4) over 3 steps: 4, 8, 16 users",
                                        "4.0 requests wait in the engine at 8 users, more at the next steps"]  # fmt: skip
    ladder = [
        step(0, 16, ttft=50.0, server=srv(), gpu=gpu(util=0.9), tok_s=100.0),
        step(1, 16, ttft=60.0, server=srv(running=4.0), gpu=gpu(util=0.95), tok_s=380.0),
        step(2, 16, ttft=400.0, server=srv(waiting=2.0, running=6.0), gpu=gpu(util=0.97), tok_s=400.0),
        step(3, 16, ttft=900.0, server=srv(waiting=8.0, running=8.0), gpu=gpu(util=0.98), tok_s=405.0),
    ]
    for entry, rate in zip(ladder, (1.0, 2.0, 4.0, 8.0), strict=True):
        entry.update(rate_offered=rate, rate_achieved=rate)
    f = only(engine_saturated(ctx_of(*ladder)), "engine_saturated")
    assert f.evidence_text[0].startswith("2.0 requests wait in the engine at 4 req/s (running 6.0)")
