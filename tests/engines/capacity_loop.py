"""Measure -> fit -> predict -> measure against a running llama-server (issue 25, "On llama.cpp").

:func:`fit_predict_measure` runs the whole loop with the real CLI: a ladder of one profile measured
with the engine's gauges collected (``--engine-metrics``: llama.cpp's ``requests_processing`` /
``requests_deferred`` pin the slot cap), ``llmload fit`` on it, a ladder of a second profile with
other lengths measured, then ``llmload predict`` of that ladder on the fit with ``--check`` against
the measurement. The server's tokenizer counts more prompt tokens than a profile asks for (the test
GGUF's BPE vocabulary is small: ~1.7x); the fit is in the server's tokens (usage), so the profile
given to predict has its prompt lengths scaled by the factor the fitted run measured (what
docs/capacity.md tells a user to do).

Used by tests/integration/test_llamacpp_capacity.py (short steps, loose bounds) and
benchmarks/llamacpp_capacity.py (longer steps; prints the figures in docs/capacity.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import tomllib

from tests.engines.llama_server import LlamaServer
from tests.helpers.harness import ROOT, run_cli

__all__ = ["Ladder", "Loop", "fit_predict_measure"]


@dataclass(frozen=True)
class Ladder:
    """A one-class profile (uniform prompt and output lengths) and the ladder it runs."""

    prompt: tuple[int, int]
    output: tuple[int, int]
    levels: str

    def describe(self) -> str:
        return f"ladder {self.levels} of {self.prompt[0]}-{self.prompt[1]} / {self.output[0]}-{self.output[1]} tokens"


@dataclass(frozen=True)
class Loop:
    """What the loop measured and predicted: the engine file's params and provenance, the prompt-token
    factor, the measured ladder's summary and the ``predict --check`` document."""

    params: dict
    provenance: dict
    fit_requests: int
    factor: float
    measured: dict
    check: dict
    fit: Ladder
    predicted: Ladder

    def rows(self) -> list[dict]:
        """The check's rows of every class together, one per step."""
        return [r for r in self.check["rows"] if r["class"] == "(all)"]

    def table(self) -> str:
        p, how = self.params, self.provenance
        lines = [
            f"llama.cpp: fitted on a {self.fit.describe()} ({self.fit_requests} requests), "
            f"predicted and measured a {self.predicted.describe()}",
            f"  fit: slot cap {p['max_num_seqs']} ({how['max_num_seqs']['how']}), prefill {p['prefill_tps']:.0f} tok/s, "
            f"intercept {p['host_overhead_ms'] + p['step_base_ms']:.1f} ms, per_seq {p['per_seq_ms']:.2f} ms, "
            f"per_kv_token {p['per_kv_token_us']:.3f} us; the server counted x{self.factor:.2f} the profile's prompt tokens",
            "  step  load      n meas  TTFT p50 measured / predicted (err)  TPOT p50 measured / predicted (err)",
        ]  # fmt: skip
        for r in self.rows():
            cells = []
            for key in ("ttft_p50_ms", "tpot_p50_ms"):
                f = r[key]
                err = "-" if f["error"] is None else f"{f['error'] * 100:+.1f} %"
                cells.append(f"{f['measured'] or 0:9.1f} / {f['predicted'] or 0:9.1f} ({err:>8})")
            lines.append(f"  {r['step']:>4}  {r['load']:<9} {r['n_measured']:>6}  {cells[0]}     {cells[1]}")
        for lv in self.check["levels"]:
            lines.append(f"  {lv['kind']} level measured: {lv['measured']}, predicted: {lv['predicted']}")
        return "\n".join(lines)


def _profile(path: Path, prompt: tuple[float, float], output: tuple[int, int]) -> str:
    path.write_text(
        'name = "llamacpp-capacity"\n[[classes]]\nname = "req"\nweight = 1\n'
        f'input_tokens = {{dist = "uniform", min = {round(prompt[0])}, max = {round(prompt[1])}}}\n'
        f'output_tokens = {{dist = "uniform", min = {output[0]}, max = {output[1]}}}\n'
    )
    return str(path)


def _llmload(*args: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "llmload", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, f"llmload {args[0]}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}"
    return p


def _ladder(url: str, folder: Path, profile: str, ladder: Ladder, step: list[str], *flags: str) -> dict:
    folder.mkdir(parents=True)
    code, output, s = run_cli(
        ["--headless", "--host", url, "--profile", profile, "--ladder", ladder.levels, *step, "--seed", "7",
         "--loglevel", "WARNING", *flags],
        folder,
        timeout=300,
    )  # fmt: skip
    assert s is not None, output[-3000:]
    assert [st["users"] for st in s["steps"] if st["index"] >= 0] == [int(u) for u in ladder.levels.split(",")], output[
        -3000:
    ]
    assert s["overall"]["errors"] == 0, s["errors_by_kind"]
    return s


def fit_predict_measure(
    server: LlamaServer, workdir: Path, fit: Ladder, predicted: Ladder, step_s: int, warmup_s: int
) -> Loop:
    """The loop against ``server`` (its files under ``workdir``): see the module's docstring."""
    step = ["--step-time", f"{step_s}s", "--step-warmup", f"{warmup_s}s"]
    records, runs, engine = workdir / "fit-records.jsonl", workdir / "fit-runs", workdir / "engine.toml"
    _ladder(server.url, workdir / "fit", _profile(workdir / "fit.toml", fit.prompt, fit.output), fit, step,
            "--records-jsonl", str(records), "--engine-metrics", server.url, "--collect-interval", "0.5s",
            "--runs-dir", str(runs))  # fmt: skip
    _llmload("fit", str(next(runs.iterdir())), "--records-jsonl", str(records), "-o", str(engine))
    doc = tomllib.loads(engine.read_text())

    ok = [r for line in records.read_bytes().splitlines() if (r := orjson.loads(line))["outcome"] == "ok"]
    counted = [r for r in ok if r["input_tokens_from_usage"]]
    factor = sum(r["input_tokens"] for r in counted) / max(1, sum(r["asked_input_tokens"] for r in counted))

    measured_profile = _profile(workdir / "predicted.toml", predicted.prompt, predicted.output)
    measured = _ladder(server.url, workdir / "measured", measured_profile, predicted, step, "--no-run-dir")
    scaled = _profile(workdir / "predicted-scaled.toml", tuple(x * factor for x in predicted.prompt), predicted.output)
    check_json = workdir / "check.json"
    _llmload("predict", "--engine", str(engine), "--profile", scaled, "--ladder", predicted.levels, *step,
             "--seed", "7", "--quiet", "--check", str(workdir / "measured" / "summary.json"),
             "--check-json", str(check_json))  # fmt: skip
    return Loop(doc["params"], doc["provenance"], len(ok), factor, measured, json.loads(check_json.read_text()),
                fit, predicted)  # fmt: skip
