"""The web UI as the place to run tests: ``llmload run`` with its web UI, driven over HTTP as its page does.

One llmload process (and one simulator) serves the module's tests, each a test started
from the form: Locust's own numbers against llmload's (one request event per request),
and a ladder run from the form (its status in the LLM tab's data, the header through its
end). Ports are free ones on 127.0.0.1; the process is stopped by PID.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import pytest

from llmload.sim import start_sim_process
from tests.helpers.harness import ROOT, write_tiny_profile
from tests.integration.test_web_ui import free_port, stop_process, wait_for_http

pytestmark = pytest.mark.integration

TTFT_MS, ITL_MS, TOKENS = 30, 4, 200  # a request of the profile: ~0.85 s; capped at 8 tokens: ~60 ms


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """(base URL, simulator URL, log path) of a web-UI llmload whose profile asks for 200 tokens a request."""
    tmp = tmp_path_factory.mktemp("webform")
    sim = start_sim_process(["--ttft-ms", str(TTFT_MS), "--itl-ms", str(ITL_MS)], timeout=20)
    port, log = free_port(), tmp / "llmload.log"
    cmd = [sys.executable, "-m", "llmload", "run", "--web-host", "127.0.0.1", "--web-port", str(port),
           "--host", sim.url, "--profile", write_tiny_profile(tmp, TOKENS), "--exporter-port", "0", "--no-run-dir"]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(base + "/", 30, proc, log)
        yield base, sim.url, log
    finally:
        stop_process(proc)
        sim.stop()
    output = log.read_text()
    assert "Uncaught exception" not in output and "Traceback" not in output, output[-4000:]


def _get(url: str, data: dict | None = None) -> dict:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=30) as r:
        return json.loads(r.read())


def _wait_stopped(base: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while _get(base + "/llmload/live")["state"] != "stopped":
        assert time.monotonic() < deadline, "the test did not stop"
        time.sleep(0.2)


def _live_overall(stats: dict) -> dict:
    live = next(t for t in stats["extended_stats"] if t["key"] == "llm")
    return next(row for row in live["data"] if row["class"] == "Overall")


def test_locusts_header_rps_is_llmloads_request_rate(web):
    """One request event per finished request: Locust's current RPS (its header) is the LLM tab's request rate."""
    base, sim, _ = web
    while time.time() % 1 > 0.05:  # start on a whole second: Locust's per-second buckets are then full ones
        time.sleep(0.005)
    started = time.monotonic()
    answer = _get(base + "/swarm", {"user_count": "4", "spawn_rate": "50", "host": sim, "max_tokens_cap": "8"})
    assert answer["success"] is True, answer
    time.sleep(5.6 - (time.monotonic() - started))  # Locust's current RPS: its whole seconds 0..2 of the test
    stats = _get(base + "/stats/requests")  # the page's own poll, the first of this test: nothing cached
    _get(base + "/stop", {})
    overall = _live_overall(stats)
    llmload_rate = overall["requests_per_s"] + overall["errors_per_s"]
    assert stats["state"] == "running" and llmload_rate > 20, (stats["state"], overall)
    assert abs(stats["current_rps"] - llmload_rate) <= 0.10 * llmload_rate, (stats["current_rps"], overall)
    assert {s["method"] for s in stats["stats"] if s["name"] != "Aggregated"} == {"E2E"}  # no TTFT rows by default
    assert stats["fail_ratio"] == 0 and overall["errors_per_s"] == 0
    _wait_stopped(base)


def test_a_ladder_from_the_form_shows_its_step_and_the_header_ends_stopped(web):
    """The form's ladder runs (no -f, no --ladder at start-up); its status is in the LLM tab's data; its end,
    a drain of ~0.85 s requests in Locust's cleanup state, never reaches the page as CLEANUP."""
    base, sim, _ = web
    seen: list[str] = []
    done = threading.Event()

    def page_polls() -> None:  # as Locust's page, but every 0.1 s instead of every 2 s
        while not done.is_set():
            seen.append(_get(base + "/stats/requests")["state"])
            time.sleep(0.1)

    form = {"user_count": "1", "spawn_rate": "1", "host": sim, "max_tokens_cap": "0", "ladder": "1,2",
            "step_time": "2s", "step_warmup": "0.5s"}  # fmt: skip
    answer = _get(base + "/swarm", form)
    assert answer["success"] is True and "shape" in answer["message"], answer
    poller = threading.Thread(target=page_polls)
    poller.start()
    try:
        time.sleep(1.2)
        live = _get(base + "/llmload/live")["ladder"]
        assert (live["step"], live["users"], live["steps"], live["phase"]) == (0, 1, 2, "steady"), live
        assert 0 < live["left_s"] <= 1.5 and live["text"].startswith("step 1 of 2: 1 user, steady"), live
        assert "verdict so far: no step judged yet" in live["text"]
        series = _get(base + "/llmload/series")  # the chart page at the top of the LLM tab shows the same line
        assert series["ladder"]["text"].startswith("step 1 of 2: 1 user"), series["ladder"]
        time.sleep(1.3)
        live = _get(base + "/llmload/live")["ladder"]
        assert (live["step"], live["users"]) == (1, 2) and live["text"].startswith("step 2 of 2: 2 users"), live
        _wait_stopped(base)  # the ladder ends by itself; its last requests finish (the ladder's stop timeout)
        time.sleep(0.3)
    finally:
        done.set()
        poller.join(30)
    assert seen and seen[-1] == "stopped" and "cleanup" not in seen, seen
    assert _get(base + "/llmload/live")["ladder"]["phase"] == "ended"
