"""predict: a workload on the virtual clock -> a normal, analysed summary marked predicted."""

from __future__ import annotations

import json

import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.drive import StepSpec, Workload, drive, drive_run
from llmload.capacity.predict import extrapolation, predicted_result
from llmload.results import to_summary
from llmload.sim.params import EngineParams
from tests.helpers.capacity import MIX, ladder

PARAMS = EngineParams(max_num_seqs=4)


def test_a_predicted_ladder_is_a_normal_summary_with_steps_verdict_and_the_prediction_block():
    w = ladder((1, 2, 8), step_s=40.0, warmup_s=5.0)
    result = predicted_result(PARAMS, w, predicted={"engine_sha256": "sha256:x", "replicas": 1})
    s = to_summary(result)
    assert s["predicted"]["engine_sha256"] == "sha256:x"
    assert [st["users"] for st in s["steps"]] == [1, 2, 8]
    assert s["verdict"] and s["overall"]["ok"] > 20 and set(s["classes"]) == {"short", "long"}
    ttft = [st["overall"]["ttft_ms"]["p50"] for st in s["steps"]]
    assert ttft[2] > 3 * ttft[0]  # 8 users on a cap of 4 queue


def test_replicas_share_the_load_round_robin_or_least_loaded():
    w = Workload(MIX, (StepSpec(8, 60.0, 10.0),))
    one = to_summary(predicted_result(PARAMS, w))
    for router in ("round-robin", "least-loaded"):
        two = to_summary(predicted_result(PARAMS, w, replicas=2, router=router))
        assert two["overall"]["ttft_ms"]["p50"] < one["overall"]["ttft_ms"]["p50"] / 3  # no queue with 2 x 4 slots
        assert two["overall"]["ok"] > one["overall"]["ok"]


def test_open_loop_rates_send_at_the_offered_rate_and_are_deterministic():
    w = Workload(MIX, (StepSpec(1, 100.0, 0.0, rate=0.5), StepSpec(1, 100.0, 0.0, rate=1.0)), arrival="poisson", seed=3)
    sent = drive(PARAMS, w)
    assert 30 < sum(s.step == 0 for s in sent) < 75 and 70 < sum(s.step == 1 for s in sent) < 135
    assert [s.t for s in drive(PARAMS, w)] == [s.t for s in sent]
    constant = drive(PARAMS, Workload(MIX, (StepSpec(1, 10.0, 0.0, rate=2.0),), arrival="constant"))
    assert [round(s.t, 6) for s in constant][:3] == [0.0, 0.5, 1.0] and len(constant) == 20


def test_extrapolation_is_named():
    w = ladder((1, 32))
    said = extrapolation(w, 1, {"max_concurrency": 12, "max_input_tokens": 800, "max_output_tokens": 80})
    assert any("32 users per replica > the 12" in x for x in said) and any("input up to" in x for x in said)
    assert extrapolation(w, 4, {"max_concurrency": 12, "max_input_tokens": 5000, "max_output_tokens": 500}) == []


def test_a_ladder_waits_for_its_requests_in_flight_a_plain_run_stops_them():
    # as `llmload run`: a ladder's end waits for what is in flight (counted in its step); -t stops it (interrupted)
    w = ladder((1, 12), step_s=20.0, warmup_s=2.0)
    s = to_summary(predicted_result(PARAMS, w))
    assert s["overall"]["interrupted"] == 0 and s["steps"][1]["overall"]["ok"] >= 12
    plain = to_summary(predicted_result(PARAMS, Workload(MIX, (StepSpec(12, 20.0, 0.0),))))
    assert plain["overall"]["interrupted"] >= 4  # the running batch at the end, at least


def test_an_open_loop_holds_arrivals_beyond_the_u_cap_in_the_client_and_times_them_from_when_they_were_due():
    w = Workload(MIX, (StepSpec(4, 30.0, 0.0, rate=5.0),), arrival="constant", max_in_flight=4)
    sent = drive(PARAMS, w)
    events = sorted([(s.t, 1) for s in sent] + [(s.times[-1], -1) for s in sent if s.done and s.times])
    in_flight = peak = 0
    for _, d in events:
        in_flight += d
        peak = max(peak, in_flight)
    assert peak == 4
    held = [s for s in sent if s.intended is not None and s.t - s.intended > 0.5]
    assert len(held) > 10
    s = to_summary(predicted_result(PARAMS, w))
    assert s["overall"]["ttft_ms"]["p50"] > 1000  # the client's wait for a free slot counts, as in llmload run


def test_an_open_loop_summary_carries_the_client_s_arrival_figures_as_a_live_run_s():
    # 4 in flight at most, 5 req/s of ~3 s requests: most arrivals wait, some are still held at the end
    w = Workload(MIX, (StepSpec(4, 30.0, 0.0, rate=5.0),), arrival="constant", max_in_flight=4)
    d = drive_run(PARAMS, w)
    s = to_summary(predicted_result(PARAMS, w, config={"arrival": {"mode": "constant", "rate": 5.0}}))
    a = s["arrival"]
    assert a["arrivals"] == 150 and a["sent"] == len(d.sent) == s["overall"]["requests"]
    assert a["unsent"] == len(d.unsent) == 150 - len(d.sent) > 0
    assert a["waited"] == sum(x.intended is not None and x.t - x.intended > 0.01 for x in d.sent) > 10
    assert a["unsent_wait_max_ms"] == pytest.approx(1000 * (30.0 - min(d.unsent)), abs=0.01)
    assert a["offered_rate"] == 5.0 and a["achieved_rate"] == pytest.approx(len(d.sent) / 30.0, abs=0.001)
    assert a["schedule_lag_ms"]["p99"] == 0 and a["schedule_lag_ms"]["count"] == 150  # no lateness on a virtual clock
    assert any(x.startswith("the -u cap (4 requests in flight) held arrivals back") for x in s["warnings"])
    closed = to_summary(predicted_result(PARAMS, Workload(MIX, (StepSpec(4, 30.0, 0.0),))))
    assert closed["arrival"] == {"mode": "closed"}


def test_a_held_arrival_counts_in_the_step_it_started_in_as_in_llmload_run():
    # a rate ladder 1 -> 8 req/s under -u 2: step 1 serves step 0's backlog too, as a live run's step key does
    w = Workload(MIX, (StepSpec(2, 20.0, 2.0, rate=1.0), StepSpec(2, 20.0, 2.0, rate=8.0)), arrival="poisson",
                 max_in_flight=2, seed=1)  # fmt: skip
    s = to_summary(predicted_result(PARAMS, w, config={"ladder": {"levels": [2, 2], "rates": [1.0, 8.0]}}))
    sent = drive_run(PARAMS, w).sent
    started = [sum(2.0 + 20.0 * i <= x.t < 20.0 * (i + 1) for x in sent) for i in range(2)]
    assert [st["overall"]["requests"] for st in s["steps"]] == started
    assert [st["rate_offered"] for st in s["steps"]] == [1.0, 8.0]


def test_predict_writes_the_open_loop_config_as_llmload_run_does(tmp_path, capsys):
    engine, out = tmp_path / "engine.toml", tmp_path / "s.json"
    engine.write_text('schema = "llmload.engine/1"\n[params]\nmax_num_seqs = 4\n')
    argv = ["--engine", str(engine), "--arrival", "gamma", "--burstiness", "0.5", "--rate-ladder", "1,2", "-u", "8",
            "--step-time", "20s", "--step-warmup", "2s", "--summary-json", str(out), "--quiet"]  # fmt: skip
    assert predict_main(argv) == 0, capsys.readouterr()
    c = json.loads(out.read_text())["config"]
    assert c["arrival"] == {"mode": "gamma", "rate": None, "burstiness": 0.5, "rate_levels": [1.0, 2.0]}
    assert c["ladder"] == {"levels": [8, 8], "step_s": 20.0, "warmup_s": 2.0, "stop_on_breach": False,
                           "baseline_requests": 0, "rates": [1.0, 2.0]}  # fmt: skip
