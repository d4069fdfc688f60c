"""Steady state for real (issue 23): a ramp whose in-flight count still climbs during the measured window is
reported not steady, with the reason and a warning; a run at a constant level is not said to climb."""

from __future__ import annotations

from pathlib import Path

import gevent
import pytest

from tests.helpers.harness import run_cli, write_tiny_profile

pytestmark = pytest.mark.integration

COMMON = ["--headless", "--only-summary", "--stop-timeout", "5", "--no-run-dir", "--no-exporter", "-t", "12s"]


def test_a_climbing_ramp_is_not_steady_and_a_flat_run_does_not_climb(sim, tmp_path: Path):
    url = sim("--mode", "fixed", ttft_ms=50, itl_ms=10)
    profile = write_tiny_profile(tmp_path, 4)
    jobs = {}
    for name, users in {"ramp": ["-u", "20", "-r", "1.5"], "flat": ["-u", "4", "-r", "4"]}.items():
        (tmp_path / name).mkdir()
        jobs[name] = gevent.spawn(run_cli, [*COMMON, *users, "--host", url, "--profile", profile], tmp_path / name, 90)
    gevent.joinall(list(jobs.values()))
    (rc, ramp_out, ramp), (fc, flat_out, flat) = jobs["ramp"].get(), jobs["flat"].get()
    assert rc == 0 and ramp is not None, ramp_out[-3000:]
    run = ramp["steady"]["run"]
    assert run["steady"] is False and "in-flight still climbing" in run["reason"], run
    assert run["window_s"] >= 10 and run["in_flight"]["slope_per_min"] > 30
    assert any(w.startswith("not steady: ") and "in-flight still climbing" in w for w in ramp["warnings"])
    assert "WARNING: not steady" in ramp_out
    assert fc == 0 and flat is not None, flat_out[-3000:]
    assert flat["steady"]["run"]["steady"] is not None and "climbing" not in flat["steady"]["run"]["reason"]
    assert ramp["steady"]["steps"] == [] and flat["steady"]["run"]["in_flight"]["mean"] == pytest.approx(4, abs=0.5)
