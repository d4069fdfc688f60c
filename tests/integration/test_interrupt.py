"""Ctrl-C or SIGTERM during a run (llmload/runtime/drain.py): its requests in flight finish within the stop
timeout and count, or a second signal stops them (counted as interrupted); the summary is written either way
and holds what the --records-jsonl file holds, in one process and with --processes.

Fail without drain.py: the second Ctrl-C raised KeyboardInterrupt out of Locust's wait for the users (a
traceback, no summary: everything measured was lost); with --processes the master quit at once. One process
without a ladder quit at once (Locust's Ctrl-C and SIGTERM): the requests in flight were in no count, and what
had finished in the last second was in the file only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import pytest

from tests.helpers.harness import ROOT, write_tiny_profile
from tests.helpers.ports import free_port

pytestmark = pytest.mark.integration



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
           "--summary-json", str(summary_path), "--only-summary", "--no-exporter"]  # fmt: skip
    with out.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_for(out, "All users spawned", 20)
        wait_until(lambda: sim_counter(url, "num_requests_running") == 2, "both users' first requests running")
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
           "--master-bind-port", str(free_port()), "--summary-json", str(summary_path), "--only-summary", "--no-exporter"]  # fmt: skip
    with out.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    try:
        wait_for(out, "All users spawned", 20)
        wait_until(lambda: sim_counter(url, "num_requests_running") == 2, "both users' first requests running")
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


SLOW = {"mode": "fixed", "ttft_ms": 100, "itl_ms": 100}  # with 30 output tokens: 3 s a request


def sim_counter(url: str, name: str) -> float:
    """The simulator's own count (its /metrics, vLLM's names): ``num_requests_running``, ``request_success_total``."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(f"vllm:{name}"))


def wait_until(check, what: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


class OneProcess:
    """``llmload run --headless`` in one process (no ladder, no --processes): 3 users of 3-s requests."""

    def __init__(self, url: str, tmp_path, *extra: str) -> None:
        self.url, self.summary_path, self.records = url, tmp_path / "summary.json", tmp_path / "records.jsonl"
        self.out = tmp_path / "out.txt"
        cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", url, "-u", "3", "-r", "3", "-t", "60s",
               "--profile", write_tiny_profile(tmp_path, 30), "--no-run-dir", "--no-exporter", "--only-summary",
               "--summary-json", str(self.summary_path), "--records-jsonl", str(self.records), *extra]  # fmt: skip
        with self.out.open("w") as f:
            self.p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)

    def wait_in_flight(self, done: int = 0) -> None:
        """Until the server has answered ``done`` requests and has 3 running (the users' next ones)."""
        wait_until(lambda: sim_counter(self.url, "request_success_total") >= done
                   and sim_counter(self.url, "num_requests_running") == 3,
                   f"{done} answered and 3 running; output:\n{self.out.read_text()[-2000:]}")  # fmt: skip

    def end(self) -> tuple[dict, Counter]:
        """The exit (0, no traceback), the summary's overall row and the records file's outcomes."""
        try:
            code = self.p.wait(30)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        text = self.out.read_text()
        assert code == 0 and "Traceback" not in text, text[-3000:]
        o = json.loads(self.summary_path.read_text())["overall"]
        outcomes = Counter(json.loads(line)["outcome"] for line in self.records.read_text().splitlines())
        assert o["requests"] == sum(outcomes.values()) and o["ok"] == outcomes["ok"], (o, outcomes)
        assert o["interrupted"] == outcomes["interrupted"] and o["errors"] == 0, (o, outcomes)  # the file = the summary
        return o, outcomes


def test_a_ctrl_c_on_one_process_counts_its_requests_in_flight_as_interrupted(sim, tmp_path):
    """Without a stop timeout the requests in flight are cut, as at the run's end: the summary and the records file
    both hold them as interrupted (Locust's quit wrote a summary of 0 requests and a records file of none)."""
    url = sim(**SLOW)
    run = OneProcess(url, tmp_path)
    run.wait_in_flight()
    run.p.send_signal(signal.SIGINT)
    o, outcomes = run.end()
    assert outcomes == {"interrupted": 3}, (o, outcomes)
    assert "Ctrl-C: stopping the test; requests in flight stop now" in run.out.read_text()


def test_a_sigterm_on_one_process_lets_the_requests_in_flight_finish_within_the_stop_timeout(sim, tmp_path):
    """SIGTERM (systemd, docker stop, kill) with -s: the second round's 3 requests finish and count (Locust's
    shutdown summarised the first round only and closed the records file before the 3 finished)."""
    url = sim(**SLOW)
    run = OneProcess(url, tmp_path, "-s", "10")
    run.wait_in_flight(done=3)
    run.p.send_signal(signal.SIGTERM)
    o, outcomes = run.end()
    assert outcomes == {"ok": 6} and sim_counter(url, "request_success_total") == 6, (o, outcomes)
    assert "SIGTERM: stopping the test; requests in flight finish within the stop timeout (10 s)" in run.out.read_text()


def test_a_second_ctrl_c_during_one_process_s_wait_counts_its_requests_as_interrupted(sim, tmp_path):
    """The second Ctrl-C during the stop timeout's wait: the requests are cut and count as interrupted (it said so,
    after a summary of 0 requests had been written, and the requests were in no file)."""
    url = sim(**SLOW)
    run = OneProcess(url, tmp_path, "-s", "10")
    run.wait_in_flight()
    run.p.send_signal(signal.SIGINT)
    wait_for(run.out, "waiting up to 10 s for 3 requests in flight to finish", 10)
    run.p.send_signal(signal.SIGINT)
    o, outcomes = run.end()
    assert outcomes == {"interrupted": 3}, (o, outcomes)


def test_a_sigterm_to_a_processes_master_stops_its_workers_and_counts_their_requests(sim, tmp_path):
    """SIGTERM to the master alone (docker stop, kill PID): Locust's shutdown wrote a summary of 0 requests while
    the workers' files held 6; now the master stops the workers, they finish within -s, and the summary holds 6."""
    url = sim(**SLOW)
    records, summary_path, out = tmp_path / "records.jsonl", tmp_path / "summary.json", tmp_path / "out.txt"
    cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", url, "-u", "3", "-r", "3", "-t", "60s",
           "-s", "10", "--profile", write_tiny_profile(tmp_path, 30), "--no-run-dir", "--no-exporter", "--only-summary",
           "--processes", "2", "--master-bind-port", str(free_port()), "--summary-json", str(summary_path),
           "--records-jsonl", str(records)]  # fmt: skip
    with out.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    try:
        wait_until(lambda: sim_counter(url, "request_success_total") >= 3 and sim_counter(url, "num_requests_running") == 3,
                   f"3 answered and 3 running; output:\n{out.read_text()[-2000:]}")  # fmt: skip
        p.send_signal(signal.SIGTERM)
        code = p.wait(30)
        left = group_after(p.pid, 5.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    text = out.read_text()
    assert code == 0 and "Traceback" not in text and left == [], (left, text[-3000:])
    outcomes = Counter(json.loads(line)["outcome"] for f in tmp_path.glob("records.worker*.jsonl") for line in f.read_text().splitlines())
    o = json.loads(summary_path.read_text())["overall"]
    assert outcomes == {"ok": 6} and (o["requests"], o["ok"], o["interrupted"]) == (6, 6, 0), (o, outcomes)
