"""A real run directory and its report, rendered in headless Chromium.

A short ladder against the simulator (preset ``batch-starved``, engine and GPU metrics
polled from its ``/metrics``) writes ``runs/<timestamp>-default/``; ``llmload report``
turns it into report.html, which Chromium renders: the test reads the page's text and
charts from the DOM and counts the screenshot's non-white pixels (decoded by the browser).
``LLMLOAD_REPORT_PNG=path`` keeps the screenshot (how docs/images/report.png is made).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmload.sim import start_sim_process
from tests.helpers.harness import ROOT, run_cli
from tests.integration.test_web_ui import chrome

pytestmark = pytest.mark.integration

WIDTH = 1280
_COUNT_PIXELS = """
const done = arguments[arguments.length - 1];
const img = new Image();
img.onload = () => {
  const c = document.createElement("canvas");
  c.width = img.width; c.height = img.height;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0, colour = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] < 230 || d[i + 1] < 230 || d[i + 2] < 230) ink++;
    if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 60) colour++;
  }
  done([c.width, c.height, ink, colour]);
};
img.onerror = () => done(null);
img.src = "data:image/png;base64," + arguments[0];
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    no_run_dir = os.environ.pop("LLMLOAD_NO_RUN_DIR", None)  # a suite may turn run directories off; this test needs one
    try:
        # The simulator at 1/8 of real time and 3 s steps: what 6 s steps at --time-scale 0.25 held.
        with start_sim_process(["--preset", "batch-starved", "--time-scale", "0.125"]) as sim:
            args = ["--headless", "--host", sim.url, "--ladder", "1,4,8", "--step-time", "3s", "--step-warmup", "1s"]
            args += ["--max-tokens-cap", "64", "--runs-dir", str(tmp / "runs")]
            args += ["--engine-metrics", sim.url, "--gpu-metrics", sim.url, "--collect-interval", "0.5s"]
            code, output, _ = run_cli(args, tmp)
    finally:
        if no_run_dir is not None:
            os.environ["LLMLOAD_NO_RUN_DIR"] = no_run_dir
    assert code == 0, output[-3000:]
    dirs = list((tmp / "runs").iterdir())
    assert len(dirs) == 1 and dirs[0].name.endswith("-default"), dirs
    assert f"llmload: run saved in {dirs[0]}" in output
    return dirs[0]


def test_run_directory_holds_the_run(run_dir):
    names = {p.name for p in run_dir.iterdir()}
    assert {"summary.json", "config.json", "verdict.json", "findings.json", "timeseries.json"} <= names
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [s["users"] for s in summary["steps"]] == [1, 4, 8]
    assert summary["timeseries"]["path"] == "timeseries.json"
    series = json.loads((run_dir / "timeseries.json").read_text())
    assert series["schema"] == "llmload.timeseries/1" and len(series["t"]) >= 10
    config = json.loads((run_dir / "config.json").read_text())
    assert config["config"]["ladder"]["levels"] == [1, 4, 8] and config["host"].startswith("http://127.0.0.1:")


def test_report_renders_in_chromium(run_dir, tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "llmload", "report", str(run_dir)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert p.returncode == 0, p.stderr
    html_path = run_dir / "report.html"
    assert p.stdout.split() == [str(html_path), str(run_dir / "report.md"), str(run_dir / "report.json")]
    report = json.loads((run_dir / "report.json").read_text())
    assert [s["users"] for s in report["steps"]] == [1, 4, 8] and "server.running" in report["series"]["signals"]
    assert "## 1. Phenomenon" in (run_dir / "report.md").read_text()

    driver = chrome(tmp_path)
    try:
        driver.set_window_size(WIDTH, 1000)
        driver.get(html_path.as_uri())
        text = driver.find_element("tag name", "body").text
        for heading in ("Latency and throughput vs concurrency", "Ladder steps", "Server and GPU over time", "Request classes"):
            assert heading in text, heading
        assert "llmload-sim" in driver.find_element("tag name", "h1").text
        headline = driver.find_element("css selector", "section.verdict .headline").text
        status = (report.get("verdict") or {}).get("status")
        if status in ("ok", "breach"):
            assert headline.startswith(("Safe concurrency", "No safe step")), headline
        else:
            assert headline, status
        sizes = driver.execute_script(
            "return [...document.querySelectorAll('svg')].map(s => s.getBoundingClientRect().width)"
        )
        assert len(sizes) >= 7 and min(sizes) > 400, sizes  # 4 vs concurrency + queue, KV, GPU (+ engine tok/s)
        assert driver.execute_script("return document.documentElement.scrollWidth") <= WIDTH  # nothing sticks out
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(WIDTH, height + 200)
        png = driver.get_screenshot_as_png()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
        if os.environ.get("LLMLOAD_REPORT_PNG"):
            Path(os.environ["LLMLOAD_REPORT_PNG"]).write_bytes(png)
        driver.get("about:blank")
        width, height, ink, colour = driver.execute_async_script(_COUNT_PIXELS, base64.b64encode(png).decode())
    finally:
        driver.quit()
    assert width >= WIDTH * 0.9 and height > 2000
    assert ink > 0.01 * width * height, (ink, width, height)  # text, lines, borders: not a blank page
    assert colour > 5_000, colour  # the coloured chart lines and tags are drawn
