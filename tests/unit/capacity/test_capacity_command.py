"""`llmload fit` and `llmload predict` end to end on files (a run made on the virtual clock), and their errors."""

from __future__ import annotations

import json

import tomllib

from llmload.capacity.capacity_command import fit_main, predict_main
from llmload.capacity.drive import drive, step_bounds
from llmload.capacity.predict import to_record
from llmload.metrics.dump import record_to_line
from llmload.sim.params import EngineParams
from tests.helpers.capacity import ladder

TRUE = EngineParams(max_num_seqs=6, step_base_ms=20.0, prefill_tps=5000.0)
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


def _run_dir(tmp_path):
    """A run directory as `llmload run --ladder 1,3,10 --records-jsonl` leaves it (summary steps + records)."""
    w = ladder((1, 3, 10), step_s=40.0, warmup_s=5.0)
    run = tmp_path / "run"
    run.mkdir()
    lines = [record_to_line(to_record(s, False, 120.0)) for s in drive(TRUE, w)]
    (run / "records.jsonl").write_bytes(b"".join(lines))
    steps = [{"index": i, "users": st.users, "started_at": 1.0 + a, "steady_from": 1.0 + b, "ended_at": 1.0 + c}
             for i, (st, (a, b, c)) in enumerate(zip(w.steps, step_bounds(w), strict=True))]  # fmt: skip
    (run / "summary.json").write_text(json.dumps({"schema": "llmload.summary/2", "steps": steps, "users_max": 10}))
    return run


def test_fit_writes_an_engine_file_predict_reads_it(tmp_path, capsys):
    run = _run_dir(tmp_path)
    assert fit_main([str(run)]) == 0
    out = capsys.readouterr().out
    assert "max_num_seqs" in out and "measured" in out and "wrote" in out
    doc = tomllib.loads((run / "engine.toml").read_text())
    assert doc["params"]["max_num_seqs"] == 6 and doc["provenance"]["prefill_tps"]["how"] == "fitted"
    assert abs(doc["params"]["prefill_tps"] / 5000.0 - 1) < 0.05
    assert doc["provenance"]["fitted_range"]["max_concurrency"] == 10
    (tmp_path / "p.toml").write_text(PROFILE)
    summary = tmp_path / "pred.json"
    argv = ["--engine", str(run / "engine.toml"), "--profile", str(tmp_path / "p.toml"), "--ladder", "2,20",
            "--step-time", "30s", "--step-warmup", "5s", "--set", "max_num_seqs=x2", "--replicas", "2",
            "--summary-json", str(summary), "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    assert predict_main(argv) == 0
    s = json.loads(summary.read_text())
    assert s["predicted"]["overrides"] == ["max_num_seqs=x2"] and s["predicted"]["replicas"] == 2
    assert [st["users"] for st in s["steps"]] == [2, 20] and s["config"]["host"] == "predicted"
    assert s["predicted"]["extrapolates"] == []  # 10 users per replica: within what the fit measured
    # no KV gauge, no repeated prompts here
    assert s["predicted"]["assumed"] == ["host_overhead_ms", "kv_blocks", "max_batched_tokens", "prefix_caching"]
    out = capsys.readouterr().out
    assert "PREDICTED" in out and "assumed, not fitted: host_overhead_ms" in out
    assert (next((tmp_path / "runs").iterdir()) / "summary.json").exists()


def test_bad_input_is_one_error_line_and_exit_2(tmp_path, capsys):
    assert fit_main([str(tmp_path / "nope")]) == 2
    assert "no such run directory" in capsys.readouterr().err
    (tmp_path / "summary.json").write_text("{}")
    assert fit_main([str(tmp_path)]) == 2
    assert "--records-jsonl" in capsys.readouterr().err
    assert predict_main(["--engine", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "llmload fit RUN" in err
    run = _run_dir(tmp_path)
    assert fit_main([str(run)]) == 0
    engine = str(run / "engine.toml")
    for argv, said in (
        (["--set", "warp=2"], "--set"),
        (["--arrival", "poisson"], "--rate"),
        (["--replicas", "0"], ">= 1"),
    ):
        assert predict_main(["--engine", engine, *argv]) == 2
        assert said in capsys.readouterr().err


def test_fit_reads_every_worker_s_records_and_leaves_warm_up_requests_out_of_the_rows(tmp_path, capsys):
    from llmload.capacity.measured import load_measured

    run = _run_dir(tmp_path)
    whole = len(load_measured(run).reqs)
    lines = (run / "records.jsonl").read_bytes().splitlines(keepends=True)
    (run / "records.jsonl").unlink()
    (run / "records.worker0.jsonl").write_bytes(b"".join(lines[0::2]))  # --processes 2 writes one file per worker
    (run / "records.worker1.jsonl").write_bytes(b"".join(lines[1::2]))
    m = load_measured(run, str(run / "records.jsonl"))
    assert len(m.reqs) == whole and "worker1" in m.source
    warm = [json.loads(x) | {"warmup": True} if i < 5 else json.loads(x) for i, x in enumerate(lines)]
    (run / "records.worker0.jsonl").write_text("".join(json.dumps(d) + "\n" for d in warm))
    (run / "records.worker1.jsonl").unlink()
    m = load_measured(run, "")
    assert sum(not r.complete for r in m.reqs) >= 5  # still load on the engine, not rows of the fit
    assert fit_main([str(run)]) == 0
