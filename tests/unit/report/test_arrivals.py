"""report.json's ``arrival``: read from the summary's arrival block (as the results write it), null in a closed loop."""

from __future__ import annotations

from pathlib import Path

from llmload.report.arrivals import arrival_data
from llmload.report.data import build_report
from llmload.results import from_summary
from llmload.rundir import Run
from tests.helpers import samples


def test_the_report_data_of_a_trace_replay():
    a = arrival_data(from_summary(samples.open_loop_summary(trace=True, waited=3)))
    assert a == {
        "mode": "trace", "burstiness": None, "offered_rate": 20.0, "ladder_rates": None, "achieved_rate": 29.4,
        "arrivals": 1200, "sent": 1200, "unsent": 0, "unsent_wait_ms": None, "waited": 3, "held_back": 3, "cap": 10,
        "client_wait_ms": {"p50": 0.09, "p99": 45.0},
        "schedule_lag_ms": {"p50": 0.08, "p99": 0.9}, "scheduler_behind": False,
        "trace": {"file": "/data/traces/mooncake.jsonl", "entries": 1500, "speedup": 2.0, "span_s": 75.0,
                  "block_reuse": 0.4321, "sent": 1200, "complete": False},
    }  # fmt: skip


def test_the_report_data_counts_the_arrivals_still_queued_at_the_end_as_unsent():
    """The report said 'arrivals: 500 sent' where the server got 84: the 416 still queued in the client at the end
    were in no count. They are now unsent (with the longest wait among them), and held back by the -u cap."""
    a = arrival_data(from_summary(samples.open_loop_summary(waited=80, unsent=416)))
    assert (a["arrivals"], a["sent"], a["unsent"], a["unsent_wait_ms"]) == (1200, 784, 416, 8357.2)
    assert a["held_back"] == 80 + 416
    t = arrival_data(from_summary(samples.open_loop_summary(trace=True, unsent=46)))["trace"]
    assert (t["sent"], t["complete"]) == (1154, False)


def test_a_rate_ladder_offers_its_steps_rates_and_a_closed_loop_has_no_arrival_data():
    a = arrival_data(from_summary(samples.rate_ladder_summary()))
    assert a["offered_rate"] is None and a["ladder_rates"] == [1.0, 2.0, 4.0, 8.0] and a["cap"] == 16
    assert a["client_wait_ms"] is None  # the sample has no client_wait_ms: shown as nothing, not as zeros
    for closed in (samples.plain_summary(), samples.ladder_summary()):
        assert build_report(Run.from_summary(Path("."), "r", closed))["arrival"] is None


def test_a_trace_of_sessions_counts_its_entries_as_sessions_and_says_their_turns():
    from llmload.report.arrivals import arrival_markdown

    s = samples.open_loop_summary(trace=True)
    s["overall"]["by_turn"] = {"1": {"requests": 40, "ok": 40}, "2": {"requests": 80, "ok": 80}}  # every request a turn
    a = arrival_data(from_summary(s))
    assert a["trace"]["turns"] == 120
    md = "\n".join(arrival_markdown({"arrival": a}))
    assert "mooncake.jsonl: 1,500 sessions at speedup 2" in md and "1,200 of 1,500 sessions (120 turns)" in md
    plain = arrival_data(from_summary(samples.open_loop_summary(trace=True)))
    assert "turns" not in plain["trace"]
    assert "1,200 of 1,500 entries (the run ended first" in "\n".join(arrival_markdown({"arrival": plain}))
