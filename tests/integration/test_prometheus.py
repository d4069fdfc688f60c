"""A real Prometheus scrapes a real headless run; its answers agree with the run summary.

Simulator (TTFT 60 ms, one token every 2 ms) ← ``llmload run --headless`` (standalone,
exporter on 127.0.0.1:<free port>, ``--exporter-linger 3s``) ← ``/usr/bin/prometheus``
(scrape interval 1 s, storage in tmp_path, API on 127.0.0.1:<free port>). During the run
the test asks Prometheus for the TTFT median from ``rate()``; after the run for the final
counters, and checks both against ``--summary-json``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from llmload.exporter import BUCKETS
from tests.helpers.harness import ROOT
from tests.helpers.ports import free_port

pytestmark = pytest.mark.integration

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
# 16 s at ~85 req/s (8 users, ~95 ms requests): >1 000 requests. The in-run queries come 10.5 s after the
# first successful scrape (~1 s into the run), ~4 s before its end: rate(...[30s]) then spans the whole run so
# far, rate(...[10s]) ten scrapes of steady load.
RUN_S = 16
LIVE_AFTER_FIRST_SCRAPE_S = 10.5
LINGER_S = 3



def http_get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def wait_until(check, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with {proc.returncode}")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {timeout:g} s")


def stop(proc: subprocess.Popen) -> None:
    """Stop a child we started, by its PID: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


class PromAPI:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def query(self, expr: str) -> list[tuple[dict, float]]:
        url = f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        body = json.loads(http_get(url))
        assert body["status"] == "success", body
        return [(r["metric"], float(r["value"][1])) for r in body["data"]["result"]]

    def scalar(self, expr: str) -> float:
        result = self.query(expr)
        assert len(result) == 1, (expr, result)
        return result[0][1]


def classic_bucket(cumulative: dict[float, float], q: float) -> tuple[float, float]:
    """(lower, upper] of the classic bucket where Prometheus interpolates quantile q."""
    les = sorted(cumulative)
    rank = q * cumulative[float("inf")]
    upper = next(le for le in les if cumulative[le] >= rank)
    i = les.index(upper)
    return (les[i - 1] if i else 0.0), upper


@pytest.fixture
def prometheus(tmp_path):
    """Factory: prometheus(target_port) → PromAPI; the server is stopped by PID at the end."""
    procs: list[subprocess.Popen] = []

    def start(target_port: int) -> PromAPI:
        if not os.access(PROMETHEUS, os.X_OK):
            pytest.fail(f"{PROMETHEUS} not found: `make system-deps` installs Debian's prometheus")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: llmload\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{target_port}']\n"
        )
        port = free_port()
        log = open(tmp_path / "prometheus.log", "wb")  # noqa: SIM115  (closed with the process)
        p = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
        procs.append(p)
        log.close()
        wait_until(lambda: http_get(f"http://127.0.0.1:{port}/-/ready") is not None, 30, "prometheus ready", p)
        api = PromAPI(port)
        # Ready is not scraping yet: Prometheus applies its targets on a 5 s tick. Once `up` exists (0: the
        # target is not up yet) the scrape loop runs, and the first scrape follows the exporter within 1 s.
        wait_until(lambda: api.query('up{job="llmload"}'), 30, "prometheus scraping", p)
        return api

    yield start
    for p in procs:
        stop(p)


@pytest.mark.slow  # over 20 s
def test_prometheus_agrees_with_the_summary(sim, prometheus, tmp_path):
    url = sim(ttft_ms=60, itl_ms=2)
    exporter_port = free_port()
    prom = prometheus(exporter_port)
    summary_path = tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "llmload", "run", "--headless", "-u", "8", "-r", "8", "-t", f"{RUN_S}s",
           "--host", url, "--profile", "default", "--max-tokens-cap", "16", "--only-summary", "--stop-timeout", "0",
           "--exporter-port", str(exporter_port), "--exporter-host", "127.0.0.1", "--exporter-linger", f"{LINGER_S}s",
           "--summary-json", str(summary_path)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "LLMLOAD_NO_EXPORTER"}
    out = open(tmp_path / "llmload.log", "wb")  # noqa: SIM115
    run = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    out.close()
    try:
        wait_until(
            lambda: b"llmload_info" in http_get(f"http://127.0.0.1:{exporter_port}/metrics"), 30, "exporter", run
        )
        wait_until(lambda: prom.query('up{job="llmload"} == 1'), 10, "first scrape", run)
        scraped = time.monotonic()

        # -- during the run: the median TTFT of the last 30 s, from rate() ---------------
        time.sleep(max(0.0, scraped + LIVE_AFTER_FIRST_SCRAPE_S - time.monotonic()))
        live_p50 = prom.scalar("histogram_quantile(0.5, sum by (le) (rate(llmload_ttft_seconds_bucket[30s])))")
        live_tokens_per_s = prom.scalar("sum(rate(llmload_output_tokens_total[10s]))")
        assert run.poll() is None, "the run ended before the in-run queries"

        assert run.wait(RUN_S + 30) == 0, (tmp_path / "llmload.log").read_text()[-3000:]
    finally:
        stop(run)
    log = (tmp_path / "llmload.log").read_text()
    s = json.loads(summary_path.read_text())
    o = s["overall"]
    assert o["ok"] > 100 and o["errors"] == 0, log[-3000:]

    # -- after the run: final counters ------------------------------------------------------
    # The exporter kept serving LINGER_S = 3 scrape intervals after the test stopped (users
    # are killed at stop with --stop-timeout 0, so no request finishes after the summary);
    # series are gone from instant queries once the target is down (staleness), so read the
    # last value of each series with max_over_time (counters only grow).
    final = lambda expr: prom.scalar(f"sum(max_over_time({expr}[5m]))")  # noqa: E731
    assert final("llmload_output_tokens_total") == o["output_tokens"]
    assert final('llmload_requests_total{outcome="ok"}') == o["ok"]
    assert final("llmload_input_tokens_total") == o["input_tokens"]
    ttft = o["ttft_ms"]
    assert final("llmload_ttft_seconds_count") == ttft["count"]
    # _sum is exact; the summary's mean is rounded to the µs.
    assert final("llmload_ttft_seconds_sum") / ttft["count"] * 1000 == pytest.approx(ttft["mean"], abs=1e-3)
    for cls, c in s["classes"].items():
        assert final(f'llmload_output_tokens_total{{class="{cls}"}}') == c["output_tokens"], cls

    # -- the median: exact bucket, then Prometheus' interpolation inside it -----------------
    # The summary's p50 is the centre of the 1 % fine bucket holding the median sample. Every
    # classic `le` is a fine edge, so that fine bucket lies inside exactly one classic bucket,
    # and the exported cumulative counts are exact: the classic bucket where Prometheus finds
    # rank q*count must contain the summary's p50 (to the µs it is rounded to). Within that
    # bucket histogram_quantile interpolates linearly, assuming samples spread evenly, so its
    # answer can be anywhere in (lower, upper]: the tolerance is the bucket's width, nothing
    # tighter is justified (here (50 ms, 75 ms], as every TTFT is ~60 ms plus client noise).
    rows = prom.query("sum by (le) (max_over_time(llmload_ttft_seconds_bucket[5m]))")
    cumulative = {float(m["le"]): v for m, v in rows}
    assert len(cumulative) == len(BUCKETS["ttft"]) + 1
    lower, upper = classic_bucket(cumulative, 0.5)
    p50_s = ttft["p50"] / 1000
    assert lower - 1e-6 <= p50_s <= upper + 1e-6, (lower, p50_s, upper)
    final_p50 = prom.scalar("histogram_quantile(0.5, sum by (le) (max_over_time(llmload_ttft_seconds_bucket[5m])))")
    assert lower <= final_p50 <= upper
    assert abs(final_p50 - p50_s) <= upper - lower
    # The live rate() window saw the same steady server: same classic bucket, same bound.
    assert lower <= live_p50 <= upper, (lower, live_p50, upper)
    assert abs(live_p50 - p50_s) <= upper - lower
    # Live token throughput from rate() against the run's average (steady load: within 25 %).
    assert live_tokens_per_s == pytest.approx(o["output_tokens_per_s"], rel=0.25)
    assert (Path(tmp_path) / "tsdb").is_dir()
