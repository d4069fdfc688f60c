"""Hand-built summaries (``llmload.summary/2``) and time series for the report writers' tests."""

from __future__ import annotations

import copy
from typing import Any

T0 = 1_800_000_000.0
SECRET = "sk-test-SECRET-never-written"


def stats(ttft: float, tpot: float, tok_s: float, requests: int = 20, errors: int = 0) -> dict[str, Any]:
    lat = lambda p50: {"mean": p50 * 1.1, "p50": p50, "p90": p50 * 1.5, "p99": p50 * 2, "max": p50 * 2.5}  # noqa: E731
    return {
        "requests": requests,
        "ok": requests - errors,
        "errors": errors,
        "interrupted": 0,
        "output_tokens": int(tok_s * 10),
        "input_tokens": 1000,
        "output_tokens_per_s": tok_s,
        "requests_per_s": round(requests / 10, 3),
        "ttft_ms": lat(ttft),
        "itl_ms": lat(tpot * 0.9),
        "tpot_ms": lat(tpot),
        "e2e_ms": lat(ttft + tpot * 100),
        "errors_by_kind": {"http_503": errors} if errors else {},
    }


CLASSES = {"short": 3, "medium": 4, "long": 3}
#: users, TTFT p50, TPOT p50, tok/s, errors, running, waiting, kv, gpu util
LADDER = [
    (1, 50.0, 14.0, 60.0, 0, 1.0, 0.0, 0.02, 0.30),
    (4, 60.0, 16.0, 220.0, 0, 4.0, 0.0, 0.05, 0.60),
    (8, 1200.0, 15.0, 230.0, 0, 4.0, 4.2, 0.06, 0.62),
    (16, 3900.0, 15.5, 232.0, 1, 4.0, 12.0, 0.06, 0.63),
]


def _base() -> dict[str, Any]:
    return {
        "schema": "llmload.summary/2",
        "duration_s": 40.0,
        "users_max": 16,
        "started_at": "2027-01-15T08:00:00Z",
        "config": {
            "api": "openai-chat",
            "model": "test-model",
            "profile": "default",
            "seed": 42,
            "max_tokens_cap": 64,
            "api_key_set": True,
            "ladder": {"levels": [u for u, *_ in LADDER], "step_s": 10.0, "warmup_s": 2.0, "stop_on_breach": False, "baseline_requests": 0},
            "degradation": 0.5,
        },
        "profile": {"name": "default", "classes": [{"name": n, "weight": w} for n, w in CLASSES.items()]},
        "client": {"saturated": False, "saturated_processes": []},
        "warnings": [],
        "overall": stats(300.0, 15.0, 180.0, requests=120, errors=1),
        "classes": {n: {**stats(300.0 + i, 15.0, 60.0, requests=40), "weight": w, "share_of_requests": 0.33} for i, (n, w) in enumerate(CLASSES.items())},
        "errors_by_kind": {"http_503": 1},
    }


def plain_summary() -> dict[str, Any]:
    """A run without a ladder: schema 1 keys only."""
    s = _base()
    s["schema"] = "llmload.summary/1"
    s["config"]["ladder"] = None
    s["users_max"] = 10
    return s


def ladder_summary(verdict: bool = True, findings: bool = True, step_signals: bool = True) -> dict[str, Any]:
    s = _base()
    steps = []
    for i, (users, ttft, tpot, tok, errors, running, waiting, kv, util) in enumerate(LADDER):
        started = T0 + 10 * i
        step = {
            "index": i,
            "users": users,
            "started_at": started,
            "steady_from": started + 2,
            "ended_at": started + 10,
            "steady_s": 8.0,
            "overall": stats(ttft, tpot, tok, errors=errors),
            "classes": {n: stats(ttft, tpot, tok / 3) for n in CLASSES},
        }
        if step_signals:
            step["server"] = {"running": {"mean": running, "max": running}, "waiting": {"mean": waiting, "max": waiting}, "kv_cache_usage": {"mean": kv}}
            step["gpu"] = {"utilization": {"mean": util}, "memory_bandwidth_utilization": {"mean": util * 0.6}}
        steps.append(step)
    s["steps"] = steps
    s["baseline"] = {
        "step": 0, "users": 1, "source": "step",
        "ttft_ms": {"p50": 50.0, "p99": 100.0}, "tpot_ms": {"p50": 14.0, "p99": 28.0},
        "itl_ms": {"p50": 12.6, "p99": 25.2}, "e2e_ms": {"p50": 1450.0, "p99": 2900.0},
        "classes": {n: {"ttft_ms": {"p50": 50.0, "p99": 100.0}, "tpot_ms": {"p50": 14.0, "p99": 28.0}} for n in CLASSES},
    }  # fmt: skip
    s["verdict"] = (
        {
            "status": "breach",
            "degradation": 0.5,
            "limits": {"ttft_p50_ms": 75.0, "tpot_p50_ms": 21.0, "error_rate": 0.01},
            "safe_step": 1,
            "safe_users": 4,
            "top_users": 16,
            "breach": {"step": 2, "users": 8, "metric": "ttft_p50", "value": 1200.0, "limit": 75.0, "baseline": 50.0},
            "p99": {"limits": {"ttft_p99_ms": 150.0, "tpot_p99_ms": 42.0}, "safe_users": 4, "breach": None},
            "confidence": {"band_users": [4, 8], "note": "steady windows agree within 10 %"},
            "recommended_limit": 4,
            "per_class": {"short": {"safe_users": 4, "breach": None}, "medium": {"safe_users": 4, "breach": None}, "long": {"safe_users": 1, "breach": None}},
        }
        if verdict
        else None
    )
    s["findings"] = (
        [
            {
                "id": "admission_cap",
                "layer": "engine scheduler",
                "title": "Batch / admission cap",
                "confidence": "high",
                "evidence": {"running_max": 4, "waiting_mean": 4.2, "gpu_utilization": 0.62},
                "evidence_text": ["running flat at 4 while waiting grows", "GPU utilisation 62 %"],
                "change": "Raise --max-num-seqs.",
                "step": 2,
            },
            {
                "id": "client_queueing",
                "layer": "client",
                "title": "Gateway queueing",
                "confidence": "low",
                "evidence": {"queue_ms": 3.0},
                "evidence_text": [],
                "change": "",
                "step": None,
            },
        ]
        if findings
        else []
    )
    return s


def timeseries(steps: int = len(LADDER), polls_per_step: int = 5) -> dict[str, Any]:
    """``llmload.timeseries/1`` over the ladder above (2 s polls), with one missing reading."""
    t, waiting, running, kv, util, bw = [], [], [], [], [], []
    for i in range(steps * polls_per_step):
        step = LADDER[i // polls_per_step]
        t.append(T0 + 2 * i)
        running.append(step[5])
        waiting.append(step[6] if i != 7 else None)
        kv.append(step[7])
        util.append(step[8])
        bw.append(step[8] * 0.6)
    return {
        "schema": "llmload.timeseries/1",
        "started_at": T0,
        "interval_s": 2.0,
        "t": t,
        "t_s": [x - T0 for x in t],
        "server": {"signals": {"waiting": waiting, "running": running, "kv_cache_usage": kv}},
        "gpu": {"signals": {"utilization": util, "memory_bandwidth_utilization": bw}, "devices": {}},
    }


def with_secret(summary: dict[str, Any]) -> dict[str, Any]:
    """A copy that carries an API key where a careless writer might copy it from."""
    s = copy.deepcopy(summary)
    s["config"]["api_key"] = SECRET
    s["config"]["extra"] = {"headers": {"Authorization": f"Bearer {SECRET}"}}
    return s


def reasoning_summary() -> dict[str, Any]:
    """A plain run where class ``long`` reasoned (60 requests' worth of tokens from usage, 2 hidden), with jumps."""
    s = plain_summary()
    def lat(p50: float | None, n: int) -> dict[str, Any]:
        return {"mean": p50, "p50": p50, "p90": p50, "p99": p50 and p50 * 1.5, "max": p50 and p50 * 2, "min": p50, "count": n}

    for block, reasoned in ((s["overall"], True), (s["classes"]["long"], True), (s["classes"]["short"], False)):
        block["ttfo_ms"] = lat(420.0 if reasoned else 300.0, 40)
        block["reasoning_ms"] = lat(120.0, 40) if reasoned else lat(None, 0)
        block["reasoning_tokens"] = {"total": 2400, "mean": 60.0, "from_usage": 40, "counted": 0} if reasoned else {
            "total": 0, "mean": None, "from_usage": 0, "counted": 0}  # fmt: skip
        block["hidden_reasoning"] = 2 if reasoned else 0
    s["overall"]["buffered_token_jumps"] = 7
    return s


def slo_result(gpus: int = 2):
    """A typed two-step ladder result with SLOs, built from records (class "fast": TTFT 50 ms, all good;
    class "slow": TTFT 1 s, half of it over 1.2 s at step 1), analysed, and ``gpus`` GPU devices."""
    from dataclasses import replace

    from llmload.analysis import analyze
    from llmload.ladder import StepWindow
    from llmload.metrics.definitions import settle_token_counts
    from llmload.metrics.record import RequestRecord
    from llmload.metrics.recorder import MetricSet, Recorder
    from llmload.metrics.slo import SLO
    from llmload.results import RunSetup, build_result

    ms = 1_000_000
    recorder = Recorder()
    slos = {"fast": SLO(ttft_ms=1200.0), "slow": SLO(ttft_ms=1200.0)}
    recorder.set_slos(slos, SLO(ttft_ms=1200.0))
    for step in (0, 1):
        for i in range(20):
            for cls, ttft in (("fast", 50), ("slow", 1000 if step == 0 or i % 2 else 1500)):
                r = RequestRecord(cls, input_tokens=10, max_tokens=4)
                r.start_ns = 0
                r.chunk_ns = [(ttft + 10 * k) * ms for k in range(4)]
                r.end_ns = r.chunk_ns[-1] + ms
                settle_token_counts(r, None, None)
                r.outcome, r.step = "ok", step
                recorder.add(r)
    windows = [StepWindow(0, 1, T0, T0 + 2, T0 + 12), StepWindow(1, 4, T0 + 12, T0 + 14, T0 + 24)]
    steps = {int(k): MetricSet.from_wire(w) for k, w in recorder.drain_steps().items()}
    gpu = {"devices": [{"key": f"GPU-{i}", "gpu": i, "signals": {}} for i in range(gpus)], "signals": {}}
    result = build_result(
        recorder.snapshot(), duration_s=40.0, users_max=4, weights={"fast": 1, "slow": 1}, windows=windows,
        step_metrics=steps,
        setup=RunSetup.from_summary({"api": "openai-chat", "model": "m", "slo": {"ttft_ms": 1200.0}},
                                    {"name": "p", "classes": [{"name": "fast", "weight": 1}, {"name": "slow", "weight": 1}]}),
        collection={"gpu": gpu} if gpus else None, slos=True,
    )  # fmt: skip
    return replace(result, judgement=analyze(result))


def rate_ladder_summary() -> dict[str, Any]:
    """:func:`ladder_summary` as a rate ladder: 16 users (the cap) at every step, offered 1/2/4/8 req/s."""
    s = ladder_summary()
    for st, rate in zip(s["steps"], (1.0, 2.0, 4.0, 8.0), strict=False):
        st.update(users=16, rate_offered=rate, rate_achieved=rate * 0.99)
    s["config"]["ladder"].update(levels=[16] * 4, rates=[1.0, 2.0, 4.0, 8.0])  # as the run writes it: levels = the cap
    s["verdict"].update(safe_rate=2.0, top_users=16, recommended_rate=2.0)
    s["verdict"]["breach"].update(users=16, rate=4.0)
    s["verdict"]["p99"].update(safe_step=1, safe_users=16)
    s["arrival"] = {"mode": "poisson", "offered_rate": None, "achieved_rate": 3.1, "arrivals": 200, "waited": 0,
                    "schedule_lag_ms": {"p50": 0.5, "p99": 1.0}, "scheduler_behind": False}  # fmt: skip
    return s


def open_loop_summary(mode: str = "poisson", waited: int = 0, lag_p99: float = 0.9, trace: bool = False,
                      unsent: int = 0) -> dict[str, Any]:  # fmt: skip
    """:func:`plain_summary` run open-loop (-u 10): its ``arrival`` block and client wait written by the results' own
    writers (:func:`llmload.results.summary.arrival_dict`), so the report reads the keys a run writes."""
    from llmload.results.model import ArrivalResult, Latency, TraceReplay
    from llmload.results.summary import arrival_dict, latency_dict

    s = plain_summary()
    s["schema"] = "llmload.summary/2"
    replay = TraceReplay("/data/traces/mooncake.jsonl", 1500, 2.0, 75.0, 0.4321) if trace else None
    arrival = ArrivalResult(
        mode="trace" if trace else mode, offered_rate=replay.offered_rate if replay else 30.0, achieved_rate=29.4,
        arrivals=1200, waited=waited, schedule_lag=Latency(1200, 0.1, 0.08, 0.3, lag_p99, lag_p99 * 2, 0.0),
        scheduler_behind=lag_p99 > 10.0, burstiness=0.25 if mode == "gamma" else None, trace=replay,
        sent=1200 - unsent, unsent_wait_ms=8357.2 if unsent else None,
    )  # fmt: skip
    s["arrival"] = arrival_dict(arrival)
    s["overall"]["client_wait_ms"] = latency_dict(Latency(1200, 2.0, 0.09, 3.0, 45.0, 80.0, 0.0))
    return s
