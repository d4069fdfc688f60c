"""Open-loop arrivals for real: recorded send times, achieved rates (one and two processes), and
coordinated omission made visible, against the fixed-latency simulator.

* the send times users recorded (``record.start_ns``) follow the arrival process: inter-arrival
  CV ~0 for ``constant``, ~1 for ``poisson`` (and a Kolmogorov-Smirnov distance to the
  exponential below the 1 % critical value), ~2 for ``gamma`` with burstiness 0.25;
* 20 req/s over 30 s is achieved within 5 %, by one process and by two worker processes
  (``--processes 2``: each draws its stride of the one sequence from the run seed, the
  master's summary holds the whole);
* a server whose E2E is ~1 s, ``-u 2`` and 10 req/s offered: the cap holds arrivals back, so
  client wait and TTFT (from the intended send time) grow far beyond 1 s, the achieved rate
  is ~2/s, and the console says so.

The three timed runs (30, 30 and 10 s, light) run side by side in one module fixture; the
short send-time runs run in this process, one at a time.
"""

from __future__ import annotations

import math
import subprocess
import sys

import gevent
import numpy as np
import pytest

from llmload.sim import start_sim_process
from tests.helpers.gap_stats import cv, ks_exponential
from tests.helpers.harness import ROOT, run_cli, run_inprocess
from tests.helpers.loop_probe import LoopProbe
from tests.integration.test_prometheus import free_port

pytestmark = pytest.mark.integration

FAST = {"ttft_ms": 2, "itl_ms": 1}
SHORT = ["--max-tokens-cap", "2", "--seed", "11", "--stop-timeout", "0", "--no-run-dir", "--no-exporter"]


def _gaps(t: list[int], warmup_s: float) -> np.ndarray:
    a = np.sort(np.array(t, dtype=np.int64))
    a = a[a >= a[0] + int(warmup_s * 1e9)]
    return np.diff(a).astype(np.float64) / 1e9


def _jitter_cv(late: np.ndarray, mean_gap_s: float) -> float:
    """The CV that wake lateness like ``late`` adds to gaps of ``mean_gap_s``: a gap is the difference of
    two wakes' lateness, so its spread is sqrt(2) x theirs (twice that, for a margin)."""
    return 2.0 * math.sqrt(2.0) * float(late.std()) / mean_gap_s


def _send_gaps(url: str, args: list[str], users: int, seconds: float, warmup_s: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Gaps between the actual send times (``start_ns``) of an in-process run's requests (after ``warmup_s``),
    and the event loop's timer lateness measured meanwhile (:class:`LoopProbe`)."""
    gaps, _, late, _ = _both_gaps(url, args, users, seconds, warmup_s)
    return gaps, late


def _both_gaps(url: str, args: list[str], users: int, seconds: float,
               warmup_s: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """One in-process run's gaps (after ``warmup_s``) between its requests' actual send times
    (``start_ns``) and between the intended ones the records carry (``intended_ns``: the
    schedule itself, free of the event loop's jitter), the loop's timer lateness meanwhile and
    each send's lag behind its intended time (s)."""
    starts: list[int] = []
    planned: list[int] = []

    def keep(r) -> None:
        starts.append(r.start_ns)
        planned.append(r.intended_ns)

    probe = LoopProbe()
    try:
        summary = run_inprocess(url, [*SHORT, *args], users=users, seconds=seconds, on_record=keep)
    finally:
        late = probe.stop()
    assert summary["overall"]["errors"] == 0, summary["errors_by_kind"]
    # The cap (almost) never binds (sends = schedule): an arrival due before the first user spawned, or one of a
    # burst while a slowed box held every user (3-5 of 874 with the 2 cores 2.5x oversubscribed), may wait.
    assert summary["arrival"]["waited"] <= max(2, summary["arrival"]["arrivals"] // 100), summary["arrival"]
    assert all(p > 0 for p in planned)
    lag = (np.array(starts, dtype=np.float64) - np.array(planned, dtype=np.float64)) / 1e9
    # Each send leaves when its due time comes, as late as any timer on this loop wakes and no later:
    # a send's lag is a wake plus a hand-over to a user (one more switch), the probe's a wake.
    p50_lag, p90_lag = np.percentile(lag, [50, 90])
    p50_late, p90_late = np.percentile(late, [50, 90])
    # (p90: each of the two can be held by the OS on a busy box: 16-21 ms against a probe's 4-5 ms at 2.5x load)
    assert p50_lag <= p50_late + 0.002 and p90_lag <= 3 * p90_late + 0.005, (p50_lag, p90_lag, p50_late, p90_late)
    return _gaps(starts, warmup_s), _gaps(planned, warmup_s), late, lag


def test_constant_send_times_have_no_spread(sim):
    gaps, late = _send_gaps(sim(**FAST), ["--arrival", "constant", "--rate", "50"], users=8, seconds=5)
    assert len(gaps) > 150
    assert gaps.mean() == pytest.approx(0.02, rel=0.02)
    # timer jitter only: ~0.5 ms on 20 ms gaps on a quiet box (CV ~0.03), what the loop's lateness adds on a busy one
    assert cv(gaps) < 0.1 + _jitter_cv(late, 0.02), (cv(gaps), float(late.std()))


def test_poisson_send_times_are_exponential(sim):
    # One run, both views of its ~750 sends (the same sample size each check had when each
    # came from a run of its own).
    # 32 users: at 150/s a Poisson burst held 16 busy once the box slowed the answers (3-17 of 874 waited)
    gaps, planned, late, _ = _both_gaps(sim(**FAST), ["--arrival", "poisson", "--rate", "150"], users=32, seconds=6)
    assert len(gaps) > 500 and len(planned) > 500
    # KS (1 % level) on the intended send times the records carry: at 150/s the loop's ~1 ms
    # jitter on the actual sends is a visible share of the 6.7 ms mean gap on a busy machine.
    assert cv(planned) == pytest.approx(1.0, abs=0.12)
    assert ks_exponential(planned) < 1.63 / math.sqrt(len(planned))
    # The actual sends, event-loop jitter included: the planned CV, plus what the loop's lateness adds.
    assert abs(cv(gaps) - cv(planned)) <= 0.05 + _jitter_cv(late, 1 / 150), (cv(gaps), cv(planned), float(late.std()))


def test_gamma_burstiness_quarter_has_cv_two(sim):
    gaps, late = _send_gaps(sim(**FAST), ["--arrival", "gamma", "--burstiness", "0.25", "--rate", "150"], users=96,
                            seconds=7)  # fmt: skip  (bursts of dozens at once: 32 users let 141 of 1005 wait on a busy box)
    assert len(gaps) > 600
    assert cv(gaps) == pytest.approx(2.0, abs=0.35 + _jitter_cv(late, 1 / 150))


RATE_RUN = ["--headless", "--only-summary", "-u", "8", "-r", "100", "-t", "30s", "--arrival", "poisson",
            "--rate", "20", *SHORT]  # fmt: skip
CO_RUN = ["--headless", "-u", "2", "-r", "2", "-t", "10s", "--arrival", "constant", "--rate", "10",
          "--max-tokens-cap", "9", "--seed", "3", "--stop-timeout", "0", "--no-run-dir", "--no-exporter"]  # fmt: skip


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    """The module's four timed runs, started side by side, each against a simulator of its own:
    {"one": 20 req/s over 30 s in one process, "two": the same with ``--processes 2``,
    "co": the coordinated-omission run (E2E ~1 s, ``-u 2``, 10 req/s for 10 s), "co2": the same with
    ``--processes 2`` (one user each; its simulator is co's, whose capacity is not the limit)}, each as
    (code, output, summary, its folder).

    Their durations are what the tests assert on (the issue's "20 req/s over 30 s"), so they
    are not shortened; they are light (20, 20 and ~2 requests/s: ~1.6 s of CPU per 30 s run,
    most of it start-up), so side by side they take the wall time of the longest instead of
    the sum of all three.
    """
    port = str(free_port())  # not Locust's default 5557: other runs on this machine may hold it
    fast = ["--ttft-ms", str(FAST["ttft_ms"]), "--itl-ms", str(FAST["itl_ms"])]
    with (
        start_sim_process(fast, timeout=20) as one_sim,
        start_sim_process(fast, timeout=20) as two_sim,
        start_sim_process(["--ttft-ms", "200", "--itl-ms", "100"], timeout=20) as co_sim,  # 9 tokens: E2E ~1 s
    ):
        folders = {name: tmp_path_factory.mktemp(name) for name in ("one", "two", "co", "co2")}
        two_extra = ["--processes", "2", "--master-bind-port", port, "--master-port", port,
                     "--records-jsonl", str(folders["two"] / "rec.jsonl")]  # fmt: skip
        port2 = str(free_port())
        args = {"one": [*RATE_RUN, "--host", one_sim.url], "two": [*RATE_RUN, "--host", two_sim.url, *two_extra],
                "co": [*CO_RUN, "--host", co_sim.url],
                "co2": [*CO_RUN, "--host", co_sim.url, "--processes", "2", "--master-bind-port", port2,
                        "--master-port", port2]}  # fmt: skip
        jobs = {name: gevent.spawn(run_cli, args[name], folders[name], 120) for name in args}
        gevent.joinall(list(jobs.values()))
        yield {name: (*job.get(), folders[name]) for name, job in jobs.items()}


def _rate_summary(run: tuple) -> dict:
    code, out, summary, _ = run
    assert code == 0 and summary is not None, out[-3000:]
    assert summary["overall"]["errors"] == 0, summary["errors_by_kind"]
    return summary


@pytest.mark.slow  # over 20 s
def test_twenty_per_second_over_thirty_seconds_in_one_process(long_runs):
    s = _rate_summary(long_runs["one"])
    a = s["arrival"]
    assert a["mode"] == "poisson" and a["offered_rate"] == 20
    assert a["achieved_rate"] == pytest.approx(20, rel=0.05)
    # Not "and not scheduler_behind": that warning reads the box (schedule lag p99 > 10 ms), and a busy
    # 2-core one gives it rightly (10.4 ms once, beside a C++ build); the sends' lag is judged against the
    # loop's own lateness in the in-process tests above.
    assert a["waited"] == 0
    assert s["overall"]["client_wait_ms"]["p50"] < 5


@pytest.mark.slow  # shares the 30 s runs of long_runs
def test_twenty_per_second_with_two_worker_processes(long_runs):
    s = _rate_summary(long_runs["two"])
    folder = long_runs["two"][3]
    assert s["workers"] == 2
    a = s["arrival"]
    # Once (fc14, a quiet box) this read 933.5 req/s: ~600 requests over a ~0.64 s duration. The master now
    # ends the test's time at its stop, not at stop reports sent before it (and says so in a warning); the
    # message carries what the next failure saw, the run's log included.
    assert a["achieved_rate"] == pytest.approx(20, rel=0.05), (a, s["duration_s"], s["started_at"], s["overall"],
                                                              long_runs["two"][1][-4000:])  # fmt: skip
    # Both workers sent their stride: each wrote records, and together about half each.
    counts = [len(p.read_text().splitlines()) for p in sorted(folder.glob("rec.worker*.jsonl"))]
    assert len(counts) == 2 and min(counts) > 0.4 * sum(counts), counts
    assert sum(counts) == s["overall"]["requests"]


def test_coordinated_omission_is_made_visible(long_runs):
    code, out, s, _ = long_runs["co"]
    assert code == 0 and s is not None, out[-3000:]
    o, a = s["overall"], s["arrival"]
    assert o["e2e_ms"]["min"] > 900
    assert o["client_wait_ms"]["p50"] > 2000
    assert o["ttft_ms"]["p50"] > 2000  # from the intended send time: the wait is in it
    assert o["tpot_ms"]["p50"] == pytest.approx(100, rel=0.2)  # never the wait
    assert a["achieved_rate"] == pytest.approx(2.0, rel=0.25)
    assert a["waited"] + a["unsent"] > 0.5 * a["arrivals"]
    assert "the -u cap (2 requests in flight) held arrivals back" in out
    _unsent_are_not_sent(out, s)


def _unsent_are_not_sent(out: str, s: dict) -> None:
    """The arrivals still queued in the client at the end are counted unsent, not sent: the run said '100 sent'
    (and report 'arrivals: 100 sent') where ~20 requests reached the server."""
    o, a = s["overall"], s["arrival"]
    assert a["sent"] == o["requests"] == o["ok"] + o["errors"] + o["interrupted"], (a, o)
    assert a["unsent"] == a["arrivals"] - a["sent"] > 0.6 * a["arrivals"], a
    assert a["unsent_wait_max_ms"] > 5000, a  # the oldest waited most of the 10 s run
    assert f"{a['arrivals']} due, {a['sent']} sent, {a['unsent']} still queued in the client at the end" in out
    assert f"{a['unsent']} of them were still queued at the end" in out


def test_unsent_arrivals_merge_from_two_worker_processes(long_runs):
    code, out, s, _ = long_runs["co2"]
    assert code == 0 and s is not None, out[-3000:]
    assert s["workers"] == 2
    _unsent_are_not_sent(out, s)


def _limited_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_a_rate_no_process_can_schedule_is_one_line_and_a_fast_one_ends_by_its_run_time(sim):
    """--rate 1e9 -t 2s (or 1e6, or --burstiness 1e-9) never ended: the dispatcher queued tickets in a loop that never
    yielded, ignoring -t and SIGTERM, until the kernel killed it at 24 GB. Above the most a run can offer it is one
    line before any load; a rate one process cannot keep (1e5 req/s, -u 2) ends at -t with a bounded queue."""
    url = sim(**FAST)
    base = [sys.executable, "-m", "llmload", "run", "--headless", "-u", "2", "-t", "2s", "--host", url, *SHORT]
    for args, said in ((["--arrival", "constant", "--rate", "1e9"], "--rate 1e+09: more than llmload can offer"),
                       (["--arrival", "gamma", "--burstiness", "1e-9", "--rate", "10"], "--burstiness 1e-09: must be >= 0.01"),
                       (["--arrival", "poisson", "--rate-ladder", "10,1e6"], "1e+06 req/s is more than llmload can offer")):  # fmt: skip
        p = subprocess.run([*base, *args], capture_output=True, text=True, timeout=30, cwd=ROOT, preexec_fn=_limited_memory)
        assert p.returncode == 2 and said in p.stderr, (args, p.stderr[-1000:])
    p = subprocess.run([*base, "--arrival", "constant", "--rate", "1e5", "--only-summary"], capture_output=True,
                       text=True, timeout=60, cwd=ROOT, preexec_fn=_limited_memory)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert "more than one process keeps on schedule (10,000 req/s)" in p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("arrivals (constant, offered 100000/s)"))
    assert "still queued in the client at the end" in line, line


def test_bad_arrival_flags_fail_before_any_load():
    cases = [
        (["--rate", "5"], "--rate 5: needs an open-loop arrival"),
        (["--arrival", "poisson"], "--arrival poisson: needs --rate"),
        (["--arrival", "poisson", "--rate", "0"], "--rate 0: must be > 0"),
        (["--arrival", "poisson", "--burstiness", "0.5", "--rate", "2"], "is the shape of --arrival gamma"),
    ]
    for args, message in cases:
        p = subprocess.run([sys.executable, "-m", "llmload", "run", "--headless", "-t", "1s", "--host",
                            "http://127.0.0.1:9", *args], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
        assert p.returncode == 2, (args, p.stdout[-500:], p.stderr[-500:])
        assert message in p.stderr, (args, p.stderr[-1000:])
        assert "Traceback" not in p.stderr
