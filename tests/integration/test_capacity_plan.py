"""plan -> a live run of its answer: ``llmload plan`` answers how many simulator replicas 12 users need
under a TTFT SLO, then ``llmload run --host URL1,URL2,...`` (round-robin over that many ``llmload sim``
processes) measures the attainment; it must be the predicted one within 2 percentage points.

The engine file holds the simulator's own parameters (what the fit recovers is tested in
tests/integration/test_capacity.py): what is checked here is the search, predict's round-robin
router against the client's, and the multi-target run. One 25 s run; ~170 requests.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from llmload.capacity.engine_file import write_engine
from llmload.sim.params import EngineParams
from tests.helpers.harness import ROOT, run_cli
from tests.helpers.ports import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TRUE = {"max_num_seqs": 6, "step_base_ms": 20.0, "host_overhead_ms": 3.0, "per_seq_ms": 0.3,
        "per_kv_token_us": 0.5, "prefill_tps": 5000.0}  # fmt: skip
PROFILE = """name = "plan-test"
[[classes]]
name = "chat"
weight = 1
input_tokens = {dist = "uniform", min = 100, max = 400}
output_tokens = {dist = "uniform", min = 30, max = 60}
"""
SLO = "ttft_ms=300"


def _served(url: str) -> float:
    """Requests the simulator at ``url`` finished (its vllm:request_success_total)."""
    text = urllib.request.urlopen(f"{url}/metrics", timeout=5).read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("vllm:request_success_total")
    )


def test_plan_answers_the_replicas_and_a_live_run_over_that_many_confirms_the_attainment(sim, tmp_path):
    engine, profile, plan_json = tmp_path / "engine.toml", tmp_path / "mix.toml", tmp_path / "plan.json"
    write_engine(engine, EngineParams(**TRUE), [], [], {})
    profile.write_text(PROFILE)
    plan = subprocess.run(
        [sys.executable, "-m", "llmload", "plan", "--engine", str(engine), "--profile", str(profile), "-u", "12",
         "--slo", SLO, "-t", "20s", "--warmup", "5s", "--json", str(plan_json)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert plan.returncode == 0, plan.stdout + plan.stderr
    doc = json.loads(plan_json.read_text())
    k = doc["answer"]
    trials = {t["replicas"]: t for t in doc["trials"]}
    assert k == 3 and not trials[2]["meets"], plan.stdout  # 12 users on 6 slots a replica: 2 queue at times
    flags = [x for key, v in TRUE.items() for x in (f"--{key.replace('_', '-')}", str(v))]
    urls = [sim("--port", str(free_port()), "--mode", "engine", *flags) for _ in range(k)]
    code, output, s = run_cli(
        ["--headless", "--host", ",".join(urls), "--profile", str(profile), "--ladder", "12", "--step-time", "25s",
         "--step-warmup", "5s", "--slo", SLO, "--no-run-dir", "--loglevel", "WARNING", "--only-summary"],
        tmp_path, timeout=120,
    )  # fmt: skip
    assert s is not None and s["steps"], output[-3000:]
    step = s["steps"][0]["overall"]
    assert step["errors"] == 0 and step["requests"] > 100, output[-3000:]
    assert step["goodput"]["attainment"] == pytest.approx(trials[k]["attainment"], abs=0.02), (plan.stdout, step)
    served = [_served(u) for u in urls]
    assert min(served) > 0.8 * max(served), served  # round-robin: every replica had its share


def test_each_of_several_targets_is_checked_before_the_load(sim, tmp_path):
    url, dead = sim("--port", str(free_port())), f"http://127.0.0.1:{free_port()}"
    code, output, _ = run_cli(["--headless", "-u", "2", "-t", "5s", "--host", f"{url},{dead}", "--model", "m",
                               "--no-run-dir"], tmp_path, timeout=60)  # fmt: skip
    errors = [line for line in output.splitlines() if line.startswith("llmload: error:")]
    assert code == 2 and len(errors) == 1 and dead in errors[0] and "cannot connect" in errors[0], output[-3000:]
