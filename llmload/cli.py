"""``llmload`` command line: ``run`` (Locust with llmload), ``sim`` (simulated server), ``demo``,
``gpu-sidecar`` (GPU metrics for Prometheus), ``report`` (a run's HTML/Markdown/JSON report),
``compare`` (two runs before/after), ``gate`` (PASS/FAIL/INCONCLUSIVE for CI), ``trace`` (request
traces for ``run --trace``).

``llmload run [locust flags] [llmload flags]`` is ``locust -f <packaged locustfile>``:
every Locust flag (``--headless -u -r -t --host``, ``--processes``, ``--master``,
``--worker``, the web UI, ``locust.conf``) works unchanged. With ``--ladder`` it uses the
locustfile with the concurrency-ladder shape; with the web UI (no ``--headless``) the one
whose shape runs what the start form says, its users or its ladder. Pass ``-f`` to use your
own locustfile instead.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["main"]

USAGE = """usage: llmload <command> [options]    (llmload --version: this version, Locust's and Python's)

commands:
  run     run a load test (Locust with llmload's users and flags); see `llmload run --help`
  sim     start the embedded simulated LLM server; see `llmload sim --help`
  demo    start the simulator, run a short headless load against it, print the summary
  gpu-sidecar
          serve this host's GPU metrics for Prometheus (NVML); see `llmload gpu-sidecar --help`
  report  write report.html, report.md and report.json for a run directory; see `llmload report --help`
  compare compare two runs before/after, per ladder step; see `llmload compare --help`
  gate    PASS / FAIL / INCONCLUSIVE: did a run regress against a baseline beyond the noise? (CI; docs/ci.md)
  trace   look at, generate or convert request traces for `llmload run --trace`; see `llmload trace --help`
  fit     fit the engine model to a measured run: engine.toml (docs/capacity.md)
  predict replay a workload on a fitted engine model, with what-ifs: a predicted summary (docs/capacity.md)
  plan    how many replicas a load needs under SLOs, searched with predict (docs/capacity.md)
"""

PACKAGED_LOCUSTFILE = Path(__file__).with_name("locustfile.py")
LADDER_LOCUSTFILE = Path(__file__).with_name("locustfile_ladder.py")
WEB_LOCUSTFILE = Path(__file__).with_name("locustfile_web.py")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command in ("--version", "version"):
        sys.stdout.write(f"llmload {_version()}\n")
        return 0
    if command == "run":
        return run(rest)
    if command == "sim":
        from llmload.sim.__main__ import main as sim_main

        return sim_main(rest)
    if command == "demo":
        return demo(rest)
    if command == "gpu-sidecar":
        from llmload.gpu.__main__ import main as gpu_main

        return gpu_main(rest)
    if command == "trace":
        from llmload.workload.trace_tool import main as trace_main

        return trace_main(rest)
    if command in ("fit", "predict"):
        from llmload.capacity.capacity_command import fit_main, predict_main

        return (fit_main if command == "fit" else predict_main)(rest)
    if command == "plan":
        from llmload.capacity.plan_command import plan_main

        return plan_main(rest)
    if command in ("report", "compare", "gate"):
        from llmload.gate.gate_command import gate_main
        from llmload.report import commands

        mains = {"report": commands.report_main, "compare": commands.compare_main, "gate": gate_main}
        try:
            return mains[command](rest)
        except BrokenPipeError:  # `llmload compare A B | head`: the reader left; no traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes stdout at exit
            return 1
    sys.stderr.write(f"llmload: error: unknown command {command!r}\n{USAGE}")
    return 2


def _version() -> str:
    """This package's version and Locust's (what a bug report needs)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("llmload")
    except PackageNotFoundError:  # run from a source tree that was not installed
        own = "unknown (not installed)"
    try:
        locust = version("locust")
    except PackageNotFoundError:
        locust = "not installed"
    return f"{own} (locust {locust}, python {sys.version.split()[0]})"


def run(args: list[str]) -> int:
    """Hand over to Locust's own main with the packaged locustfile (unless -f is given)."""
    if any(a in ("-h", "--help") for a in args):
        return _help()
    from llmload.config.flags import attach_negative_values

    args = attach_negative_values(args)  # --ttft-timeout -5s: llmload's error line, not argparse's
    from llmload.config.repeat import split_repeat
    from llmload.errors import ConfigError

    try:
        repeat = split_repeat(args)
    except ConfigError as e:
        sys.stderr.write(f"llmload: error: {e}\n")
        return 2
    if repeat is not None and repeat.runs > 1:  # N child runs of this command line, then their aggregate
        from llmload.runtime.repeat_runner import run_repeated

        return run_repeated(repeat)
    if repeat is not None:
        args = list(repeat.args)  # --repeat 1: one plain run
    custom = any(a in ("-f", "--locustfile") or a.startswith(("--locustfile=", "-f=")) for a in args)
    if not custom:
        ladder: bool | str | None  # a ladder flag, else the environment's setting
        ladder = any(a in ("--ladder", "--rate-ladder") or a.startswith(("--ladder=", "--rate-ladder=")) for a in args)
        ladder = ladder or os.environ.get("LLMLOAD_LADDER") or os.environ.get("LLMLOAD_RATE_LADDER")
        args = ["-f", str(LADDER_LOCUSTFILE if ladder else WEB_LOCUSTFILE if _web_ui(args) else PACKAGED_LOCUSTFILE),
                *args]  # fmt: skip
    from llmload.runtime.checks import check_before_fork, check_master_port

    try:
        check_master_port(args)
        if not custom:  # a locustfile of one's own may add flags and defaults: its processes check them
            check_before_fork(args)
    except ConfigError as e:
        sys.stderr.write(f"llmload: error: {e}\n")
        return 2
    sys.argv = ["llmload run", *args]
    from locust.main import main as locust_main

    try:
        locust_main()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


def _web_ui(args: list[str]) -> bool:
    """Whether Locust will serve its web UI: not ``--headless`` (nor ``$LOCUST_HEADLESS``), not a ``--worker``.

    A ``locust.conf`` that says ``headless`` is not read here: such a run gets the web
    locustfile, whose shape holds ``-u``/``-r``/``-t`` as the plain one would.
    """
    if any(a in ("--headless", "--worker") for a in args):
        return False
    return os.environ.get("LOCUST_HEADLESS", "").lower() not in ("1", "true", "yes")


def _help() -> int:
    """Locust's help with llmload's flags (Locust prints help before it imports a locustfile)."""
    from locust.argument_parser import get_parser

    from llmload.config import add_arguments

    parser = get_parser()
    parser.prog = "llmload run"
    add_arguments(parser)
    parser.print_help()
    from llmload.config.repeat import HELP

    sys.stdout.write(HELP)
    return 0


def demo(args: list[str]) -> int:
    """Simulator (engine model, preset healthy) + 60 s headless load with the default mix + summary."""
    from llmload.sim import PRESETS, SimConfig, start_sim_process

    p = argparse.ArgumentParser(prog="llmload demo", description=demo.__doc__)
    p.add_argument("--port", type=int, default=0, help="simulator port (default: a free port)")
    p.add_argument("--run-time", default="60s", help="load duration (default: %(default)s)")
    p.add_argument("--users", type=int, default=20, help="concurrent users (default: %(default)s)")
    p.add_argument("--profile", default="default", help="workload profile (default: %(default)s)")
    p.add_argument(
        "--preset", default="healthy", choices=tuple(PRESETS), help="simulator preset (default: %(default)s)"
    )
    p.add_argument("--summary-json", default="runs/demo-summary.json", help="where to write the summary JSON")
    ns = p.parse_args(args)
    problem = _demo_problem(ns)
    if problem:  # before the simulator starts: one line, not Locust's error about a flag the user never typed
        sys.stderr.write(f"llmload demo: error: {problem}\n")
        return 2
    config = SimConfig(port=ns.port, preset=ns.preset)
    sys.stdout.write(f"llmload demo: starting the embedded simulator, then {ns.users} users for {ns.run_time}\n")
    sys.stdout.flush()
    with start_sim_process(config) as sim:
        sys.stdout.write(f"llmload demo: simulator at {sim.url} (pid {sim.pid}; {config.describe()})\n")
        sys.stdout.write(f"llmload demo: its Prometheus metrics (vLLM names, simulated GPU) at {sim.url}/metrics\n")
        sys.stdout.flush()
        cmd = [
            sys.executable, "-m", "llmload", "run", "--headless", "--only-summary",
            "-u", str(ns.users), "-r", str(ns.users), "-t", ns.run_time, "--host", sim.url,
            "--profile", ns.profile, "--summary-json", ns.summary_json, "--stop-timeout", "0",
        ]  # fmt: skip
        code = subprocess.call(cmd)
    if code == 0 and ns.summary_json:
        sys.stdout.write(f"llmload demo: summary written to {ns.summary_json}\n")
    return code


def _demo_problem(ns: argparse.Namespace) -> str | None:
    """What is wrong with ``llmload demo``'s options (None: nothing); creates the summary's folder."""
    from locust.util.timespan import parse_timespan

    from llmload.errors import ProfileError
    from llmload.workload.profiles import load_profile

    try:
        if parse_timespan(ns.run_time) <= 0:
            raise ValueError
    except ValueError:
        return f"--run-time {ns.run_time!r}: must be a duration > 0 such as 30s, 5m or 1h30m"
    if ns.users < 1:
        return f"--users {ns.users}: must be >= 1 (concurrent users)"
    try:
        load_profile(ns.profile)
    except ProfileError as e:
        return f"--profile: {e}"
    if ns.summary_json and (parent := os.path.dirname(ns.summary_json)):
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            return f"--summary-json {ns.summary_json}: cannot create its folder ({e.strerror or e}); choose another path"
    return None


if __name__ == "__main__":
    sys.exit(main())
