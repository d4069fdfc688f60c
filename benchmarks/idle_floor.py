"""The floor under llmload's memory per idle session: what gevent and a plain Locust user cost alone.

What is measured
----------------
1. **A bare greenlet** (in this process): N greenlets, each ``--depth`` Python calls deep,
   asleep in ``gevent.sleep`` (as a thinking session is). RSS growth / N, with gevent's
   ``track_greenlet_tree`` on (its default) and off (as llmload sets it).
2. **A plain Locust user** (a ``locust`` child, no llmload): ``FastHttpUser``, one streamed
   ``POST /v1/chat/completions`` to ``python -m llmload.sim --mode fixed`` (its body read to the
   end, the keep-alive connection kept), then a 1000-s wait: what every Locust session holds
   (user, TaskSet, greenlet, ``FastHttpSession`` with its cookie jar, user agent, connection
   pool and socket). RSS of the child, median over the steady window, minus a 50-user run, / (N − 50).

Compare with ``KB/session`` of ``benchmarks/sessions_scale.py`` (the same measurement for an
llmload conversation session): the difference is llmload's own share.

    nice -n 10 .venv/bin/python benchmarks/idle_floor.py --users 2000
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from client_overhead import Child, conditions, proc_rss_kb
    from sessions_scale import tree_rss_cpu
except ImportError:  # run as ``python -m benchmarks.idle_floor``
    from benchmarks.client_overhead import Child, conditions, proc_rss_kb
    from benchmarks.sessions_scale import tree_rss_cpu

__all__ = ["main"]

LOCUSTFILE = """
from locust import FastHttpUser, constant, task

class Plain(FastHttpUser):
    wait_time = constant(1000)

    @task
    def one(self):
        body = {"model": "llmload-sim", "stream": True, "max_tokens": 16,
                "messages": [{"role": "user", "content": "hello " * 50}]}
        with self.client.post("/v1/chat/completions", json=body, stream=True, catch_response=True) as r:
            for _ in r.iter_lines():
                pass
"""


def greenlet_kb(n: int, depth: int, track: bool) -> float:
    import os

    import gevent

    gevent.config.track_greenlet_tree = track

    def chain(k: int) -> None:
        if k:
            chain(k - 1)
        else:
            gevent.sleep(1000)

    gc.collect()
    before = proc_rss_kb(os.getpid())
    gs = [gevent.spawn(chain, depth) for _ in range(n)]
    gevent.sleep(0.5)  # every greenlet has run to its sleep
    gc.collect()
    grown = proc_rss_kb(os.getpid()) - before
    gevent.killall(gs)
    return grown / n


def locust_rss_mb(users: int, url: str, tmp: Path, seconds: float) -> float:
    lf = tmp / "plain_locustfile.py"
    lf.write_text(LOCUSTFILE)
    argv = [sys.executable, "-m", "locust", "-f", str(lf), "--headless", "-u", str(users), "-r",
            f"{users / 5:g}", "-t", f"{seconds:g}s", "--host", url, "--only-summary", "--loglevel", "WARNING",
            "--stop-timeout", "0"]  # fmt: skip
    child = Child(argv, tmp / f"locust-{users}.log")
    samples: list[tuple[float, float]] = []
    try:
        while not child.poll():
            samples.append((time.perf_counter() - child.t_launch, tree_rss_cpu(child.pid)[0]))
            time.sleep(1.0)
    finally:
        child.stop()
    steady = [rss for t, rss in samples if 5.0 + 8.0 <= t <= seconds]  # start-up ~3 s, spawn 5 s, then idle
    if not steady:
        raise RuntimeError(f"no steady samples:\n{child.tail()}")
    return statistics.median(steady)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=2000)
    p.add_argument("--depth", type=int, default=12, help="Python calls under each sleeping greenlet (default 12)")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--greenlets-only", choices=("on", "off"), help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.greenlets_only is not None:  # a fresh process per setting: freed pages stay in the RSS
        print(f"{greenlet_kb(ns.users, ns.depth, ns.greenlets_only == 'on'):.2f}")
        return 0
    print("llmload idle floor: memory of a bare greenlet and of a plain Locust user")
    for line in conditions():
        print("  " + line)
    for track in (True, False):
        out = subprocess.run([sys.executable, __file__, "--users", str(ns.users), "--depth", str(ns.depth),
                              "--greenlets-only", "on" if track else "off"], capture_output=True, text=True)  # fmt: skip
        kb = float(out.stdout.strip().splitlines()[-1])
        print(f"greenlet, {ns.depth} calls deep, asleep, track_greenlet_tree={track}: {kb:.1f} KB each "
              f"(RSS growth / {ns.users})")  # fmt: skip
    sys.stdout.flush()
    from llmload.sim import start_sim_process

    with (
        tempfile.TemporaryDirectory(prefix="llmload-floor-") as d,
        start_sim_process(["--mode", "fixed", "--ttft-ms", "50", "--itl-ms", "10"]) as sim,
    ):
        ref = locust_rss_mb(50, sim.url, Path(d), ns.seconds)
        big = locust_rss_mb(ns.users, sim.url, Path(d), ns.seconds)
    print(f"plain Locust FastHttpUser after one streamed request, idle: {(big - ref) * 1024 / (ns.users - 50):.1f} KB "
          f"per user (RSS {big:.0f} MB at {ns.users}, {ref:.0f} MB at 50)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
