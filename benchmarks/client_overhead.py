"""Client overhead: CPU per streamed token and timing error of one llmload (Locust) process.

What is measured
----------------
For each concurrency (``--users``, default 50 200 500), two runs of ``python -m llmload
run --headless -u N -r N -t <seconds>`` (one Locust process = one worker) against a fresh
``python -m llmload.sim`` child on the same host, at a realistic cadence: TTFT 50 ms, ITL
20 ms, 200 output tokens per request, 50-token prompts, one request class (a temporary
profile), closed loop, one token per SSE chunk.

1. **CPU run** -- the packaged locustfile with the plain ``openai-chat`` adapter (the
   product as shipped: parsing, histograms, Locust stats, summary, the Prometheus exporter
   listening on a free 127.0.0.1 port but not scraped). The child's CPU time
   (user + system) comes from ``os.wait4`` (its own rusage, exact, read when it exits).
   Tokens streamed = ``overall.output_tokens + overall.partial_output_tokens`` of its
   ``--summary-json`` (the requests cut by the end of the test count too).

   * ``gross µs/tok`` = all CPU of the process, start-up included / tokens.
   * ``net µs/tok`` = (CPU − start-up CPU) / tokens. Start-up CPU (imports, Locust and
     llmload init, summary, shutdown) is measured by ``--startup-runs`` runs with
     ``-u 0 -t 1s`` and is printed; it is the only thing subtracted. The target and the
     research reference (Locust-process CPU between test start and stop) compare to net.
   * ``cores`` = CPU / wall over the child's life; ``mid cores`` = the same over the middle
     of the test (from /proc/<pid>/stat, sampled every 0.5 s), for the client and for the
     simulator.

2. **Raw Locust baseline** (``--no-baseline`` to skip) -- the same CPU run with a plain
   Locust locustfile instead of llmload, as in shared/research/locust.md §3
   ("fast_readline": ``FastHttpUser``, geventhttpclient ``readline``, stdlib ``json`` per
   chunk, one ``perf_counter_ns`` stamp per content chunk, nothing else), same request
   body, same simulator settings, same start-up subtraction; its tokens are the content
   chunks it counted. The research figures came from another box and server; this one
   says what "close to raw Locust" means here and now.

3. **Timing run** -- the simulator with ``--stamp-chunks`` (each content chunk carries its
   send time, ``perf_counter_ns()`` on CLOCK_MONOTONIC) and
   ``benchmarks/_stamped_locustfile.py`` (llmload's user; an ``openai-chat`` subclass that
   also collects those stamps; a listener pairs them with ``record.chunk_ns``). Over
   successful requests, gaps after the ``--warmup`` seconds of ramp-up:

   * ``ITL error`` = client gap − server gap for each consecutive pair of content chunks;
     ``|err|`` percentiles, and the mean (signed: a bias would show there);
   * ``lateness`` = client stamp − server stamp of each content chunk (loopback + kernel +
     the time until the client's loop reads it);
   * ``TTFT late`` = lateness of the first content chunk: how much later than the server
     sent it the client stamped it (the receive side of TTFT error; the send side is not
     observable without a server receive stamp). ``TTFT`` = the client's TTFT, to read
     against the configured one (it also holds request send, connect and sim scheduling).

How to read it
--------------
The machine, the simulator and the client share the same cores (and other work may be
running): the conditions (cores, load average at the start of each run, versions) are
printed first. CPU µs per token is the figure that holds up under contention; the timing
tails grow with everything else the box is doing. Targets (DESIGN.md "Performance
anchors"): ≤ 22 µs CPU per token and |ITL error| p99 ≤ 2 ms at 200 streams in one worker
process; reference (shared/research/locust.md §3): raw Locust (FastHttpUser + readline,
timestamps only) 19–21 / 15–18 / 15–16 µs per token at 50 / 200 / 500 streams. A missed
target prints MISS; the exit status is 0 either way (a benchmark, not a test).

    .venv/bin/python benchmarks/client_overhead.py                       # 50 200 500, 30 s each
    .venv/bin/python benchmarks/client_overhead.py --users 200 --seconds 20
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import orjson

__all__ = [
    "Child",
    "conditions",
    "free_port",
    "llmload_argv",
    "llmload_env",
    "load1",
    "main",
    "proc_cpu_s",
    "proc_rss_kb",
    "summary_tokens",
    "write_profile",
]

ROOT = Path(__file__).resolve().parents[1]
STAMPED_LOCUSTFILE = Path(__file__).with_name("_stamped_locustfile.py")
TARGET_USERS = 200
TARGET_CPU_US = 22.0
TARGET_ITL_P99_MS = 2.0
RESEARCH_RAW_LOCUST_US = {50: "19–21", 200: "15–18", 500: "15–16"}
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1


# -- helpers shared with soak_rss.py ------------------------------------------------------


def proc_cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (/proc/<pid>/stat; resolution 1/CLK_TCK)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def proc_rss_kb(pid: int) -> int:
    """Resident set size of ``pid`` in KiB (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _versions() -> str:
    names = ("llmload", "locust", "gevent", "geventhttpclient", "numpy", "orjson")
    out = [f"python {platform.python_version()}"]
    for name in names:
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            out.append(f"{name} ?")
    return ", ".join(out)


def _git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "?"
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "?"


def load1() -> float:
    return os.getloadavg()[0]


def conditions() -> list[str]:
    """Lines describing the machine and software the figures come from."""
    la = os.getloadavg()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"date      {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
        f"machine   {cores} usable cores ({os.cpu_count()} online), {_cpu_model()}, "
        f"{platform.system()} {platform.release()}",
        f"load avg  {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1/5/15 min) at start",
        f"versions  {_versions()}",
        f"code      git {_git_commit()}",
    ]


def write_profile(directory: Path, input_tokens: int, output_tokens: int) -> Path:
    """A one-class workload profile (TOML) in ``directory``; returns its path."""
    path = directory / "bench_profile.toml"
    path.write_text(
        'name = "bench"\n'
        'description = "benchmark: one request class, fixed token counts"\n'
        "[[classes]]\n"
        'name = "bench"\n'
        "weight = 1\n"
        f"input_tokens = {input_tokens}\n"
        f"output_tokens = {output_tokens}\n"
    )
    return path


def summary_tokens(summary: dict[str, Any]) -> int:
    """Tokens streamed in a run: successful requests' output plus what cut/failed ones received."""
    overall = summary["overall"]
    return int(overall["output_tokens"]) + int(overall["partial_output_tokens"])


def _die_with_parent() -> Any:
    """``preexec_fn``: SIGTERM the child when this process dies (Linux), so nothing is left behind."""
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sig = int(signal.SIGTERM)
    return lambda: prctl(_PR_SET_PDEATHSIG, sig)


class Child:
    """A child process this script started: reaped with ``os.wait4`` (its exact rusage), stopped by PID.

    It runs in its own session, so a Ctrl-C reaches only this script, which then stops it.
    """

    def __init__(self, argv: list[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full_env.get("PYTHONPATH")) if p)
        full_env.update(env or {})
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115  (closed in _reaped)
        self.t_launch = time.perf_counter()
        self.popen = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=full_env,
            preexec_fn=_die_with_parent(),
            start_new_session=True,
        )
        self.rusage: Any = None
        self.t_exit = 0.0

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> bool:
        """True once the child has exited (and been reaped)."""
        if self.rusage is not None:
            return True
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._reaped(status, ru)
        return True

    def _reaped(self, status: int, ru: Any) -> None:
        self.t_exit = time.perf_counter()
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        self.rusage = ru
        self._log.close()

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds of the exited child (from wait4)."""
        return self.rusage.ru_utime + self.rusage.ru_stime

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; reaps it. No-op once exited."""
        if self.poll():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if self.poll():
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        _, status, ru = os.wait4(self.pid, 0)
        self._reaped(status, ru)

    def tail(self, n: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return ""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (for the exporter: concurrent runs must not collide on 9646)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llmload_argv(users: int, seconds: float, host: str, profile: Path, summary: Path, extra: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "llmload", "run", *extra,
        "--headless", "-u", str(users), "-r", str(max(users, 1)), "-t", f"{seconds:g}s",
        "--host", host, "--profile", str(profile), "--summary-json", str(summary),
        "--model", "llmload-sim", "--seed", "1", "--only-summary", "--stop-timeout", "0", "--loglevel", "WARNING",
    ]  # fmt: skip


def llmload_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for an llmload child: the Prometheus exporter (on by default; not scraped here) on a free
    127.0.0.1 port, so that concurrent runs on the host do not collide on 9646. Set with ``LLMLOAD_*``
    variables, which a build without the exporter ignores."""
    return {"LLMLOAD_EXPORTER_HOST": "127.0.0.1", "LLMLOAD_EXPORTER_PORT": str(free_port()), **(extra or {})}


# -- the benchmark --------------------------------------------------------------------------


@dataclass
class CpuResult:
    users: int
    load1: float
    cpu_s: float
    wall_s: float
    tokens: int
    duration_s: float
    requests: int
    errors: int
    sim_cpu_s: float
    mid_cores: float
    sim_mid_cores: float
    maxrss_mb: float


@dataclass
class TimingResult:
    users: int
    load1: float
    counts: dict[str, int]
    gaps: int
    abs_err_ms: list[float]
    mean_err_ms: float
    late_ms: list[float]
    ttft_late_ms: list[float]
    ttft_ms: list[float]
    errors: int


def _run_locust(
    argv: list[str], log: Path, sim: Any, window: tuple[float, float], env: dict[str, str] | None = None
) -> tuple[Child, float, float, float]:
    """Run one Locust (llmload) child to its end; returns (child, sim CPU over its life, mid cores, sim mid cores)."""
    sim_cpu0 = proc_cpu_s(sim.pid)
    child = Child(argv, log, llmload_env(env))
    samples: list[tuple[float, float, float]] = []
    try:
        limit = window[1] + 120
        while not child.poll():
            now = time.perf_counter() - child.t_launch
            with contextlib.suppress(OSError):
                samples.append((now, proc_cpu_s(child.pid), proc_cpu_s(sim.pid)))
            if now > limit:
                raise RuntimeError(f"{argv[2:4]} (pid {child.pid}) did not finish within {limit:.0f} s")
            time.sleep(0.5)
    finally:
        child.stop()
    sim_cpu = proc_cpu_s(sim.pid) - sim_cpu0
    mid = [s for s in samples if window[0] <= s[0] <= window[1]]
    if len(mid) >= 2:
        dt = mid[-1][0] - mid[0][0]
        mid_cores, sim_mid = (mid[-1][1] - mid[0][1]) / dt, (mid[-1][2] - mid[0][2]) / dt
    else:
        mid_cores = sim_mid = float("nan")
    if child.returncode != 0:
        raise RuntimeError(f"{argv[2:4]} exited with {child.returncode}; last lines of {log}:\n{child.tail()}")
    return child, sim_cpu, mid_cores, sim_mid


def _sim_args(ns: argparse.Namespace, stamp: bool) -> list[str]:
    args = ["--port", "0", "--ttft-ms", f"{ns.ttft_ms:g}", "--itl-ms", f"{ns.itl_ms:g}"]
    return [*args, "--stamp-chunks"] if stamp else args


def measure_startup(ns: argparse.Namespace, tmp: Path, profile: Path, raw: bool = False) -> list[float]:
    """CPU seconds of ``-u 0 -t 1s`` runs: imports, init, summary, shutdown (llmload, or the raw baseline)."""
    from llmload.sim import start_sim_process

    out = []
    with start_sim_process(_sim_args(ns, False)) as sim:
        for i in range(ns.startup_runs):
            tag = f"{'raw' if raw else ''}startup{i}"
            if raw:
                argv, env = raw_locust_argv(ns, tmp, 0, 1, sim.url, tmp / f"{tag}.tokens")
            else:
                argv, env = llmload_argv(0, 1, sim.url, profile, tmp / f"{tag}.json", []), None
            child, _, _, _ = _run_locust(argv, tmp / f"{tag}.log", sim, (0.0, 0.0), env)
            out.append(child.cpu_s)
    return out


#: The raw-Locust baseline: research §3 "fast_readline", written to the temporary directory.
RAW_LOCUSTFILE = '''"""Raw Locust baseline for benchmarks/client_overhead.py: FastHttpUser + readline + json, stamps only."""
import json
import os
import time
from array import array

from locust import FastHttpUser, constant, events, task

BODY = json.loads(os.environ["LLMLOAD_BENCH_RAW_BODY"])
stamps = array("q")


class RawStreamUser(FastHttpUser):
    wait_time = constant(0)

    @task
    def stream(self):
        with self.client.post("/v1/chat/completions", json=BODY, stream=True, name="stream", catch_response=True) as r:
            readline = r._response.readline
            for line in iter(lambda: readline(b"\\n"), b""):
                now = time.perf_counter_ns()
                if line.startswith(b"data: "):
                    data = line[6:].rstrip()
                    if data != b"[DONE]":
                        choices = json.loads(data).get("choices")
                        if choices and choices[0].get("delta", {}).get("content"):
                            stamps.append(now)


@events.quitting.add_listener
def _write_count(**_):
    with open(os.environ["LLMLOAD_BENCH_RAW_TOKENS"], "w") as f:
        f.write(str(len(stamps)))
'''


def raw_locust_argv(
    ns: argparse.Namespace, tmp: Path, users: int, seconds: float, host: str, tokens_path: Path
) -> tuple[list[str], dict[str, str]]:
    """Command and environment of a raw-Locust baseline run (same body as llmload sends)."""
    locustfile = tmp / "raw_locust_baseline.py"
    if not locustfile.exists():
        locustfile.write_text(RAW_LOCUSTFILE)
    prompt = " ".join(["word"] * ns.input_tokens)
    body = {
        "model": "llmload-sim",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": ns.output_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    argv = [
        sys.executable, "-m", "locust", "-f", str(locustfile),
        "--headless", "-u", str(users), "-r", str(max(users, 1)), "-t", f"{seconds:g}s", "--host", host,
        "--only-summary", "--stop-timeout", "0", "--loglevel", "WARNING",
    ]  # fmt: skip
    env = {"LLMLOAD_BENCH_RAW_BODY": orjson.dumps(body).decode(), "LLMLOAD_BENCH_RAW_TOKENS": str(tokens_path)}
    return argv, env


@dataclass
class BaselineResult:
    users: int
    load1: float
    cpu_s: float
    tokens: int


def baseline_run(ns: argparse.Namespace, users: int, tmp: Path) -> BaselineResult:
    from llmload.sim import start_sim_process

    tokens_path = tmp / f"raw{users}.tokens"
    with start_sim_process(_sim_args(ns, False)) as sim:
        la = load1()
        argv, env = raw_locust_argv(ns, tmp, users, ns.seconds, sim.url, tokens_path)
        child, _, _, _ = _run_locust(argv, tmp / f"raw{users}.log", sim, (0.0, ns.seconds), env)
    return BaselineResult(users=users, load1=la, cpu_s=child.cpu_s, tokens=int(tokens_path.read_text()))


def cpu_run(ns: argparse.Namespace, users: int, tmp: Path, profile: Path) -> CpuResult:
    from llmload.sim import start_sim_process

    summary_path = tmp / f"cpu{users}.json"
    with start_sim_process(_sim_args(ns, False)) as sim:
        la = load1()
        argv = llmload_argv(users, ns.seconds, sim.url, profile, summary_path, [])
        window = (0.3 * ns.seconds + 2, ns.seconds - 1)
        child, sim_cpu, mid, sim_mid = _run_locust(argv, tmp / f"cpu{users}.log", sim, window)
    summary = orjson.loads(summary_path.read_bytes())
    return CpuResult(
        users=users,
        load1=la,
        cpu_s=child.cpu_s,
        wall_s=child.t_exit - child.t_launch,
        tokens=summary_tokens(summary),
        duration_s=summary["duration_s"],
        requests=summary["overall"]["requests"],
        errors=summary["overall"]["errors"],
        sim_cpu_s=sim_cpu,
        mid_cores=mid,
        sim_mid_cores=sim_mid,
        maxrss_mb=child.rusage.ru_maxrss / 1024,
    )


def _pct(values: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    return [float(v) for v in np.percentile(values, qs)] if len(values) else [float("nan")] * len(qs)


def timing_run(ns: argparse.Namespace, users: int, tmp: Path, profile: Path) -> TimingResult:
    from llmload.sim import start_sim_process

    stamps_path, summary_path = tmp / f"stamps{users}.json", tmp / f"timing{users}.json"
    with start_sim_process(_sim_args(ns, True)) as sim:
        la = load1()
        argv = llmload_argv(users, ns.seconds, sim.url, profile, summary_path, ["-f", str(STAMPED_LOCUSTFILE)])
        _run_locust(argv, tmp / f"timing{users}.log", sim, (0.0, 0.0), env={"LLMLOAD_BENCH_STAMPS": str(stamps_path)})
    summary = orjson.loads(summary_path.read_bytes())
    d = orjson.loads(stamps_path.read_bytes())
    warm_ms = ns.warmup * 1000
    keep = np.asarray(d["gap_at_ms"]) >= warm_ms
    err = np.asarray(d["gap_err_ns"], dtype=np.float64)[keep] / 1e6
    late = np.asarray(d["late_ns"], dtype=np.float64) / 1e6
    first = np.asarray(d["first_at_ms"]) >= warm_ms
    ttft_late = np.asarray(d["first_late_ns"], dtype=np.float64)[first] / 1e6
    ttft = np.asarray(d["ttft_ns"], dtype=np.float64)[first] / 1e6
    return TimingResult(
        users=users,
        load1=la,
        counts=d["counts"],
        gaps=int(len(err)),
        abs_err_ms=_pct(np.abs(err), (50, 90, 99, 99.9)),
        mean_err_ms=float(err.mean()) if len(err) else float("nan"),
        late_ms=_pct(late, (50, 99)),
        ttft_late_ms=_pct(ttft_late, (50, 99)),
        ttft_ms=_pct(ttft, (50, 99)),
        errors=summary["overall"]["errors"],
    )


# -- output ---------------------------------------------------------------------------------


def _net_us(cpu_s: float, startup_s: float, tokens: int) -> float:
    return (cpu_s - startup_s) / tokens * 1e6 if tokens else float("nan")


def _print_cpu(results: list[CpuResult], startup_s: float, ns: argparse.Namespace) -> None:
    print(f"\nCPU per streamed token (plain openai-chat adapter, packaged locustfile; start-up CPU {startup_s:.3f} s "
          f"subtracted for 'net', nothing else)")  # fmt: skip
    head = (f"{'streams':>7} {'load1':>5} {'tokens':>8} {'tok/s':>7} {'req':>6} {'err':>4} {'CPU s':>6} "
            f"{'gross µs/tok':>12} {'net µs/tok':>10} {'cores':>5} {'mid cores':>9} {'sim cores':>9} "
            f"{'sim mid':>7} {'maxRSS MB':>9} {'research raw Locust':>19}")  # fmt: skip
    print(head)
    for r in results:
        gross = r.cpu_s / r.tokens * 1e6 if r.tokens else float("nan")
        tok_s = r.tokens / r.duration_s if r.duration_s else float("nan")
        ref = f"{RESEARCH_RAW_LOCUST_US[r.users]} µs" if r.users in RESEARCH_RAW_LOCUST_US else "-"
        print(f"{r.users:>7} {r.load1:>5.2f} {r.tokens:>8} {tok_s:>7.0f} {r.requests:>6} {r.errors:>4} {r.cpu_s:>6.2f} "
              f"{gross:>12.1f} {_net_us(r.cpu_s, startup_s, r.tokens):>10.1f} {r.cpu_s / r.wall_s:>5.2f} "
              f"{r.mid_cores:>9.3f} {r.sim_cpu_s / r.wall_s:>9.3f} {r.sim_mid_cores:>7.3f} {r.maxrss_mb:>9.1f} "
              f"{ref:>19}")  # fmt: skip
    print(f"  tokens = output_tokens + partial_output_tokens of the run's summary; cores = CPU / wall over the "
          f"process's life; mid = over {0.3 * ns.seconds + 2:g}–{ns.seconds - 1:g} s after launch "
          f"(/proc, 10 ms ticks); sim = the simulator over the same time")  # fmt: skip


def _print_baseline(base: list[BaselineResult], raw_startup_s: float, cpu: list[CpuResult], startup_s: float) -> None:
    print(f"\nRaw Locust baseline on this box (research §3 fast_readline locustfile; start-up CPU {raw_startup_s:.3f} s "
          f"subtracted for 'net')")  # fmt: skip
    print(f"{'streams':>7} {'load1':>5} {'tokens':>8} {'CPU s':>6} {'gross µs/tok':>12} {'net µs/tok':>10} "
          f"{'llmload net µs/tok':>18} {'llmload ÷ raw':>13}")  # fmt: skip
    for b in base:
        raw = _net_us(b.cpu_s, raw_startup_s, b.tokens)
        c = next((r for r in cpu if r.users == b.users), None)
        ours = _net_us(c.cpu_s, startup_s, c.tokens) if c else float("nan")
        print(f"{b.users:>7} {b.load1:>5.2f} {b.tokens:>8} {b.cpu_s:>6.2f} {b.cpu_s / b.tokens * 1e6:>12.1f} "
              f"{raw:>10.1f} {ours:>18.1f} {ours / raw:>12.2f}x")  # fmt: skip


def _print_timing(results: list[TimingResult], ns: argparse.Namespace) -> None:
    print(f"\nTiming error (sim --stamp-chunks + benchmarks/_stamped_locustfile.py; successful requests, "
          f"gaps after the first {ns.warmup:g} s; ms)")  # fmt: skip
    print(f"{'streams':>7} {'load1':>5} {'gaps':>8} {'|ITL err| p50':>13} {'p90':>6} {'p99':>6} {'p99.9':>6} "
          f"{'mean err':>8} {'late p50':>8} {'late p99':>8} {'TTFT late p50':>13} {'p99':>6} "
          f"{'TTFT p50':>8} {'TTFT p99':>8} {'err':>4} {'unpaired':>8}")  # fmt: skip
    for r in results:
        unpaired = r.counts.get("unstamped", 0) + r.counts.get("mismatched", 0)
        a, late, tl, tt = r.abs_err_ms, r.late_ms, r.ttft_late_ms, r.ttft_ms
        print(f"{r.users:>7} {r.load1:>5.2f} {r.gaps:>8} {a[0]:>13.3f} {a[1]:>6.3f} {a[2]:>6.3f} {a[3]:>6.2f} "
              f"{r.mean_err_ms:>+8.4f} {late[0]:>8.3f} {late[1]:>8.3f} {tl[0]:>13.3f} {tl[1]:>6.3f} "
              f"{tt[0]:>8.2f} {tt[1]:>8.2f} {r.errors:>4} {unpaired:>8}")  # fmt: skip
    print(
        f"  ITL err = client gap − server gap per consecutive content-chunk pair; late = client − server stamp; "
        f"TTFT late = lateness of the first content chunk; TTFT = client TTFT (configured {ns.ttft_ms:g} ms)"
    )


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def _print_targets(
    cpu: list[CpuResult], timing: list[TimingResult], startup_s: float, base: list[BaselineResult], raw_startup_s: float
) -> None:
    c = next((r for r in cpu if r.users == TARGET_USERS), None)
    t = next((r for r in timing if r.users == TARGET_USERS), None)
    net = (c.cpu_s - startup_s) / c.tokens * 1e6 if c and c.tokens else None
    p99 = t.abs_err_ms[2] if t and t.gaps else None
    print(f"\nTargets (DESIGN.md, one worker process, {TARGET_USERS} streams):")
    print(f"  CPU per token, net of start-up  {'-' if net is None else f'{net:.1f} µs':>9}   "
          f"target ≤ {TARGET_CPU_US:g} µs   {_verdict(None if net is None else net <= TARGET_CPU_US)}")  # fmt: skip
    print(f"  |ITL error| p99                 {'-' if p99 is None else f'{p99:.3f} ms':>9}   "
          f"target ≤ {TARGET_ITL_P99_MS:g} ms    {_verdict(None if p99 is None else p99 <= TARGET_ITL_P99_MS)}")  # fmt: skip
    print(
        "  reference (shared/research/locust.md §3, 2-core box): raw Locust, FastHttpUser + readline, timestamps "
        "only: 19–21 / 15–18 / 15–16 µs per token at 50 / 200 / 500 streams (15–21 µs)"
    )
    b = next((r for r in base if r.users == TARGET_USERS), None)
    if b is not None and net is not None:
        raw = _net_us(b.cpu_s, raw_startup_s, b.tokens)
        print(f"  raw Locust measured here, same conditions: {raw:.1f} µs per token; llmload ÷ raw = {net / raw:.2f}x")


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--users", type=int, nargs="+", default=[50, 200, 500], help="concurrent streams (default 50 200 500)"
    )
    p.add_argument("--seconds", type=float, default=30.0, help="test time of each llmload run (default 30)")
    p.add_argument("--ttft-ms", type=float, default=50.0)
    p.add_argument("--itl-ms", type=float, default=20.0)
    p.add_argument("--output-tokens", type=int, default=200)
    p.add_argument("--input-tokens", type=int, default=50)
    p.add_argument("--warmup", type=float, default=2.0, help="timing runs: ignore gaps in the first N s (ramp-up)")
    p.add_argument("--startup-runs", type=int, default=2, help="runs with -u 0 -t 1s measuring start-up CPU")
    p.add_argument("--skip-timing", action="store_true", help="CPU runs only")
    p.add_argument("--skip-cpu", action="store_true", help="timing runs only")
    p.add_argument("--no-baseline", action="store_true", help="skip the raw-Locust baseline runs")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    ns = p.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # clean-up runs in finally blocks, by PID
        signal.signal(sig, _interrupt)

    print("llmload client overhead benchmark")
    for line in conditions():
        print("  " + line)
    print(f"  workload  one class, {ns.input_tokens} in / {ns.output_tokens} out, sim TTFT {ns.ttft_ms:g} ms, "
          f"ITL {ns.itl_ms:g} ms, closed loop, -r = -u, {ns.seconds:g} s per run, one Locust process, "
          f"exporter on (free port, not scraped)")  # fmt: skip
    sys.stdout.flush()
    cpu: list[CpuResult] = []
    timing: list[TimingResult] = []
    base: list[BaselineResult] = []
    with tempfile.TemporaryDirectory(prefix="llmload-bench-") as d:
        tmp = Path(d)
        profile = write_profile(tmp, ns.input_tokens, ns.output_tokens)
        startup = [] if ns.skip_cpu else measure_startup(ns, tmp, profile)
        startup_s = float(np.mean(startup)) if startup else 0.0
        if startup:
            print(f"  start-up  CPU of `llmload run -u 0 -t 1s`: {', '.join(f'{s:.3f}' for s in startup)} s "
                  f"(mean {startup_s:.3f} s)")  # fmt: skip
        baseline = not (ns.skip_cpu or ns.no_baseline)
        raw_startup = measure_startup(ns, tmp, profile, raw=True) if baseline else []
        raw_startup_s = float(np.mean(raw_startup)) if raw_startup else 0.0
        if raw_startup:
            print(f"  start-up  CPU of raw `locust -u 0 -t 1s`: {', '.join(f'{s:.3f}' for s in raw_startup)} s "
                  f"(mean {raw_startup_s:.3f} s)")  # fmt: skip
        for users in ns.users:
            if baseline:
                base.append(baseline_run(ns, users, tmp))
                print(f"  .. raw Locust run {users} streams done (load1 {load1():.2f})", flush=True)
            if not ns.skip_cpu:
                cpu.append(cpu_run(ns, users, tmp, profile))
                print(f"  .. cpu run {users} streams done (load1 {load1():.2f})", flush=True)
            if not ns.skip_timing:
                timing.append(timing_run(ns, users, tmp, profile))
                print(f"  .. timing run {users} streams done (load1 {load1():.2f})", flush=True)
    if cpu:
        _print_cpu(cpu, startup_s, ns)
    if base:
        _print_baseline(base, raw_startup_s, cpu, startup_s)
    if timing:
        _print_timing(timing, ns)
    _print_targets(cpu, timing, startup_s, base, raw_startup_s)
    if ns.json:
        ns.json.write_bytes(
            orjson.dumps(
                {"conditions": conditions(), "startup_cpu_s": startup, "cpu": [vars(r) for r in cpu],
                 "raw_startup_cpu_s": raw_startup, "raw_locust": [vars(r) for r in base],
                 "timing": [vars(r) for r in timing]},
                option=orjson.OPT_INDENT_2,
            )
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
