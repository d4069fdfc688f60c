"""SLOs and goodput against the fixed-latency simulator (TTFT 50 ms): exact attainment and goodput rates.

* ``--slo ttft_ms=40``: no request can be good (the simulator never answers before 50 ms):
  attainment 0, goodput 0, the verdict names ``ttft_ms``;
* ``--slo ttft_ms=60``: attainment 1 and goodput rates equal to the request and output-token
  rates exactly — when every request's TTFT really was <= 60 ms. On this shared 2-core box a
  few requests per run are sometimes measured at 60-230 ms (at the same instant in every
  process: the box stalled), and a request that waited that long is not good. So each run is
  also checked request by request against its own ``--records-jsonl``: the good requests per
  class must be exactly the successful records with TTFT <= the limit, and the all-good
  equalities must hold whenever the records say all were good;
* a profile class's own ``slo`` wins key by key over ``--slo``;
* two worker processes: the SLO reaches the workers and their good-request counters merge.
"""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path

import gevent
import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

SIM = ["--ttft-ms", "50", "--itl-ms", "2"]
COMMON = ["--headless", "--only-summary", "--seed", "3", "--max-tokens-cap", "8", "--stop-timeout", "5",
          "-u", "2", "-r", "2", "-t", "4s", "--no-run-dir"]  # fmt: skip
NO_MISSES = {"ttft_ms": 0, "tpot_ms": 0, "e2e_ms": 0}


def run(url: str, tmp_path: Path, *flags: str) -> tuple[dict, str, list[dict]]:
    """One run; (summary, console output, the successful requests' raw records of every process)."""
    return side_by_side(url, tmp_path, list(flags))[0]


def side_by_side(url: str, tmp_path: Path, *flag_sets: list[str]) -> list[tuple[dict, str, list[dict]]]:
    """Runs started together, one per flag set (each ~2 users at ~30 req/s: light); ``run``'s result for each.

    Only for runs whose assertions a busy machine cannot move: SLOs no request can meet or
    miss by a margin, and good-request counts checked against each run's own records.
    """
    works = []
    for _ in flag_sets:
        works.append(tmp_path / f"run{len(list(tmp_path.glob('run*')))}")
        works[-1].mkdir()
    jobs = [gevent.spawn(run_cli, [*COMMON, *flags, "--host", url, "--records-jsonl", str(work / "records.jsonl")],
                         work, 90)
            for flags, work in zip(flag_sets, works, strict=True)]  # fmt: skip
    gevent.joinall(jobs)
    return [_checked(work, *job.get()) for work, job in zip(works, jobs, strict=True)]


def _checked(work: Path, code: int, output: str, summary: dict | None) -> tuple[dict, str, list[dict]]:
    assert code == 0 and summary is not None, output[-3000:]
    assert summary["overall"]["errors"] == 0 and summary["overall"]["ok"] > 20, summary["errors_by_kind"]
    ok = [r for f in sorted(work.glob("records*.jsonl")) for line in f.read_text().splitlines()
          if (r := json.loads(line))["outcome"] == "ok"]  # fmt: skip
    assert len(ok) == summary["overall"]["ok"]
    return summary, output, ok


def good_by_record(records: list[dict], limit_ms: float) -> Counter:
    """Successful records per class with TTFT (first content event - start, ns) <= the limit."""
    return Counter(r["class"] for r in records if r["chunks_ns"][0] <= limit_ms * 1e6)


def blocks(summary: dict):
    yield "overall", summary["overall"]
    yield from summary["classes"].items()


def assert_matches_records(summary: dict, records: list[dict], limit_ms: float) -> bool:
    """Good requests per class = the records within the limit; True when every request was good."""
    good = good_by_record(records, limit_ms)
    good["overall"] = sum(good.values())
    for name, s in blocks(summary):
        g = s["goodput"]
        assert g["good_requests"] == good[name], name
        assert g["missed"] == {**NO_MISSES, "ttft_ms": s["ok"] - good[name]}, name
        assert g["attainment"] == (round(good[name] / s["ok"], 4) if s["ok"] else None), name
    return good["overall"] == summary["overall"]["ok"]


def assert_all_good(summary: dict) -> None:
    for name, s in blocks(summary):
        g = s["goodput"]
        assert g["good_requests"] == s["ok"] and g["attainment"] == 1.0, name
        assert g["requests_per_s"] == s["requests_per_s"] and g["output_tokens_per_s"] == s["output_tokens_per_s"], name
        assert g["good_output_tokens"] == s["output_tokens"] and g["missed"] == NO_MISSES, name


def test_at_60_ms_every_request_on_time_is_good_with_exact_goodput_rates(sim, tmp_path):
    summary, output, records = run(sim(*SIM), tmp_path, "--slo", "ttft_ms=60")
    assert summary["config"]["slo"] == {"ttft_ms": 60.0}
    all_good = assert_matches_records(summary, records, 60)
    # The simulator answers in ~50 ms: most first tokens are on time. How many a busy 2-core box makes late
    # varies (21 of 118 once, beside a C++ build and other suites); the accounting above is exact either way.
    on_time = sorted(r["chunks_ns"][0] for r in records)[len(records) // 2] <= 60e6
    assert on_time, "the median TTFT is above 60 ms: the simulator's 50 ms is not what was measured"
    slo = summary["verdict"]["slo"]
    assert slo["target"] == 0.99 and slo["slos"] == {n: {"ttft_ms": 60.0} for n in ("short", "medium", "long")}
    assert slo["overall"]["status"] == ("met" if slo["overall"]["attainment"] >= 0.99 else "missed")
    if all_good:  # the Done-when case: attainment 1, goodput rates = request / output-token rates
        assert_all_good(summary)
        assert slo["overall"]["attainment"] == 1.0 and "attainment 100.0%" in output and "SLO verdict: met" in output
    assert "short excellent (" in output  # TTFT p50 ~50 ms


def test_at_40_ms_no_request_is_good(sim, tmp_path):
    summary, output, _ = run(sim(*SIM), tmp_path, "--slo", "ttft_ms=40")
    for name, s in blocks(summary):
        g = s["goodput"]
        assert (g["good_requests"], g["attainment"], g["requests_per_s"], g["output_tokens_per_s"]) == (0, 0.0, 0.0, 0.0), name
        assert g["missed"]["ttft_ms"] == s["ok"]
    o = summary["verdict"]["slo"]["overall"]
    assert (o["status"], o["attainment"], o["failed_slo"]) == ("missed", 0.0, "ttft_ms")
    assert "SLO verdict: missed (attainment 0.0% against 99.0%); most missed: ttft_ms" in output


def test_a_class_slo_wins_key_by_key_and_no_slo_adds_nothing(sim, tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text(
        '[[classes]]\nname = "strict"\nweight = 1\ninput_tokens = 10\noutput_tokens = 8\nslo = {ttft_ms = 40}\n'
        '[[classes]]\nname = "loose"\nweight = 1\ninput_tokens = 10\noutput_tokens = 8\n'
    )
    url = sim(*SIM)
    # With the class's and the run's SLO, with the class's alone, with none.
    (summary, _, records), (plain, _, _), (none, output, _) = side_by_side(
        url, tmp_path, ["--profile", str(profile), "--slo", "ttft_ms=60,e2e_ms=60000"], ["--profile", str(profile)], []
    )
    strict, loose = summary["classes"]["strict"]["goodput"], summary["classes"]["loose"]["goodput"]
    assert strict["good_requests"] == 0 and strict["attainment"] == 0.0
    assert loose["good_requests"] == good_by_record(records, 60)["loose"] > 0
    assert summary["verdict"]["slo"]["slos"] == {"strict": {"ttft_ms": 40.0, "e2e_ms": 60000.0},
                                                 "loose": {"ttft_ms": 60.0, "e2e_ms": 60000.0}}  # fmt: skip
    assert summary["verdict"]["slo"]["per_class"]["strict"]["failed_slo"] == "ttft_ms"
    assert plain["classes"]["strict"]["goodput"]["attainment"] == 0.0  # the class's slo alone still judges
    assert plain["classes"]["loose"]["goodput"]["attainment"] == 1.0  # no SLO of its own: every ok is good
    assert "goodput" not in none["overall"] and "slo" not in none["verdict"] and "goodput" not in output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_slo_reaches_the_workers_and_their_counts_merge(sim, tmp_path):
    url = sim(*SIM)
    procs = ["--processes", "2", "--master-bind-host", "127.0.0.1"]

    def port() -> list[str]:  # a port of its own: never a worker of another run (another test on this box)
        p = str(_free_port())
        return ["--master-bind-port", p, "--master-port", p]

    first, second = port(), port()
    while second == first:  # the two runs side by side: two masters, two ports
        second = port()
    (summary, _, records), (tight, _, _) = side_by_side(
        url, tmp_path, ["--slo", "ttft_ms=1000", *procs, *first], ["--slo", "ttft_ms=40", *procs, *second]
    )
    assert summary["workers"] == 2
    if assert_matches_records(summary, records, 1000):
        assert_all_good(summary)
    assert tight["workers"] == 2 and tight["overall"]["goodput"]["missed"]["ttft_ms"] == tight["overall"]["ok"] > 0


def test_a_bad_slo_is_one_line_before_any_load(sim, tmp_path):
    code, output, summary = run_cli([*COMMON, "--slo", "ttft=800", "--host", sim(*SIM)], tmp_path, timeout=60)
    assert code != 0 and summary is None
    assert "--slo 'ttft=800': unknown SLO 'ttft'; valid keys: ttft_ms, tpot_ms, e2e_ms" in output
