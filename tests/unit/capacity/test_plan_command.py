"""`llmload plan` end to end on an engine file, and its errors (one line, exit 2, before any prediction)."""

from __future__ import annotations

import json

import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.engine_file import write_engine
from llmload.capacity.plan_command import plan_main
from llmload.sim.params import EngineParams

TRUE = EngineParams(max_num_seqs=4, step_base_ms=20.0, prefill_tps=5000.0)
PROFILE = """name = "mix"
[[classes]]
name = "chat"
weight = 1
input_tokens = 200
output_tokens = 40
"""


@pytest.fixture
def files(tmp_path):
    engine, profile = tmp_path / "engine.toml", tmp_path / "mix.toml"
    write_engine(engine, TRUE, [], [], {})
    profile.write_text(PROFILE)
    return engine, profile


def test_plan_answers_the_fewest_replicas_that_meet_the_slo_and_predict_agrees(files, tmp_path, capsys):
    engine, profile = files
    out = tmp_path / "plan.json"
    common = ["--engine", str(engine), "--profile", str(profile), "--router", "least-loaded"]
    code = plan_main([*common, "-u", "12", "--slo", "ttft_ms=300", "-t", "30s", "--warmup", "5s", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    doc = json.loads(out.read_text())
    k = doc["answer"]
    assert k == 3  # 12 users on a cap of 4 per replica: 2 replicas queue, 3 do not
    assert text.splitlines()[-1] == f"answer: {doc['line']}" and doc["line"].startswith("3 replicas: TTFT p99 ")
    trials = {t["replicas"]: t for t in doc["trials"]}
    assert trials[3]["meets"] and not trials[2]["meets"] and trials[2]["attainment"] < 0.9
    # predict of the same step at that many replicas, judged on the same SLO: the same attainment
    summary = tmp_path / "s.json"
    assert predict_main([*common, "--replicas", "3", "--ladder", "12", "--step-time", "35s", "--step-warmup", "5s",
                         "--slo", "ttft_ms=300", "--summary-json", str(summary), "--quiet"]) == 0  # fmt: skip
    step = json.loads(summary.read_text())["steps"][0]["overall"]
    assert step["goodput"]["attainment"] == pytest.approx(trials[3]["attainment"])


def test_plan_finds_the_fewest_replicas_when_attainment_falls_with_more_and_notes_it(tmp_path, capsys):
    # 24 users of the default profile on replicas of 4 slots, round-robin: 8 -> 98.7 %, 9 -> 100 %, 10 -> 88.9 %
    # (a bisection over 1, 2, 4, 8, 16 answered 11)
    engine, out = tmp_path / "e.toml", tmp_path / "plan.json"
    write_engine(engine, EngineParams(max_num_seqs=4), [], [], {})
    code = plan_main(["--engine", str(engine), "-u", "24", "--slo", "ttft_ms=1000", "--max-replicas", "16",
                      "--json", str(out)])  # fmt: skip
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert code == 0 and doc["answer"] == 9, text
    assert [t["replicas"] for t in doc["trials"]] == list(range(1, 11))
    assert len(doc["notes"]) == 1 and doc["notes"][0].startswith("10 replicas predict 88.9 %, below 9 replicas'")
    assert f"  note: {doc['notes'][0]}\n" in text


def test_without_slos_plan_keeps_the_p50s_within_the_degradation_of_one_user_alone(files, capsys):
    engine, profile = files
    code = plan_main(["--engine", str(engine), "--profile", str(profile), "-u", "12", "-t", "30s", "--warmup", "5s",
                      "--router", "least-loaded", "--max-replicas", "8", "--degradation", "2"])  # fmt: skip
    text = capsys.readouterr().out
    # one user alone: TTFT 63 ms (200-token prefill + a step); 2 replicas queue (207 ms), 3 do not (127 ms)
    assert code == 0 and "within +200 % of one user alone" in text and "answer: 3 replicas: TTFT p50" in text


def test_plan_says_when_no_replica_count_is_enough(files, capsys):
    engine, profile = files
    code = plan_main(["--engine", str(engine), "--profile", str(profile), "-u", "12", "-t", "20s", "--warmup", "5s",
                      "--slo", "ttft_ms=1", "--max-replicas", "2"])  # fmt: skip
    assert code == 1 and "answer: no replica count up to 2 meets it" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "give the load: -u USERS"),
        (["-u", "0"], "-u 0: must be >= 1"),
        (["--rate", "-2"], "--rate -2: must be > 0"),
        (["-u", "4", "--slo", "ttft=3"], "unknown SLO 'ttft'"),
        (["-u", "4", "--slo-attainment", "1.5"], "--slo-attainment 1.5"),
        (["-u", "4", "--max-replicas", "0"], "--max-replicas 0"),
        (["-u", "4", "-t", "soon"], "-t 'soon'"),
        (["-u", "4", "--set", "nope=3"], "nope"),
        (["-u", "4", "--json", "/no/such/dir/p.json"], "--json /no/such/dir/p.json"),
        (["-u", "4", "--rate", "2", "--burstiness", "0"], "--burstiness 0"),
        (["-u", "4", "--arrival", "closed"], "argument --arrival: invalid choice: 'closed'"),
        (["-u", "many"], "argument -u/--users: invalid int value: 'many'"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(files, capsys, args, said):
    engine, profile = files
    assert plan_main(["--engine", str(engine), "--profile", str(profile), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("llmload plan: error: ") and said in err


def test_a_missing_engine_file_is_one_error_line(tmp_path, capsys):
    assert plan_main(["--engine", str(tmp_path / "none.toml"), "-u", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.toml" in err
    assert plan_main(["-u", "4"]) == 2
    assert capsys.readouterr().err == "llmload plan: error: the following arguments are required: --engine\n"
