"""TTFT grades and output tok/s per GPU on the console, against the simulator's engine model and its GPU."""

from __future__ import annotations

import re

import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration


def test_console_grades_each_class_and_divides_output_by_the_gpus_seen(sim, tmp_path):
    url = sim("--preset", "healthy")
    code, output, summary = run_cli(
        ["--headless", "-u", "2", "-r", "2", "-t", "4s", "--host", url, "--max-tokens-cap", "16", "--seed", "1",
         "--gpu-metrics", url + "/metrics", "--collect-interval", "1s", "--no-run-dir", "--stop-timeout", "5"],
        tmp_path,
    )  # fmt: skip
    assert code == 0 and summary is not None, output[-3000:]
    assert len(summary["gpu"]["devices"]) == 1
    per_gpu = re.search(r"output tok/s per GPU: ([\d.]+) \(1 GPU\)", output)
    assert per_gpu and float(per_gpu.group(1)) == pytest.approx(summary["overall"]["output_tokens_per_s"], abs=0.06)
    line = next(x for x in output.splitlines() if x.startswith("TTFT p50 grade"))
    for name, s in summary["classes"].items():
        if s["ttft_ms"]["p50"] is not None:
            assert re.search(rf"{name} (excellent|good|pass|poor|bad) \({s['ttft_ms']['p50']:.0f} ms\)", line), line
