"""How long ``llmload predict`` takes for a 6-step ladder of 5-minute steps up to 64 users (issue 25).

Run: ``.venv/bin/python benchmarks/predict_speed.py [--engine FILE] [--profile NAME] [--repeat N]``.
Runs ``llmload predict --ladder 1,4,8,16,32,64 --step-time 5m --step-warmup 30s`` as a user
would (a child process: imports, the virtual clock, the summary and its analysis) on an engine
file (default: the engine model's defaults, written to a temporary file), and prints the wall
time of each run, the best, and the requests predicted (from ``--summary-json``); MISS when the
best is over the target (30 s: the issue's "a 6-step ladder of 5-minute steps predicts in
seconds", on this busy 2-core machine). Also ``--replicas K`` to time K engines, and ``--plan`` to time
``llmload plan -u 64 --max-replicas 16`` with an SLO no count meets (every count from 1 to 16 predicted:
plan's worst case; target 30 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from llmload.capacity.engine_file import write_engine
from llmload.sim.params import EngineParams

TARGET_S = 30.0
LADDER = "1,4,8,16,32,64"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", default="", help="an engine file (default: the engine model's defaults)")
    p.add_argument("--profile", default="default", help="workload profile (default %(default)s)")
    p.add_argument("--replicas", type=int, default=1, help="engines behind the router (default %(default)s)")
    p.add_argument("--repeat", type=int, default=3, help="runs; the best counts (default %(default)s)")
    p.add_argument("--plan", action="store_true", help="time llmload plan's worst case instead (16 counts of 64 users)")
    ns = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = Path(ns.engine) if ns.engine else Path(tmp) / "engine.toml"
        if not ns.engine:
            write_engine(engine, EngineParams(), [], [], {})
        summary = Path(tmp) / "predicted.json"
        if ns.plan:
            return _plan(engine, ns)
        cmd = [sys.executable, "-m", "llmload", "predict", "--engine", str(engine), "--profile", ns.profile,
               "--ladder", LADDER, "--step-time", "5m", "--step-warmup", "30s", "--replicas", str(ns.replicas),
               "--summary-json", str(summary), "--quiet"]  # fmt: skip
        times = []
        for _ in range(ns.repeat):
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if done.returncode != 0:
                print(done.stdout + done.stderr, file=sys.stderr)
                return 1
        requests = json.loads(summary.read_text())["overall"]["requests"]
    best = min(times)
    flag = "" if best <= TARGET_S else f"  MISS (target <= {TARGET_S:g} s)"
    print(f"llmload predict --ladder {LADDER} --step-time 5m (30 min of load, {ns.replicas} replica(s), profile "
          f"{ns.profile}): {requests} requests predicted")  # fmt: skip
    print(f"wall time: {', '.join(f'{t:.2f}' for t in times)} s; best {best:.2f} s{flag}")
    return 0


def _plan(engine: Path, ns: argparse.Namespace) -> int:
    cmd = [sys.executable, "-m", "llmload", "plan", "--engine", str(engine), "--profile", ns.profile, "-u", "64",
           "--slo", "ttft_ms=1", "--max-replicas", "16"]  # fmt: skip
    times = []
    for _ in range(ns.repeat):
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if done.returncode != 1 or "no replica count up to 16" not in done.stdout:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
    best = min(times)
    flag = "" if best <= TARGET_S else f"  MISS (target <= {TARGET_S:g} s)"
    print(f"llmload plan -u 64 --max-replicas 16 (every count 1-16 predicted, 80 s each, profile {ns.profile})")
    print(f"wall time: {', '.join(f'{t:.2f}' for t in times)} s; best {best:.2f} s{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
