"""Ctrl-C during the wait for requests in flight (a ladder's stop): the users stop, the summary is written.

Fails without llmload/runtime/drain.py: the second Ctrl-C raised KeyboardInterrupt out of Locust's
wait for the users (a traceback, no summary: everything measured was lost).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.harness import ROOT, write_tiny_profile

pytestmark = pytest.mark.integration


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
