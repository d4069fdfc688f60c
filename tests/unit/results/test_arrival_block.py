"""The ``arrival`` block of an open-loop run: arrivals due, sent and unsent, and the warnings they raise."""

from __future__ import annotations

import io
import json

from llmload.metrics.arrival_stats import ArrivalStats
from llmload.report.console import render_summary
from llmload.results import build_result, from_summary, to_summary
from llmload.results.arrival_block import arrival_result, arrival_warnings
from llmload.results.model import ArrivalResult, Stats, TraceReplay
from tests.unit.results.test_summary import rec


def _stats(due: int, sent: int, waited: int = 0, unsent_wait_s: float = 0.0) -> ArrivalStats:
    s = ArrivalStats()
    s.arrivals, s.sent, s.waited, s.unsent_wait = due, sent, waited, unsent_wait_s
    for _ in range(due):
        s.lag.record(0.0008)
    return s


def _run(requests: int, arrival: ArrivalResult, users: int = 2):
    from llmload.metrics.recorder import Recorder

    r = Recorder()
    for _ in range(requests):
        x = rec("x")
        x.intended_ns = x.start_ns
        r.add(x)
    return build_result(r.snapshot(), duration_s=10.0, users_max=users, weights={"x": 1}, arrival=arrival)


def test_arrivals_still_queued_at_the_end_are_unsent_in_the_summary_the_console_and_a_warning():
    """--arrival constant --rate 50 -u 2 -t 10s against a 50 ms / 10 ms server: '500 sent' and 'arrivals: 500' where
    the server got 84; the 416 still queued in the client (the longest waits of the run) were in no count."""
    result = _run(84, arrival_result("constant", 50.0, _stats(500, 84, waited=82, unsent_wait_s=8.357), 0, 0.0))
    s = to_summary(result)
    a = s["arrival"]
    assert (a["arrivals"], a["sent"], a["unsent"], a["unsent_wait_max_ms"], a["waited"]) == (500, 84, 416, 8357.0, 82)
    assert s["overall"]["requests"] == a["sent"]
    (held,) = [w for w in s["warnings"] if "held arrivals back" in w]
    assert "498 of 500 arrivals (100%) found every user busy" in held
    assert "416 of them were still queued at the end (the longest for 8.36 s) and never sent" in held
    out = io.StringIO()
    render_summary(result, out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("arrivals ("))
    assert line.startswith("arrivals (constant, offered 50/s): 500 due, 84 sent, 416 still queued in the client at "
                           "the end (never sent, in no latency; the longest waited 8.36 s)")  # fmt: skip
    back = from_summary(json.loads(json.dumps(s)))
    assert (back.arrival.started, back.arrival.unsent, back.arrival.unsent_wait_ms) == (84, 416, 8357.0)
    assert to_summary(back)["arrival"] == a


def test_an_older_summary_without_sent_reads_as_all_sent():
    s = to_summary(_run(10, arrival_result("poisson", 1.0, _stats(10, 10), 0, 0.0)))
    for key in ("sent", "unsent", "unsent_wait_max_ms"):
        del s["arrival"][key]
    a = from_summary(s).arrival
    assert (a.arrivals, a.started, a.unsent) == (10, 10, 0)


def test_a_short_low_rate_run_does_not_warn_that_the_cap_held_arrivals_back():
    """Every short or low-rate open-loop run warned "the -u cap held arrivals back ... raise -u": the first arrival,
    due before the first user spawned, counted as waited (1 of 6 > 1 %). The dispatcher no longer counts a wait
    within the loop's jitter; and an arrival due as the run ended, still queued for a millisecond, is unsent but
    not held back by the cap."""
    quiet = ArrivalResult("constant", 2.0, 0.6, arrivals=6, waited=0, sent=6)
    assert arrival_warnings(quiet, Stats(), users=2) == []
    at_the_end = ArrivalResult("constant", 2.0, 0.5, arrivals=6, waited=0, sent=5, unsent_wait_ms=0.4)
    assert arrival_warnings(at_the_end, Stats(), users=2) == []
    capped = ArrivalResult("constant", 2.0, 0.5, arrivals=6, waited=1, sent=5, unsent_wait_ms=900.0)
    (w,) = arrival_warnings(capped, Stats(), users=2)
    assert "2 of 6 arrivals" in w and "1 of them were still queued at the end" in w


def test_a_trace_whose_entries_were_still_queued_is_not_complete_and_says_why():
    """A 50-entry trace at speedup 2, -u 2, -t 3s: '50 of 50 entries sent', complete, no warning, where 4 requests
    reached the server (the warning compared the released arrivals with the entries)."""
    replay = TraceReplay("/t/gen.jsonl", 50, 2.0, 10.0, 0.3)
    result = _run(4, arrival_result("trace", replay.offered_rate, _stats(50, 4, waited=2, unsent_wait_s=2.5), 0, 0.0,
                                    trace=replay))  # fmt: skip
    s = to_summary(result)
    assert (s["arrival"]["trace"]["sent"], s["arrival"]["trace"]["complete"]) == (4, False)
    (w,) = [w for w in s["warnings"] if "not replayed to its end" in w]
    assert w.startswith("the trace was not replayed to its end: 4 of its 50 entries were sent; 46 were due but still "
                        "waiting for a free user at the end (the -u cap: raise -u)")  # fmt: skip
    assert "not due yet" not in w
    cut = ArrivalResult("trace", 5.0, 2.0, arrivals=30, sent=28, unsent_wait_ms=1500.0, trace=replay)
    (_, w2) = arrival_warnings(cut, Stats(), users=2)
    assert "28 of its 50 entries were sent; 2 were due but still waiting" in w2
    assert "20 were not due yet when the run ended (the replay needs 10 s at speedup 2: raise --run-time" in w2
    out = io.StringIO()
    render_summary(result, out)
    assert "trace replay gen.jsonl: 4 of 50 entries sent, 46 still queued in the client at the end" in out.getvalue()
