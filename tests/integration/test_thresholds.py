"""``--threshold`` for real, against the fixed-latency simulator (TTFT 50 ms, ITL 2 ms): the table, the
summary's ``thresholds`` and the exit code (0 passed, 1 failed, 2 bad input before any load).

No TTFT can be below 50 ms, so ``ttft_p99_ms<40`` fails on any machine; the passing limits are
100x the server's latency, so a loaded box cannot move them either.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import gevent
import pytest

from tests.helpers.harness import run_cli, write_tiny_profile

pytestmark = pytest.mark.integration

SIM = ["--mode", "fixed", "--ttft-ms", "50", "--itl-ms", "2"]
COMMON = ["--headless", "--only-summary", "--max-tokens-cap", "8", "--stop-timeout", "5", "-u", "2", "-r", "2",
          "-t", "3s", "--no-run-dir"]  # fmt: skip
PASSING = ["--threshold", "ttft_p50_ms<5000", "--threshold", "error_rate<0.5,requests>=5"]


def _served(url: str) -> float:
    """Requests the simulator finished (its vLLM-named counter)."""
    text = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    return sum(float(m) for m in re.findall(r"^vllm:request_success_total\{[^}]*\} (\S+)$", text, re.M))


def _runs(url: str, tmp_path: Path, *flag_sets: list[str]) -> list[tuple[int, str, dict | None]]:
    jobs = []
    for i, flags in enumerate(flag_sets):
        work = tmp_path / f"run{i}"
        work.mkdir()
        jobs.append(gevent.spawn(run_cli, [*COMMON, *flags, "--host", url], work, 90))
    gevent.joinall(jobs)
    return [j.get() for j in jobs]


def test_a_failed_threshold_exits_1_with_the_table_and_passing_ones_exit_0(sim, tmp_path):
    url = sim(*SIM)
    profile = write_tiny_profile(tmp_path)
    (fail_code, fail_out, fail), (ok_code, ok_out, ok), (multi_code, multi_out, _) = _runs(
        url, tmp_path,
        ["--profile", profile, "--threshold", "ttft_p99_ms<40", *PASSING],
        ["--profile", profile, *PASSING, "--threshold", "tiny:tpot_p50_ms<200"],
        ["--profile", profile, "--threshold", "ttft_p99_ms<40", "--processes", "2"],
    )  # fmt: skip
    assert fail_code == 1, fail_out[-3000:]
    assert "thresholds: FAIL (1 of 4 failed; exit code 1)" in fail_out
    row = next(ln for ln in fail_out.splitlines() if ln.strip().startswith("ttft_p99_ms<40"))
    assert row.rstrip().endswith("FAIL") or "FAIL  (" in row
    first = fail["thresholds"][0]
    assert first["expr"] == "ttft_p99_ms<40" and first["passed"] is False and first["value"] >= 50
    assert [t["passed"] for t in fail["thresholds"][1:]] == [True, True, True]
    assert fail["config"]["thresholds"][0] == "ttft_p99_ms<40"
    assert ok_code == 0, ok_out[-3000:]
    assert "thresholds: PASS (4 of 4 passed; exit code 0)" in ok_out and all(t["passed"] for t in ok["thresholds"])
    assert multi_code == 1 and "thresholds: FAIL (1 of 1 failed; exit code 1)" in multi_out, multi_out[-3000:]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--threshold", "garbage"], "--threshold 'garbage': not a threshold; write [CLASS:]FIGURE OP NUMBER"),
        (["--threshold", "ttft_p99_ms<40", "--threshold", "ttft_p99<40"], "unknown figure 'ttft_p99'"),
        (["--threshold", "mid:ttft_p99_ms<40"], "no class 'mid' in the profile (its classes: short, medium, long)"),
        (["--threshold", "garbage", "--processes", "2"], "--threshold 'garbage': not a threshold"),
    ],
)
def test_a_bad_threshold_is_one_line_and_exit_2_before_any_request(sim, tmp_path, flags, says):
    url = sim(*SIM)
    before = _served(url)
    code, output, summary = run_cli([*COMMON, *flags, "--host", url], tmp_path, 60)
    assert code == 2, output[-3000:]
    errors = [ln for ln in output.splitlines() if "error" in ln.lower()]
    assert len(errors) == 1 and says in errors[0], output[-3000:]
    assert summary is None
    gevent.sleep(0.2)
    assert _served(url) == before  # no request reached the server
