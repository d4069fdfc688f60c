"""Running llmload for real in tests.

* :func:`run_cli` runs ``python -m llmload run ...`` as a child process (the real CLI,
  a real LocalRunner/MasterRunner) and returns its exit code, output and summary JSON.
* :func:`run_inprocess` runs a real Locust ``LocalRunner`` inside the test process, for
  the many short runs of the error-kind tests.
* :func:`write_tiny_profile` writes the one-class profile those short runs use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gevent

ROOT = Path(__file__).resolve().parents[2]


def write_tiny_profile(folder: Path, output_tokens: int = 16) -> str:
    """A profile of one class ``tiny`` (8 prompt tokens, ``output_tokens`` out) in ``folder``; its path."""
    path = folder / f"tiny-{output_tokens}.toml"
    path.write_text(
        f'name = "tiny"\n[[classes]]\nname = "tiny"\nweight = 1\ninput_tokens = 8\noutput_tokens = {output_tokens}\n'
    )
    return str(path)


def run_cli(args: list[str], tmp_path: Path, timeout: float = 120.0) -> tuple[int, str, dict | None]:
    """``python -m llmload run ARGS --summary-json tmp/summary.json``; returns (code, output, summary)."""
    summary_path = tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "llmload", "run", *args, "--summary-json", str(summary_path)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    output = p.stdout + p.stderr
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
    return p.returncode, output, summary


def run_inprocess(
    host: str, args: list[str], users: int = 2, seconds: float = 2.0, wait_s: float = 0.0, on_record=None
) -> dict:
    """A real LocalRunner in this process: parse flags, install llmload, run, stop, summarise.

    ``wait_s``: each user's think time between requests (the user's ``wait_time``);
    ``on_record``: called with every finished :class:`~llmload.metrics.record.RequestRecord`.
    """
    from locust import constant
    from locust import events as global_events
    from locust.argument_parser import get_parser
    from locust.env import Environment

    from llmload.config import add_arguments
    from llmload.plugin import install
    from llmload.users import LLMUser

    class U(LLMUser):
        wait_time = constant(wait_s)

    parser = get_parser()
    if not any(a.dest == "api" for a in parser._actions):
        add_arguments(parser)
    opts = parser.parse_args(["--host", host, "--headless", *args])
    env = Environment(user_classes=[U], host=host, parsed_options=opts, events=type(global_events)())
    env.create_local_runner()
    runtime = install(env)
    if on_record is not None:
        env.events.llmload_request.add_listener(lambda record, **_: on_record(record))
    env.runner.start(users, spawn_rate=users)
    gevent.sleep(seconds)
    env.runner.quit()
    return runtime.coordinator.last_summary
