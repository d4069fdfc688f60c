"""Measure -> fit -> predict -> verify, for real: a simulator with known parameters (engine mode, not a
preset), a short llmload ladder against it, ``llmload fit`` on that run, then ``llmload predict`` of a
load the ladder did NOT run, checked against a real run of that load.

Stated tolerances (docs/capacity.md): the fitted step intercept (host + step_base) and prefill rate
within 10 %, the admission cap exact, the KV capacity measured (the KV gauge moved), the run replayed on
its fit within 25 % per step and class (TTFT/TPOT p50; 10 s steps of ~20 requests); the predicted TTFT and TPOT p50 of the unseen step within 20 %
of the measured ones (a real client adds HTTP and event-loop time the model does not have).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import tomllib

from tests.helpers.harness import ROOT, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TRUE = {"max_num_seqs": 6, "step_base_ms": 20.0, "host_overhead_ms": 3.0, "per_seq_ms": 0.3,
        "per_kv_token_us": 0.5, "prefill_tps": 5000.0}  # fmt: skip
PROFILE = """name = "capacity-test"
[[classes]]
name = "short"
weight = 1
input_tokens = {dist = "uniform", min = 80, max = 160}
output_tokens = {dist = "uniform", min = 30, max = 50}
[[classes]]
name = "long"
weight = 1
input_tokens = {dist = "uniform", min = 600, max = 900}
output_tokens = {dist = "uniform", min = 60, max = 90}
"""


def _llmload(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llmload", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)  # fmt: skip


def test_fit_recovers_the_engine_and_predicts_a_step_it_never_ran(sim, tmp_path):
    url = sim("--mode", "engine", *[x for k, v in TRUE.items() for x in (f"--{k.replace('_', '-')}", str(v))])
    profile = tmp_path / "mix.toml"
    profile.write_text(PROFILE)
    records = tmp_path / "records.jsonl"
    (tmp_path / "measured").mkdir()
    code, output, s = run_cli(
        ["--headless", "--host", url, "--profile", str(profile), "--ladder", "1,3,10", "--step-time", "10s",
         "--step-warmup", "2s", "--records-jsonl", str(records), "--engine-metrics", url, "--collect-interval", "0.5s",
         "--runs-dir", str(tmp_path / "runs"), "--seed", "7", "--loglevel", "WARNING"],
        tmp_path / "measured", timeout=120,
    )  # fmt: skip
    assert s is not None and len(s["steps"]) == 3, output[-3000:]
    run = next((tmp_path / "runs").iterdir())
    fitted = _llmload("fit", str(run), "--records-jsonl", str(records), "-o", str(tmp_path / "engine.toml"))
    assert fitted.returncode == 0, fitted.stdout + fitted.stderr
    doc = tomllib.loads((tmp_path / "engine.toml").read_text())
    p, prov = doc["params"], doc["provenance"]
    intercept = TRUE["host_overhead_ms"] + TRUE["step_base_ms"]
    assert p["host_overhead_ms"] + p["step_base_ms"] == pytest.approx(intercept, rel=0.10), fitted.stdout
    assert p["prefill_tps"] == pytest.approx(TRUE["prefill_tps"], rel=0.10), fitted.stdout
    assert p["max_num_seqs"] == TRUE["max_num_seqs"] and prov["max_num_seqs"]["how"] == "measured", fitted.stdout
    assert prov["prefill_tps"]["how"] == "fitted" and prov["host_overhead_ms"]["how"] == "assumed"
    assert doc["quality"] and all(q["tpot_p50_ms"] for q in doc["quality"] if q["class"] == "(all)")
    assert doc["replay_worst_p50_error"] < 0.25, fitted.stdout  # the run replayed on its fit, per step and class
    assert prov["kv_blocks"]["how"] == "measured", fitted.stdout  # --engine-metrics: the KV gauge moved

    predicted = _llmload("predict", "--engine", str(tmp_path / "engine.toml"), "--profile", str(profile), "-u", "5",
                         "-t", "60s", "--summary-json", str(tmp_path / "predicted.json"), "--quiet")  # fmt: skip
    assert predicted.returncode == 0, predicted.stdout + predicted.stderr
    pred = json.loads((tmp_path / "predicted.json").read_text())
    assert pred["predicted"]["engine_sha256"].startswith("sha256:") and pred["predicted"]["extrapolates"] == []
    (tmp_path / "real").mkdir()
    code, output, real = run_cli(
        ["--headless", "--host", url, "--profile", str(profile), "-u", "5", "-r", "5", "-t", "12s", "--no-run-dir",
         "--seed", "8", "--loglevel", "WARNING"], tmp_path / "real", timeout=90,
    )  # fmt: skip
    assert real is not None, output[-3000:]
    for metric in ("ttft_ms", "tpot_ms"):
        want, got = real["overall"][metric]["p50"], pred["overall"][metric]["p50"]
        assert got == pytest.approx(want, rel=0.20), (metric, want, got, fitted.stdout)
