"""Session scale: how many mostly-idle conversation sessions one llmload run holds, and at what cost.

What is measured
----------------
For each N (``--sessions``, default 1000 5000 10000) and each process count (``--processes``,
default ``1 2``: one Locust process, then ``--processes 2``), one ``python -m llmload run
--headless -u N`` child against a ``python -m llmload.sim --mode fixed --ttft-ms 50 --itl-ms 10``
child (127.0.0.1 only). The workload is one conversation class: ``--turns`` turns (default 6),
``--input-tokens`` in / ``--output-tokens`` out per turn (50 / 16), and a think time drawn
uniformly in [``think/2``, ``3·think/2``] (``--think-s``, default 20 s) before every turn but
the first. A Locust user is one session; with 16 output tokens a turn lasts ~0.2 s, so ~99 %
of the sessions are idle (thinking) at any moment — as an agent session is while its tools run:
a tool wait is the same kind of idle (a user asleep in gevent, holding its history and its
connection).

Sessions are spawned at ``N / spawn-s`` per second (``--spawn-s``, default 20 s = the mean
think time), so the first turns arrive at the same rate as the later ones: the spawn is no
burst. The run lasts ``spawn-s + --steady-s`` (default 20 + 30 s).

* ``RSS`` = resident set size of the llmload process tree (the master and its workers with
  ``--processes 2``), the median of 1-s samples over the steady window (after the spawn and
  5 s, to 2 s before the end: every session exists and holds its history; ~99 % are idle),
  taking only the samples where the exporter's ``llmload_users`` is N (on a loaded box the
  spawn can run late).
  ``KB/session`` = (RSS(N) − RSS(reference)) / (N − reference), the reference being the same
  run with ``--reference`` sessions (default 50): the marginal memory of one session.
* ``CPU/turn`` = CPU seconds of the llmload process tree over the steady window / turns that
  started in it (µs; sampled from /proc/<pid>/stat, so start-up and shutdown are excluded).
  ``cores`` the same CPU over wall time, for llmload and the simulator.
* ``lag`` = llmload's own event-loop lag figure (:mod:`llmload.metrics.selfcheck`: how late a
  greenlet sleeping 100 ms wakes up, the worst per report interval), scraped every second from
  its Prometheus exporter (``llmload_worker_loop_lag_seconds``, per worker): the median and the
  worst of the scrapes over the steady window.
* ``TTFT err`` = client TTFT − 50 ms (the simulator's fixed TTFT), from ``--records-jsonl``:
  ``spread`` = turns ≥ 2 (sent after a think time, spread out), p50/p99; ``spawn`` = first
  turns (sent as the users spawn), p50/p99, reported apart. The error holds the simulator's
  own lateness too (it shares the 2 cores); the sim's CPU is printed to judge it.

``--split`` says where the TTFT error comes from. The simulator stamps its chunks
(``--stamp-chunks``) and llmload runs ``benchmarks/_stamped_locustfile.py``, so each spread
turn's error splits at the simulator's first-chunk send stamp: ``server`` = send → the
simulator sends chunk 1, − 50 ms (the request's way in, the simulator's loop and timer
lateness) and ``client`` = that send → the client's stamp (the client's loop). Every Python
process started (llmload, its workers, the simulator) also times each garbage collection
(``benchmarks/_gc_probe``: wall and CPU ms), and each spread turn late by more than 5 ms is
matched to the collections > 2 ms its TTFT overlapped: llmload's, the simulator's, or
neither (then: CPU contention, the loop's other work). The stamped locustfile keeps a few
arrays per request, so take ``KB/session`` from a run without ``--split``.

``--burst N`` (default 2000; 0 skips) adds a run whose N first turns are all sent at once
(``-r N``), in one process, and splits the first-turn TTFT into spawn (Locust's spawn loop
running while the requests wait: the first record's start to the last's), client and server.

How to read it
--------------
The box is shared (other work, 2 cores): the load average is printed per run. Targets (issue
26): 10 000 sessions, TTFT error p99 < 5 ms once spread out, < 20 KB RSS per idle session.
The open-file limit bounds N: one keep-alive connection per session, in the client and the
simulator; the soft limit is raised to the hard one here.

    nice -n 10 .venv/bin/python benchmarks/sessions_scale.py
    nice -n 10 .venv/bin/python benchmarks/sessions_scale.py --sessions 2000 --processes 1 --burst 0
    .venv/bin/python benchmarks/sessions_scale.py --split --sessions 10000 --processes 1 --burst 0
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

try:
    from client_overhead import (
        STAMPED_LOCUSTFILE,
        Child,
        conditions,
        llmload_argv,
        llmload_env,
        proc_cpu_s,
        proc_rss_kb,
    )
except ImportError:  # run as ``python -m benchmarks.sessions_scale``
    from benchmarks.client_overhead import (
        STAMPED_LOCUSTFILE,
        Child,
        conditions,
        llmload_argv,
        llmload_env,
        proc_cpu_s,
        proc_rss_kb,
    )

__all__ = ["main"]

SIM_TTFT_MS = 50.0
SIM_ITL_MS = 10.0
TARGET_ERR_P99_MS = 5.0
TARGET_KB = 20.0
GC_PROBE = Path(__file__).resolve().parent / "_gc_probe"


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def write_profile(directory: Path, ns: argparse.Namespace) -> Path:
    path = directory / "sessions_profile.toml"
    lo, hi = ns.think_s / 2, ns.think_s * 1.5
    path.write_text(
        'name = "sessions"\n'
        'description = "benchmark: one conversation class, mostly thinking"\n'
        "[[classes]]\n"
        'name = "chat"\n'
        "weight = 1\n"
        f"input_tokens = {ns.input_tokens}\n"
        f"output_tokens = {ns.output_tokens}\n"
        f"turns = {ns.turns}\n"
        f'think_time_s = {{dist = "uniform", min = {lo:g}, max = {hi:g}}}\n'
    )
    return path


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (/proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return out


def tree_rss_cpu(pid: int) -> tuple[float, float]:
    """(RSS MB, CPU s) summed over the process tree of ``pid``."""
    rss = cpu = 0.0
    for p in tree(pid):
        with contextlib.suppress(OSError, RuntimeError):
            rss += proc_rss_kb(p) / 1024
            cpu += proc_cpu_s(p)
    return rss, cpu


def scrape_lag(port: int) -> tuple[list[float], int]:
    """``llmload_worker_loop_lag_seconds`` of every worker and ``llmload_users``, from the exporter ([], -1: not up)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=0.5) as r:
            text = r.read().decode()
    except OSError:
        return [], -1
    lines = text.splitlines()
    users = [int(float(line.rsplit(" ", 1)[1])) for line in lines if line.startswith("llmload_users ")]
    return [float(line.rsplit(" ", 1)[1]) for line in lines
            if line.startswith("llmload_worker_loop_lag_seconds{")], (users[0] if users else -1)  # fmt: skip


@dataclass
class Sample:
    wall: float  # time.time()
    rss_mb: float
    cpu_s: float
    sim_cpu_s: float
    lags: list[float]
    users: int  # llmload_users when scraped (-1: no answer)


@dataclass
class RunResult:
    sessions: int
    processes: int
    load1: float
    rss_mb: float
    cpu_us_per_turn: float
    cores: float
    sim_cores: float
    lag_p50_ms: float
    lag_max_ms: float
    spread: np.ndarray  # TTFT − 50 ms (ms), turns ≥ 2
    spawn: np.ndarray  # TTFT − 50 ms (ms), first turns
    requests: int
    errors: int
    first_starts_s: float  # first turns: last start − first start (s)
    first_headers: np.ndarray  # first turns: send -> response headers (ms); the fixed sim writes them on arrival
    server_err: np.ndarray  # turns >= 2: client send -> the sim's first-chunk send stamp, − 50 ms (ms; empty: no stamps)
    client_late: np.ndarray  # turns >= 2: the sim's first-chunk send stamp -> the client's stamp (ms)
    window: tuple[float, float]  # the steady window, time.time()
    client_gc: list[Pause]  # --split: llmload's collections
    spread_start: np.ndarray  # time.time() of each spread turn's send, aligned with ``spread``
    spread_headers: np.ndarray  # spread turns: send -> response headers (ms; the fixed sim writes them on arrival)


@dataclass(frozen=True)
class Pause:
    """One garbage collection (benchmarks/_gc_probe): generation, wall and CPU seconds, end as time.time()."""

    gen: int
    wall_s: float
    cpu_s: float
    end: float


def gc_pauses(directory: Path, sim: bool, remove: bool) -> list[Pause]:
    """The collections that benchmarks/_gc_probe recorded, of the simulator or of llmload's processes."""
    out: list[Pause] = []
    for path in directory.glob("gc-*.json"):
        d = orjson.loads(path.read_bytes())
        if ("llmload.sim" in d["cmd"]) != sim:
            continue
        out.extend(Pause(int(g), float(w), float(c), float(t)) for g, w, c, t in d["pauses"])
        if remove:
            path.unlink()
    return sorted(out, key=lambda x: x.end)


def read_stamps(base: Path) -> dict[str, Any]:
    """The stamped locustfile's files of one run (one per process), joined: ttft_ns, first_late_ns, turn, counts."""
    keys = ("ttft_ns", "first_late_ns", "turn")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    counts: dict[str, int] = {}
    for path in sorted(base.parent.glob(base.name + ".*")):
        d = orjson.loads(path.read_bytes())
        for k in keys:
            parts[k].append(np.asarray(d.get(k, []), dtype=np.float64))
        for k, v in d.get("counts", {}).items():
            counts[k] = counts.get(k, 0) + v
    out: dict[str, Any] = {k: np.concatenate(v) if v else np.empty(0) for k, v in parts.items()}
    out["counts"] = counts
    return out


def read_records(base: Path) -> list[dict[str, Any]]:
    recs = []
    for path in sorted(base.parent.glob(base.stem + "*" + base.suffix)):
        recs.extend(orjson.loads(line) for line in path.read_bytes().splitlines() if line)
    return recs


def one_run(ns: argparse.Namespace, sim: Any, tmp: Path, profile: Path, n: int, processes: int,
            spawn_s: float, run_s: float, tag: str, stamps: Path | None = None) -> RunResult:  # fmt: skip
    la = os.getloadavg()[0]
    rec_path = tmp / f"rec-{tag}.jsonl"
    extra = ["--records-jsonl", str(rec_path)] + (["--processes", str(processes)] if processes > 1 else [])
    if stamps is not None:  # llmload's user plus the simulator's send stamps (benchmarks/_stamped_locustfile.py)
        extra += ["-f", str(STAMPED_LOCUSTFILE)]
    argv = llmload_argv(n, run_s, sim.url, profile, tmp / f"summary-{tag}.json", extra)
    argv[argv.index("-r") + 1] = f"{n / spawn_s:g}"
    stamp_env = {"LLMLOAD_BENCH_STAMPS": str(stamps), "LLMLOAD_BENCH_STAMPS_PER_PROCESS": "1"}
    env = llmload_env(stamp_env if stamps is not None else None)
    port = int(env["LLMLOAD_EXPORTER_PORT"])
    child = Child(argv, tmp / f"llmload-{tag}.log", env)
    samples: list[Sample] = []
    t_started = 0.0
    try:
        while not child.poll():
            rss, cpu = tree_rss_cpu(child.pid)
            lags, users = scrape_lag(port)
            if lags and not t_started:
                t_started = time.time()  # the exporter answers: the test is starting
            samples.append(Sample(time.time(), rss, cpu, proc_cpu_s(sim.pid), lags, users))
            if time.perf_counter() - child.t_launch > run_s + 120:
                raise RuntimeError(f"llmload (pid {child.pid}) still running after {run_s + 120:.0f} s")
            time.sleep(1.0)
    finally:
        child.stop()
    if child.returncode not in (0, 1):  # 1: some request failed (counted below)
        raise RuntimeError(f"llmload exited with {child.returncode}:\n{child.tail()}")
    recs = read_records(rec_path)
    if not recs:
        raise RuntimeError(f"no records written:\n{child.tail()}")
    t0 = min(r["start_wall_ns"] for r in recs) / 1e9  # the first request: the test start
    lo, hi = t0 + spawn_s + 5.0, t0 + run_s - 2.0
    window = [s for s in samples if lo <= s.wall <= hi]
    if len(window) < 2:
        raise RuntimeError(f"steady window too short ({len(window)} samples)")
    turns = sum(1 for r in recs if lo * 1e9 <= r["start_wall_ns"] <= hi * 1e9)
    wall = window[-1].wall - window[0].wall
    cpu = window[-1].cpu_s - window[0].cpu_s
    lags = [x * 1000 for s in window for x in s.lags]

    def err(r: dict[str, Any]) -> float:
        return r["chunks_ns"][0] / 1e6 - SIM_TTFT_MS  # relative to the start stamp

    ok = [r for r in recs if r["outcome"] == "ok" and r["chunks_ns"]]
    first = [r["start_wall_ns"] / 1e9 for r in recs if r["turn"] == 1]
    st = read_stamps(stamps) if stamps is not None else {"ttft_ns": np.empty(0), "first_late_ns": np.empty(0),
                                                          "turn": np.empty(0)}  # fmt: skip
    later = st["turn"] >= 2
    late_ms = st["first_late_ns"][later] / 1e6
    # RSS: only once the exporter counts every session (a loaded box can spawn late); else the whole window
    full = [s for s in window if s.users >= n]
    return RunResult(
        n, processes, la, statistics.median(s.rss_mb for s in full or window), cpu / max(turns, 1) * 1e6, cpu / wall,
        (window[-1].sim_cpu_s - window[0].sim_cpu_s) / wall,
        statistics.median(lags) if lags else float("nan"), max(lags) if lags else float("nan"),
        np.array([err(r) for r in ok if r["turn"] >= 2]), np.array([err(r) for r in ok if r["turn"] == 1]),
        len(recs), sum(1 for r in recs if r["outcome"] == "error"), max(first) - min(first) if first else 0.0,
        np.array([r["headers_ns"] / 1e6 for r in ok if r["turn"] == 1 and r["headers_ns"]]),
        st["ttft_ns"][later] / 1e6 - late_ms - SIM_TTFT_MS, late_ms, (lo, hi),
        gc_pauses(tmp, sim=False, remove=True) if stamps is not None else [],
        np.array([r["start_wall_ns"] / 1e9 for r in ok if r["turn"] >= 2]),
        np.array([r["headers_ns"] / 1e6 for r in ok if r["turn"] >= 2 and r["headers_ns"]]),
    )  # fmt: skip


def _pct(a: np.ndarray, q: float) -> float:
    return float(np.percentile(a, q)) if a.size else float("nan")


def raise_nofile(need: int) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by both children
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    note = "" if soft >= need else f" — below the ~{need} that the largest N needs: those runs will fail to connect"
    return f"open files {soft} (soft limit, raised from the hard limit {hard}){note}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sessions", type=int, nargs="*", default=[1000, 5000, 10000], help="none: the burst only")
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    p.add_argument("--reference", type=int, default=50, help="sessions of the reference run (default 50)")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--think-s", type=float, default=20.0, help="mean think time (uniform in [t/2, 3t/2])")
    p.add_argument("--input-tokens", type=int, default=50)
    p.add_argument("--output-tokens", type=int, default=16)
    p.add_argument("--spawn-s", type=float, default=20.0, help="seconds over which the N sessions start")
    p.add_argument("--steady-s", type=float, default=30.0, help="seconds measured after the spawn")
    p.add_argument("--burst", type=int, default=2000, help="sessions of the all-at-once run (0: none)")
    p.add_argument("--sim-freeze", type=float, default=0.0, metavar="S",
                   help="with --split, an experiment: the simulator freezes its objects every S seconds "
                        "(benchmarks/_gc_probe), to see the error without its full collections")  # fmt: skip
    p.add_argument("--split", action="store_true",
                   help="split the TTFT error at the simulator's send stamps (llmload with benchmarks/"
                        "_stamped_locustfile.py, whose per-request arrays inflate KB/session) and time every "
                        "garbage collection of llmload and of the simulator")  # fmt: skip
    ns = p.parse_args(argv)

    from llmload.sim import start_sim_process

    print("llmload session scale: mostly-idle conversation sessions against the fixed simulator")
    for line in conditions():
        print("  " + line)
    print("  " + raise_nofile(max([*ns.sessions, ns.burst]) + 200))
    print(f"  workload  one conversation class, {ns.turns} turns of {ns.input_tokens} in / {ns.output_tokens} out, "
          f"think uniform {ns.think_s / 2:g}-{ns.think_s * 1.5:g} s; sim fixed TTFT {SIM_TTFT_MS:g} ms, ITL "
          f"{SIM_ITL_MS:g} ms; spawn over {ns.spawn_s:g} s, steady window {ns.steady_s:g} s")  # fmt: skip
    sys.stdout.flush()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    results: list[RunResult] = []
    refs: dict[int, RunResult] = {}
    burst: RunResult | None = None
    with tempfile.TemporaryDirectory(prefix="llmload-sessions-") as d:
        tmp = Path(d)
        profile = write_profile(tmp, ns)
        sim_argv = ["--mode", "fixed", "--ttft-ms", f"{SIM_TTFT_MS:g}", "--itl-ms", f"{SIM_ITL_MS:g}"]
        if ns.split:  # every Python process started from here times its collections (benchmarks/_gc_probe)
            os.environ["LLMLOAD_BENCH_GCPROBE"] = str(tmp)
            if ns.sim_freeze > 0:
                os.environ["LLMLOAD_BENCH_SIM_FREEZE"] = f"{ns.sim_freeze:g}"
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(GC_PROBE), os.environ.get("PYTHONPATH")) if p)
        sim = start_sim_process(sim_argv + (["--stamp-chunks"] if ns.split else []))

        def stamp_path(tag: str) -> Path | None:
            return tmp / f"stamps-{tag}.json" if ns.split else None

        run_s = ns.spawn_s + ns.steady_s
        try:
            for procs in ns.processes if ns.sessions else []:
                refs[procs] = one_run(ns, sim, tmp, profile, ns.reference, procs, ns.spawn_s, run_s, f"ref{procs}",
                                      stamp_path(f"ref{procs}"))  # fmt: skip
                _line(refs[procs], None)
                for n in ns.sessions:
                    try:
                        r = one_run(ns, sim, tmp, profile, n, procs, ns.spawn_s, run_s, f"{n}-{procs}",
                                    stamp_path(f"{n}-{procs}"))  # fmt: skip
                    except RuntimeError as e:
                        print(f"  N={n} processes={procs}: did not hold: {str(e).splitlines()[0]}", flush=True)
                        break
                    results.append(r)
                    _line(r, refs[procs])
        except KeyboardInterrupt:
            print("\ninterrupted: stopping llmload and the simulator", flush=True)
            return 130
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)
            sim.stop()
        if results:
            _table(results, refs)
            if ns.split:
                _gc_table(results, gc_pauses(tmp, sim=True, remove=True))
        if ns.burst:  # a fresh simulator that stamps its chunks; the run ends before any second turn
            stamps = tmp / "stamps.json"
            with start_sim_process(["--mode", "fixed", "--ttft-ms", f"{SIM_TTFT_MS:g}", "--itl-ms",
                                    f"{SIM_ITL_MS:g}", "--stamp-chunks"]) as sim:  # fmt: skip
                burst = one_run(ns, sim, tmp, profile, ns.burst, 1, 0.001, ns.think_s / 2 - 1, "burst", stamps)
            _burst(burst, read_stamps(stamps))
    return 0


def _kb(r: RunResult, ref: RunResult | None) -> float:
    if ref is None or r.sessions == ref.sessions:
        return float("nan")
    return (r.rss_mb - ref.rss_mb) * 1024 / (r.sessions - ref.sessions)


def _line(r: RunResult, ref: RunResult | None) -> None:
    print(f"  done: N={r.sessions} processes={r.processes} load {r.load1:.2f}: RSS {r.rss_mb:.0f} MB "
          f"({_kb(r, ref):.1f} KB/session), {r.requests} requests, {r.errors} errors", flush=True)  # fmt: skip


def _table(results: list[RunResult], refs: dict[int, RunResult]) -> None:
    print(
        "\n   N  proc  load1  RSS MB  KB/sess  CPU/turn µs  cores  sim cores  lag p50/max ms"
        "  TTFT err spread p50/p99 ms  spawn p50/p99 ms  requests  errors"
    )
    for r in results:
        print(f"{r.sessions:>6} {r.processes:>4} {r.load1:>6.2f} {r.rss_mb:>7.0f} {_kb(r, refs[r.processes]):>8.1f} "
              f"{r.cpu_us_per_turn:>12.0f} {r.cores:>6.2f} {r.sim_cores:>10.2f} "
              f"{r.lag_p50_ms:>7.1f}/{r.lag_max_ms:<7.1f} {_pct(r.spread, 50):>12.1f}/{_pct(r.spread, 99):<13.1f} "
              f"{_pct(r.spawn, 50):>8.1f}/{_pct(r.spawn, 99):<8.1f} {r.requests:>9} {r.errors:>7}")  # fmt: skip
    if any(r.server_err.size for r in results):
        print("\nTTFT error of the spread turns, split at the simulator's first-chunk send stamp (ms):")
        print("   N  proc  server: send -> sim sends chunk 1, − 50 p50/p99   client: sim sends -> client stamps p50/p99"
              "   send -> headers p50/p99 (the sim answers them on arrival)")  # fmt: skip
        for r in results:
            print(f"{r.sessions:>6} {r.processes:>4} {_pct(r.server_err, 50):>30.1f}/{_pct(r.server_err, 99):<12.1f}"
                  f"{_pct(r.client_late, 50):>30.1f}/{_pct(r.client_late, 99):<8.1f}"
                  f"{_pct(r.spread_headers, 50):>22.1f}/{_pct(r.spread_headers, 99):<8.1f}")  # fmt: skip
    for procs, ref in sorted(refs.items()):
        print(f"reference: {ref.sessions} sessions, processes {procs}: RSS {ref.rss_mb:.0f} MB")
    hit = [r for r in results if _pct(r.spread, 99) < TARGET_ERR_P99_MS and _kb(r, refs[r.processes]) < TARGET_KB]
    print(
        f"targets: TTFT error p99 < {TARGET_ERR_P99_MS:g} ms once spread, < {TARGET_KB:g} KB per session: "
        + (", ".join(f"N={r.sessions}/p{r.processes}" for r in hit) or "none")
        + " meet both"
    )


def _gc_table(results: list[RunResult], sim_gc: list[Pause]) -> None:
    """Collections per run and which of them the late spread turns overlapped."""
    print("\nGarbage collections in the steady window (benchmarks/_gc_probe): count, longest pause (wall ms / CPU ms)")
    print("   N  proc   llmload: all  gen2 n  gen2 max wall/CPU     simulator: all  gen2 n  gen2 max wall/CPU")
    for r in results:
        lo, hi = r.window
        cells = []
        for pauses in (r.client_gc, sim_gc):
            inside = [p for p in pauses if lo <= p.end <= hi]
            g2 = [p for p in inside if p.gen == 2]
            top = max(g2, key=lambda p: p.wall_s, default=Pause(2, 0.0, 0.0, 0.0))
            cells.append(f"{len(inside):>14} {len(g2):>7} {top.wall_s * 1000:>10.1f}/{top.cpu_s * 1000:<8.1f}")
        print(f"{r.sessions:>6} {r.processes:>4} {cells[0]}   {cells[1]}")
    print(f"\nSpread turns late by > {TARGET_ERR_P99_MS:g} ms: share whose TTFT overlaps a collection > 2 ms")
    print("   N  proc  late turns  llmload's  simulator's  neither")
    for r in results:
        late = r.spread > TARGET_ERR_P99_MS
        starts, ends = r.spread_start[late], r.spread_start[late] + (r.spread[late] + SIM_TTFT_MS) / 1000
        hit = [np.zeros(starts.size, dtype=bool), np.zeros(starts.size, dtype=bool)]
        for k, pauses in enumerate((r.client_gc, sim_gc)):
            for p in pauses:
                if p.wall_s > 0.002:
                    hit[k] |= (starts <= p.end) & (ends >= p.end - p.wall_s)
        n = max(int(late.sum()), 1)
        print(f"{r.sessions:>6} {r.processes:>4} {int(late.sum()):>11} {hit[0].sum() / n:>9.0%} {hit[1].sum() / n:>12.0%}"
              f" {(~(hit[0] | hit[1])).sum() / n:>8.0%}")  # fmt: skip


def _burst(r: RunResult, d: dict[str, Any]) -> None:
    ttft = np.asarray(d["ttft_ns"], dtype=np.float64) / 1e6
    late = np.asarray(d["first_late_ns"], dtype=np.float64) / 1e6
    server = ttft - late  # client send -> server sends the first chunk (request transit, accept, parse, 50 ms)
    print(f"\nburst: {r.sessions} sessions spawned at once (-r {r.sessions}), one process, load {r.load1:.2f}")
    print(f"  first turns sent over {r.first_starts_s * 1000:.0f} ms (Locust's spawn loop and the sends: "
          "first to last start stamp; not in TTFT, which runs from each send)")  # fmt: skip
    print(f"  first-turn TTFT: p50 {_pct(ttft, 50):.0f} ms, p99 {_pct(ttft, 99):.0f} ms (n={ttft.size}, "
          f"{d['counts']})")  # fmt: skip
    print(f"    send -> server's first chunk (50 ms of it the sim's TTFT): p50 {_pct(server, 50):.0f} ms, "
          f"p99 {_pct(server, 99):.0f} ms")  # fmt: skip
    print(f"      of which send -> response headers (the sim writes them as the request arrives; holds the client's "
          f"own sending): p50 {_pct(r.first_headers, 50):.0f} ms, p99 {_pct(r.first_headers, 99):.0f} ms")  # fmt: skip
    print(f"    server's first chunk -> client stamp (client side):       p50 {_pct(late, 50):.0f} ms, "
          f"p99 {_pct(late, 99):.0f} ms")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
