"""The summary's shape does not drift: a fixed-seed run against the fixed-latency simulator
writes the same key set as the code did when ``tests/fixtures/summary_keys.json`` was frozen.

Two runs are compared: a plain run (no ladder, no SLOs) and a ladder run with a single-request
baseline, SLOs (every STATS block then has ``goodput``, the verdict ``slo``) and engine/GPU
collection from the simulator's own ``/metrics``. The key set is
every dotted path of dict keys (list items merged under ``[]``), of ``--summary-json`` and
of the run directory's ``summary.json``. Keys that name data rather than fields (error
kinds, a finding's evidence, signal names) are cut at their parent: what a field *holds*
may vary from run to run, which fields exist may not. A breach is null or a block
depending on the run's figures, so its keys are checked by the analysis' unit tests.

Refreeze (only for an intended schema change, and say so in docs/summary-schema.md)::

    .venv/bin/python -m tests.integration.test_summary_keys
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gevent
import pytest

from tests.helpers.harness import ROOT, run_cli

pytestmark = pytest.mark.integration

FIXTURE = ROOT / "tests/fixtures/summary_keys.json"
#: Keys whose children are data (names of error kinds, their examples, of signals, a finding's evidence), not
#: schema fields, or a block that is null or not depending on the figures (a breach; its keys: tests/unit/analysis).
DATA_KEYED = ("errors_by_kind", "errors_examples", "evidence", "signals", "breach")
#: The same, by full path: per-step signal statistics are keyed by signal name; the verdict's
#: ``inconclusive`` (null, or why) depends on how many requests each class got.
DATA_KEYED_PATHS = ("steps[].server", "steps[].gpu", "verdict.inconclusive")
SIM = ["--ttft-ms", "20", "--itl-ms", "2"]
COMMON = ["--headless", "--only-summary", "--seed", "7", "--profile", "default", "--max-tokens-cap", "16",
          "--stop-timeout", "5"]  # fmt: skip
PLAIN = ["-u", "3", "-r", "3", "-t", "4s", "--threshold", "ttft_p99_ms<60000", "--threshold", "long:error_rate<=1"]
LADDER = ["--ladder", "1,2", "--step-time", "3s", "--step-warmup", "1s", "--baseline-requests", "3",
          "--collect-interval", "0.5s", "--slo", "ttft_ms=5000,tpot_ms=1000,e2e_ms=60000"]  # fmt: skip


def key_paths(value: object, prefix: str = "") -> set[str]:
    """Dotted key paths of ``value`` (list items merged as ``[]``; data-keyed maps cut, see :data:`DATA_KEYED`)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            out.add(path)
            if str(k) not in DATA_KEYED and path not in DATA_KEYED_PATHS:
                out |= key_paths(v, path)
    elif isinstance(value, list):
        for item in value:
            out |= key_paths(item, f"{prefix}[]")
    return out


def _run_dir_summary(runs: Path) -> dict:
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    return json.loads((run_dir / "summary.json").read_text())


def collect(url: str, tmp: Path) -> dict[str, list[str]]:
    """Both runs' key sets: {"plain": [...], "plain_run_dir": [...], "ladder": [...], "ladder_run_dir": [...]}.

    The two runs go side by side (3 and 2 users against a fast server: light); only which
    keys their summaries have is compared.
    """
    out: dict[str, list[str]] = {}
    metrics = ["--engine-metrics", f"{url}/metrics", "--gpu-metrics", f"{url}/metrics"]
    jobs = {}
    for name, flags in (("plain", PLAIN), ("ladder", LADDER + metrics)):
        work = tmp / name
        work.mkdir()
        args = [*COMMON, *flags, "--host", url, "--runs-dir", str(work / "runs")]
        jobs[name] = gevent.spawn(run_cli, args, work, 90)
    gevent.joinall(list(jobs.values()))
    for name, job in jobs.items():
        runs = tmp / name / "runs"
        code, output, summary = job.get()
        assert code == 0 and summary is not None, output[-3000:]
        assert summary["overall"]["errors"] == 0, summary["errors_by_kind"]
        out[name] = sorted(key_paths(summary))
        out[f"{name}_run_dir"] = sorted(key_paths(_run_dir_summary(runs)))
    return out


def test_a_fixed_seed_run_writes_the_frozen_summary_key_set(sim, tmp_path):
    frozen = json.loads(FIXTURE.read_text())
    got = collect(sim(*SIM), tmp_path)
    for name, keys in frozen.items():
        missing, added = sorted(set(keys) - set(got[name])), sorted(set(got[name]) - set(keys))
        assert not missing and not added, f"{name}: missing {missing}, added {added}"


if __name__ == "__main__":  # refreeze the fixture (see the module docstring)
    import tempfile

    from llmload.sim import start_sim_process

    proc = start_sim_process(["--port", "0", *SIM], timeout=20)
    try:
        with tempfile.TemporaryDirectory() as d:
            keys = collect(proc.url, Path(d))
    finally:
        proc.stop()
    FIXTURE.write_text(json.dumps(keys, indent=1) + "\n")
    sys.stdout.write(f"{FIXTURE}: {', '.join(f'{k} {len(v)}' for k, v in keys.items())} keys\n")
