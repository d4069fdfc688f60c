"""predict --check: a prediction scored against a measured run of the same workload, per step and class."""

from __future__ import annotations

import json

import orjson
import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.check import check, check_table
from llmload.capacity.engine_file import write_engine
from llmload.capacity.predict import predicted_result
from llmload.rundir import load_run
from llmload.sim.params import EngineParams
from tests.helpers.capacity import ladder

TRUE = EngineParams(max_num_seqs=4, step_base_ms=20.0, prefill_tps=5000.0)
PROFILE = """name = "mix"
[[classes]]
name = "short"
weight = 1
input_tokens = 100
output_tokens = 60
[[classes]]
name = "long"
weight = 1
input_tokens = 1200
output_tokens = 120
"""


def test_the_true_model_checks_exactly_and_a_slower_one_shows_its_error_per_step_and_class():
    w = ladder((1, 2, 8), step_s=40.0, warmup_s=5.0)
    measured = predicted_result(TRUE, w)
    exact = check(predicted_result(TRUE, w), measured)
    assert [(r.step, r.cls) for r in exact.rows][:3] == [(0, "(all)"), (0, "short"), (0, "long")]
    assert all(f.error in (0.0, None) for r in exact.rows for f in r.figures.values())
    assert exact.worst_p50[0] == 0.0 and all(lv.matched for lv in exact.levels)
    slow = check(predicted_result(EngineParams(max_num_seqs=4, step_base_ms=30.0, prefill_tps=5000.0), w), measured)
    tpot = {(r.step, r.cls): r.figures["tpot_p50_ms"] for r in slow.rows}
    assert tpot[(0, "short")].error == pytest.approx(10 / 23, abs=0.05)  # a step of 33 ms instead of 23 (1 user)
    assert tpot[(0, "short")].measured < tpot[(0, "short")].predicted
    assert slow.rows[0].figures["ok_per_s"].error < -0.1  # slower steps: fewer requests in the closed loop
    lines = check_table(slow)
    assert lines[-1].startswith("worst |error| of a TTFT/TPOT p50: ") and "safe concurrency level measured" in "".join(
        lines
    )


def test_runs_of_different_loads_are_not_checked_against_each_other():
    from llmload.errors import ConfigError

    with pytest.raises(ConfigError, match=r"steps \(1 user, 2 users\) are not the prediction's \(1 user, 4 users\)"):
        check(predicted_result(TRUE, ladder((1, 4), 20.0, 2.0)), predicted_result(TRUE, ladder((1, 2), 20.0, 2.0)))


def test_predict_check_prints_the_table_and_writes_the_json(tmp_path, capsys):
    engine, profile, run = tmp_path / "engine.toml", tmp_path / "mix.toml", tmp_path / "measured"
    write_engine(engine, TRUE, [], [], {})
    profile.write_text(PROFILE)
    run.mkdir()
    args = ["--engine", str(engine), "--profile", str(profile), "--ladder", "1,2,8", "--step-time", "40s",
            "--step-warmup", "5s", "--quiet"]  # fmt: skip
    assert predict_main([*args, "--summary-json", str(run / "summary.json")]) == 0  # stands in for a measured run
    assert load_run(run).result.steps
    capsys.readouterr()
    assert predict_main([*args, "--set", "step_base_ms=x1.5", "--check", str(run)]) == 0
    out = capsys.readouterr().out
    assert "predicted vs measured" in out and "safe concurrency level measured:" in out
    doc = orjson.loads((run / "predict-check.json").read_bytes())
    assert doc["schema"] == "llmload.predict-check/1" and doc["worst_p50_error"] > 0.1
    row = doc["rows"][0]
    assert set(row) >= {"step", "load", "class", "ttft_p50_ms", "tpot_p99_ms", "ok_per_s", "output_tokens_per_s"}
    assert row["tpot_p50_ms"]["predicted"] > row["tpot_p50_ms"]["measured"]
    assert json.loads(json.dumps(doc["levels"]))[0]["kind"] == "safe concurrency"


def test_a_bad_check_path_is_one_error_line_before_predicting(tmp_path, capsys):
    engine = tmp_path / "engine.toml"
    write_engine(engine, TRUE, [], [], {})
    assert predict_main(["--engine", str(engine), "--check", str(tmp_path / "nope"), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("llmload predict: error: --check ") and "nope" in err
