"""predict: a workload on the virtual clock -> a normal, analysed summary marked predicted."""

from __future__ import annotations

from llmload.capacity.drive import StepSpec, Workload, drive
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
