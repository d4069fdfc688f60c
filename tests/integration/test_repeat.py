"""``llmload run --repeat 2`` for real against the fixed simulator: headless with ``--processes 2``, and a 2-step ladder.

Each checks the run directory (each repetition's summary, the aggregate in summary.json with fresh seeds), the
console's aggregate table, and that ``llmload gate`` reads the aggregate (n = the repetitions).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmload.cli import main
from tests.helpers.harness import ROOT, write_tiny_profile

pytestmark = pytest.mark.integration


def _repeat(tmp_path: Path, url: str, *flags: str) -> tuple[Path, str]:
    cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--only-summary", "--stop-timeout", "5",
           "--host", url, "--profile", write_tiny_profile(tmp_path, 4), "--repeat", "2", "--repeat-pause", "0.2s",
           "--seed", "11", "--runs-dir", str(tmp_path / "runs"), *flags]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=ROOT)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    (folder,) = (tmp_path / "runs").iterdir()
    return folder, out


def _check(folder: Path, out: str) -> dict:
    assert folder.name.endswith("-tiny-4-x2")
    assert {"rep-1.summary.json", "rep-2.summary.json", "summary.json", "verdict.json"} <= {
        p.name for p in folder.iterdir()
    }
    reps = [json.loads((folder / f"rep-{i}.summary.json").read_text()) for i in (1, 2)]
    assert [r["config"]["seed"] for r in reps] == [11, 12]
    assert all(r["overall"]["ok"] >= 20 and r["overall"]["errors"] == 0 for r in reps)
    rep = json.loads((folder / "summary.json").read_text())["repeat"]
    assert rep["runs"] == 2 and rep["seeds"] == [11, 12] and rep["exit_codes"] == [0, 0]
    p50 = rep["aggregate"]["overall"]["ttft_p50_ms"]
    assert p50["values"] == [r["overall"]["ttft_ms"]["p50"] for r in reps]
    assert 45 <= p50["median"] <= 200  # the simulator's 50 ms, as a loaded client measures it
    assert "repeated 2 runs (seeds 11..12)" in out and "llmload: repeat: exit code 0" in out
    return rep


def test_repeat_headless_with_processes(sim, tmp_path, capsys):
    url = sim("--mode", "fixed", ttft_ms=50, itl_ms=10)
    folder, out = _repeat(tmp_path, url, "-u", "4", "-r", "4", "-t", "2s", "--processes", "2")
    rep = _check(folder, out)
    assert rep["safe"] is None
    reps = [json.loads((folder / f"rep-{i}.summary.json").read_text()) for i in (1, 2)]
    assert all(r["workers"] == 2 for r in reps)
    code = main(["gate", str(folder), str(folder), "--json"])  # p99s of 2 runs on a busy box may be too far apart
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 3) and doc["status"] != "FAIL" and doc["baseline"]["repetitions"] == 2
    p50 = next(c for c in doc["checks"] if c["scope"] == "overall" and c["metric"] == "ttft_p50")
    assert p50["baseline"]["runs"] is True and p50["baseline"]["n"] == 2
    assert p50["baseline"]["value"] == rep["aggregate"]["overall"]["ttft_p50_ms"]["median"]


def test_repeat_a_ladder(sim, tmp_path):
    url = sim("--mode", "fixed", ttft_ms=50, itl_ms=10)
    folder, out = _repeat(tmp_path, url, "--ladder", "1,2", "--step-time", "2s", "--step-warmup", "0.5s")
    rep = _check(folder, out)
    assert rep["safe"]["values"] == [2, 2] and rep["safe"]["text"] == "safe 2 users in 2 of 2 runs"
    assert "safe 2 users in 2 of 2 runs" in out
