"""Ctrl-C during a ladder (llmload/runtime/drain.py): its requests in flight finish and count, or a second
Ctrl-C stops them; the summary is written either way, in one process and with --processes.

Fail without drain.py: the second Ctrl-C raised KeyboardInterrupt out of Locust's wait for the users (a
traceback, no summary: everything measured was lost); with --processes the master quit at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.integration.harness import ROOT, write_tiny_profile

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_after(pgid: int, timeout: float) -> list[str]:
    """The processes still in group ``pgid`` once it is empty or ``timeout`` s have passed (a worker's exit
    can lag its master's by its interpreter's teardown on a loaded machine)."""
    end = time.monotonic() + timeout
    while True:
        left = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout.split()
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.1)


def wait_for(path, text: str, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not in the output after {timeout} s:\n{path.read_text()[-3000:]}")


def test_a_ctrl_c_during_a_ladders_stop_cuts_the_wait_and_keeps_the_summary(sim, tmp_path):
    url = sim(ttft_ms=20, itl_ms=100)  # 60 tokens: 6 s a request, still running at both Ctrl-Cs
    summary_path, out = tmp_path / "summary.json", tmp_path / "out.txt"
    cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", url, "--ladder", "2", "--step-time", "20s",
           "--step-warmup", "0s", "--profile", write_tiny_profile(tmp_path, 60), "--no-run-dir",
           "--summary-json", str(summary_path), "--only-summary"]  # fmt: skip
    with out.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_for(out, "All users spawned", 20)
        time.sleep(0.5)  # both users' first requests are out
        p.send_signal(signal.SIGINT)  # the first Ctrl-C stops the ladder, which waits for its requests
        wait_for(out, "for 2 requests in flight to finish", 10)
        p.send_signal(signal.SIGINT)  # the second stops them now
        code = p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.read_text()
    assert code == 0 and "Traceback" not in text, text[-3000:]
    s = json.loads(summary_path.read_text())
    o = s["overall"]
    assert (o["requests"], o["ok"], o["interrupted"]) == (2, 0, 2), o  # cut, not waited for (6 s each)


def test_a_ctrl_c_on_a_processes_ladder_waits_for_the_workers_requests_and_counts_them(sim, tmp_path):
    """Ctrl-C in a terminal reaches the master and every forked worker. Locust's master quit at once (the summary
    held none of the requests then in flight) and the workers finished those requests unreported, orphans of a
    command that had returned; now the test stops as its end does and the quit follows."""
    url = sim(ttft_ms=20, itl_ms=25)  # 60 tokens: 1.5 s a request
    summary_path, out = tmp_path / "summary.json", tmp_path / "out.txt"
    cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", url, "--ladder", "2", "--step-time", "20s",
           "--step-warmup", "0s", "--profile", write_tiny_profile(tmp_path, 60), "--no-run-dir", "--processes", "2",
           "--master-bind-port", str(free_port()), "--summary-json", str(summary_path), "--only-summary"]  # fmt: skip
    with out.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    try:
        wait_for(out, "All users spawned", 20)
        time.sleep(0.5)  # both users' first requests are out
        os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the master and both workers
        code = p.wait(30)
        left = group_after(p.pid, 5.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    text = out.read_text()
    assert code == 0 and "Traceback" not in text, text[-3000:]
    assert left == [], left  # no worker lives on (the summary assertion below is what fails without the fix)
    o = json.loads(summary_path.read_text())["overall"]
    assert o["requests"] == o["ok"] >= 2 and o["interrupted"] == 0, o  # the two in flight finished and count
