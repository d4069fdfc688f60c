"""Soak: does the memory of one llmload (Locust) process stay flat over a long run?

What is measured
----------------
One ``python -m llmload run --headless -u <users> -t <minutes>`` child (one Locust
process, the packaged locustfile, plain ``openai-chat`` adapter) against a
``python -m llmload.sim`` child, with a workload that makes many requests: one class,
50 tokens in / 64 out, simulator TTFT 20 ms and ITL 5 ms (about 0.34 s per request, so
200 users send ~590 requests/s if the machine keeps up). Every ``--interval`` seconds
(default 10) the child's resident set size (VmRSS of /proc/<pid>/status) is sampled.

How to read it
--------------
The series is printed compactly (MB, one value per sample). ``RSS at warm-up`` is the
first sample at or after ``--warmup`` seconds (default 60: imports, users, connections,
histogram buckets and Python's allocator pools have settled by then); ``RSS at end`` is
the last sample taken while the test ran. ``growth`` = end − warm-up (MB and %), ``slope``
= least-squares fit of RSS over the post-warm-up samples (MB/min). Verdict: **flat** when
growth after warm-up is < 5 % of the warm-up RSS, else **growing** (look at the slope: a
steady positive slope is a leak; a step followed by a plateau is a pool or cache filling
once). Requests completed come from the run's ``--summary-json``. The client's and the
simulator's CPU utilisation are printed to show whether the box kept up (a saturated box
sends fewer requests, which slows a leak down, not hides it).

Every process started here (simulator, llmload) is stopped by its PID on exit, Ctrl-C or
SIGTERM included.

    .venv/bin/python benchmarks/soak_rss.py                 # 10 minutes, 200 users
    .venv/bin/python benchmarks/soak_rss.py --minutes 2 --users 50
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

try:
    from client_overhead import (
        Child,
        conditions,
        llmload_argv,
        llmload_env,
        proc_cpu_s,
        proc_rss_kb,
        summary_tokens,
        write_profile,
    )
except ImportError:  # run as ``python -m benchmarks.soak_rss``
    from benchmarks.client_overhead import (
        Child,
        conditions,
        llmload_argv,
        llmload_env,
        proc_cpu_s,
        proc_rss_kb,
        summary_tokens,
        write_profile,
    )

__all__ = ["main"]

FLAT_GROWTH = 0.05  # growth after warm-up below 5 % of the warm-up RSS = flat


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def sample_run(child: Child, sim_pid: int, interval: float, limit_s: float) -> list[tuple[float, float, float, float]]:
    """(seconds since launch, RSS MB, client CPU s, sim CPU s) every ``interval`` s until the child exits."""
    samples: list[tuple[float, float, float, float]] = []
    next_at = interval
    while not child.poll():
        now = time.perf_counter() - child.t_launch
        if now >= next_at:
            try:
                samples.append((now, proc_rss_kb(child.pid) / 1024, proc_cpu_s(child.pid), proc_cpu_s(sim_pid)))
            except (OSError, RuntimeError):  # exiting right now
                pass
            next_at += interval
        if now > limit_s:
            raise RuntimeError(f"llmload (pid {child.pid}) still running after {limit_s:.0f} s")
        time.sleep(min(0.2, max(0.0, next_at - now)))
    return samples


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--minutes", type=float, default=10.0, help="test time (default 10)")
    p.add_argument("--users", type=int, default=200, help="concurrent users (default 200)")
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--itl-ms", type=float, default=5.0)
    p.add_argument("--input-tokens", type=int, default=50)
    p.add_argument("--output-tokens", type=int, default=64)
    p.add_argument("--interval", type=float, default=10.0, help="seconds between RSS samples (default 10)")
    p.add_argument("--warmup", type=float, default=60.0, help="seconds before the reference sample (default 60)")
    ns = p.parse_args(argv)
    run_s = ns.minutes * 60

    from llmload.sim import start_sim_process

    print("llmload soak: RSS of one llmload process over a long run")
    for line in conditions():
        print("  " + line)
    print(f"  workload  one class, {ns.input_tokens} in / {ns.output_tokens} out, sim TTFT {ns.ttft_ms:g} ms, "
          f"ITL {ns.itl_ms:g} ms, {ns.users} users closed loop, {ns.minutes:g} min, RSS every {ns.interval:g} s")  # fmt: skip
    sys.stdout.flush()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGINT too: a background job starts with it ignored
        signal.signal(sig, _interrupt)
    child: Child | None = None
    with tempfile.TemporaryDirectory(prefix="llmload-soak-") as d:
        tmp = Path(d)
        profile = write_profile(tmp, ns.input_tokens, ns.output_tokens)
        summary_path = tmp / "summary.json"
        sim = start_sim_process(["--port", "0", "--ttft-ms", f"{ns.ttft_ms:g}", "--itl-ms", f"{ns.itl_ms:g}"])
        try:
            sim_cpu0 = proc_cpu_s(sim.pid)
            argv = llmload_argv(ns.users, run_s, sim.url, profile, summary_path, [])
            child = Child(argv, tmp / "llmload.log", llmload_env())
            samples = sample_run(child, sim.pid, ns.interval, run_s + 120)
            wall = child.t_exit - child.t_launch
            sim_cpu = proc_cpu_s(sim.pid) - sim_cpu0
            if child.returncode != 0:
                print(f"llmload exited with {child.returncode}; last lines of its log:\n{child.tail()}")
                return 1
            summary = orjson.loads(summary_path.read_bytes())
        except KeyboardInterrupt:
            print("\ninterrupted: stopping llmload and the simulator", flush=True)
            return 130
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # let nothing cut the clean-up short
                signal.signal(sig, signal.SIG_IGN)
            if child is not None:
                child.stop()
            sim.stop()
    _report(ns, samples, summary, child, wall, sim_cpu)
    return 0


def _report(
    ns: argparse.Namespace, samples: list, summary: dict[str, Any], child: Child, wall: float, sim_cpu: float
) -> None:
    t = np.array([s[0] for s in samples])
    rss = np.array([s[1] for s in samples])
    print(f"\nRSS (MB) every {ns.interval:g} s from launch ({len(samples)} samples):")
    for i in range(0, len(rss), 10):
        chunk = " ".join(f"{v:.1f}" for v in rss[i : i + 10])
        print(f"  {t[i] / 60:5.1f} min  {chunk}")
    post = t >= ns.warmup
    if post.sum() < 2:
        print(f"not enough samples after the {ns.warmup:g} s warm-up for a verdict")
        return
    i0 = int(np.argmax(post))
    warm, end = rss[i0], rss[-1]
    growth = end - warm
    slope = float(np.polyfit(t[post] / 60, rss[post], 1)[0])
    overall = summary["overall"]
    client_cpu = child.rusage.ru_utime + child.rusage.ru_stime
    print(f"RSS at warm-up ({t[i0]:.0f} s)  {warm:.1f} MB")
    print(
        f"RSS at end ({t[-1]:.0f} s)     {end:.1f} MB   (max RSS of the process {child.rusage.ru_maxrss / 1024:.1f} MB)"
    )
    print(f"growth after warm-up   {growth:+.1f} MB ({growth / warm * 100:+.2f} %)")
    print(f"slope after warm-up    {slope:+.3f} MB/min (least squares over {int(post.sum())} samples)")
    print(f"requests completed     {overall['ok']} ok, {overall['errors']} errors, {overall['interrupted']} interrupted "
          f"({overall['requests_per_s']:.0f} ok/s over {summary['duration_s']:.0f} s); "
          f"{summary_tokens(summary)} tokens streamed")  # fmt: skip
    print(f"CPU                    llmload {client_cpu / wall:.2f} cores, simulator {sim_cpu / wall:.2f} cores "
          f"(over the llmload process's {wall:.0f} s)")  # fmt: skip
    verdict = "flat" if growth / warm < FLAT_GROWTH else "growing"
    print(f"verdict                {verdict}  (criterion: growth after warm-up < {FLAT_GROWTH * 100:g} % of the "
          f"RSS at warm-up)")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
