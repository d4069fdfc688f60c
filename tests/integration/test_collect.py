"""Engine and GPU metrics collected into real runs (``llmload run`` against the simulator).

The simulator publishes vLLM's engine metrics and its simulated GPU's gauges on one
``/metrics``. Two short runs at 1 and 20 users poll it every second, with an
unreachable endpoint beside it; the summaries must carry server and GPU signals that
move with the load, the unreachable endpoint reported (not fatal), and the series
written beside the summary. The simulator's host work per step is raised (20 ms) and
its per-sequence GPU work too (2 ms): the GPU then idles during the host part of every
step, so its utilization rises with the batch (~0.63 at 1 user, ~0.8 at 20) by a margin
that a busy test machine does not erase (with the defaults it is already ~0.9 at 1 user).
A third run, distributed (``--processes 2``), checks that only the master polls.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from llmload.sim import start_sim_process
from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

UNREACHABLE = "http://127.0.0.1:9/metrics"
PROFILE = 'name = "collect"\n[[classes]]\nname = "chat"\nweight = 1\ninput_tokens = 200\noutput_tokens = 60\n'
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "metrics" / "vllm-0.10-v1_llama-3.1-8b_t1.txt"


@pytest.fixture(scope="module")
def engine_sim():
    proc = start_sim_process(
        ["--preset", "healthy", "--time-scale", "0.2", "--host-overhead-ms", "20", "--per-seq-ms", "2"], timeout=20
    )
    try:
        yield proc.url
    finally:
        proc.stop()


def run(url: str, users: int, tmp_path: Path) -> tuple[dict, dict]:
    """A 6 s run at ``users`` polling the simulator and an unreachable endpoint; (summary, series)."""
    out = tmp_path / f"u{users}"
    out.mkdir()
    profile = out / "profile.toml"
    profile.write_text(PROFILE)
    code, output, summary = run_cli(
        ["--headless", "-u", str(users), "-r", str(users), "-t", "6s", "--host", url, "--profile", str(profile),
         "--engine-metrics", url, "--engine-metrics", UNREACHABLE, "--gpu-metrics", url + "/metrics",
         "--collect-interval", "1s", "--only-summary"],
        out,
    )  # fmt: skip
    assert code == 0, output[-3000:]
    assert summary is not None and summary["overall"]["ok"] > 0, output[-3000:]
    assert sum(f"{UNREACHABLE}: unreachable" in line for line in output.splitlines()) == 1, output[-3000:]
    series_path = out / "summary.timeseries.json"
    assert summary["timeseries"] == {
        "path": "summary.timeseries.json",
        "schema": "llmload.timeseries/1",
        "polls": summary["server"]["polls"],
    }
    return summary, json.loads(series_path.read_text())


def test_server_and_gpu_signals_move_with_load_and_an_unreachable_endpoint_is_reported(engine_sim, tmp_path):
    one, one_series = run(engine_sim, 1, tmp_path)
    many, many_series = run(engine_sim, 20, tmp_path)

    for s in (one, many):
        server, gpu = s["server"], s["gpu"]
        assert server["engines"] == ["vllm"] and server["polls"] >= 6
        ends = {e["url"]: e for e in server["endpoints"]}
        assert ends[engine_sim + "/metrics"]["status"] == "ok"
        down = ends[UNREACHABLE]
        assert down["status"] == "unreachable" and down["answers"] == 0 and down["failures"] == server["polls"]
        assert down["error"] and down["first_seen"] is None
        assert gpu["endpoints"][0]["status"] == "ok" and gpu["endpoints"][0]["gpus"] == 1
        assert gpu["devices"][0]["model"] and gpu["devices"][0]["exporter"] == "llmload"
        sig = server["signals"]
        assert sig["generation_tokens"]["increase"] > 0 and sig["ttft_ms"]["count"] > 0
        assert sig["requests_finished"]["increase"] == pytest.approx(s["overall"]["ok"], abs=2 + s["users_max"])

    running = lambda s: s["server"]["signals"]["running"]["p50"]  # noqa: E731
    util = lambda s: s["gpu"]["signals"]["utilization"]["p50"]  # noqa: E731
    assert running(one) == 1.0
    assert running(many) >= 10 * running(one)
    assert util(many) > util(one) + 0.05
    assert many["server"]["signals"]["kv_cache_usage"]["max"] > 5 * one["server"]["signals"]["kv_cache_usage"]["max"]
    assert (
        many["server"]["signals"]["generation_tokens"]["rate_per_s"]
        > 5 * one["server"]["signals"]["generation_tokens"]["rate_per_s"]
    )

    # The stored series: one column per signal, aligned with the polls, that moves with load too.
    for series, summary in ((one_series, one), (many_series, many)):
        assert len(series["t"]) == len(series["t_s"]) == summary["server"]["polls"]
        assert series["t_s"][0] < 1.0 and series["t_s"][-1] == pytest.approx(6.0, abs=1.5)
        assert len(series["gpu"]["signals"]["utilization"]) == len(series["t"])
    assert max(many_series["server"]["signals"]["running"]) >= 10 * max(one_series["server"]["signals"]["running"])
    assert max(many_series["gpu"]["signals"]["utilization"]) > max(one_series["gpu"]["signals"]["utilization"])


class _Counting(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).hits += 1
        body = FIXTURE.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_only_the_master_polls_in_a_distributed_run(sim, tmp_path):
    url = sim(ttft_ms=20, itl_ms=3)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        code, output, s = run_cli(
            ["--processes", "2", "--headless", "-u", "4", "-r", "4", "-t", "4s", "--host", url, "--profile", "quadrants",
             "--engine-metrics", f"http://127.0.0.1:{httpd.server_address[1]}", "--collect-interval", "0.5s", "--only-summary"],
            tmp_path,
        )  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == 0, output[-3000:]
    assert s["workers"] == 2
    assert s["server"]["polls"] >= 6
    assert _Counting.hits == s["server"]["polls"]  # the workers never polled
    assert s["server"]["signals"]["running"]["mean"] == 24.0  # the recorded vLLM page
