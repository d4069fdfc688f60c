"""An agent run recorded (``--records-jsonl``), made a trace (``llmload trace from-records``) and replayed
(``--trace``): every session comes back with the same turns in the same order, each turn sent after the previous
one's answer plus its recorded wait, tool results of the recorded sizes in their place.

Real LLMUsers in this process (:func:`~tests.helpers.harness.run_inprocess`) against ``python -m llmload.sim``
(20 ms TTFT, 2 ms per token, 3 of 4 answers to a request with tools are tool calls): 3 users run 3-turn agent
sessions with a 0.1 s tool latency for 1.5 s; the replay runs at ``--trace-speedup 4``, where the recorded
timestamps would send many later turns before their previous turn's answer: the session order is what holds them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from llmload.workload.trace_records import read_records, records_to_trace
from llmload.workload.traces import load_trace, trace_lines
from tests.helpers.harness import run_inprocess

pytestmark = pytest.mark.integration

PROFILE = """
[[classes]]
name = "agent"
weight = 1
turns = 3
input_tokens = 20
output_tokens = [6, 6, 12]
tools = [{type = "function", function = {name = "search", parameters = {type = "object"}}}]
tool_calls = {per_turn = 1, result_tokens = {dist = "uniform", min = 20, max = 60}, latency_s = 0.1}
"""
SPEEDUP = 4.0


def test_an_agent_run_recorded_as_a_trace_replays_its_sessions_turn_by_turn(sim, tmp_path: Path):
    url = sim("--ttft-ms", "20", "--itl-ms", "2", "--tool-call-share", "0.75")
    profile, records = tmp_path / "agent.toml", tmp_path / "records.jsonl"
    profile.write_text(PROFILE)
    run_inprocess(url, ["--profile", str(profile), "--seed", "5", "--records-jsonl", str(records)], users=3, seconds=1.5)
    got = records_to_trace(read_records([records]))
    path = tmp_path / "trace.jsonl"
    path.write_bytes(trace_lines(got.entries))
    trace = load_trace(path)
    assert got.sessions >= 6 and got.singles == 0 and len(trace.sessions) == got.sessions
    recorded: dict[str, list] = {}
    for first, turns in trace.sessions.items():
        recorded[trace.entries[first].turn.session] = [trace.entries[i] for i in turns]
    assert sum(1 for e in trace.entries if e.turn.tool_results) >= 4  # tool turns were recorded

    replayed = []
    summary = run_inprocess(url, ["--trace", str(path), "--trace-speedup", str(SPEEDUP), "--seed", "6"], users=16,
                            seconds=2.0, on_record=replayed.append)  # fmt: skip
    assert summary["arrival"]["trace"]["complete"] and summary["arrival"]["trace"]["entries"] == len(trace.sessions)
    by_session = defaultdict(list)
    for rec in replayed:
        by_session[rec.session].append(rec)
    assert set(by_session) == set(recorded)
    early = 0  # later turns whose recorded timestamp / speedup came before their previous turn's answer ended
    for sid, recs in by_session.items():
        recs.sort(key=lambda r: r.start_ns)  # the order they were sent in
        entries = recorded[sid]
        assert all(r.outcome == "ok" for r in recs), [(r.outcome, r.error_message) for r in recs]
        assert [r.turn for r in recs] == [e.turn.turn for e in entries] == list(range(1, len(entries) + 1))
        start = recs[0].start_ns - entries[0].timestamp_ms * 1e6 / SPEEDUP  # the replay's time 0, by turn 1
        for prev, rec, entry in zip(recs, recs[1:], entries[1:], strict=False):
            wait_ns = entry.turn.wait_ms * 1e6 / SPEEDUP
            assert rec.start_ns - prev.end_ns >= wait_ns - 2e6, (sid, rec.turn, rec.start_ns - prev.end_ns, wait_ns)
            assert rec.agent.results == entry.turn.tool_results  # the recorded results' sizes, after the calls
            if entry.turn.tool_results:
                assert rec.agent.waited_s * 1e9 >= wait_ns - 2e6 and entry.turn.wait_ms >= 99  # the tool's 0.1 s
            early += start + entry.timestamp_ms * 1e6 / SPEEDUP < prev.end_ns
    assert early >= 3  # the recorded times alone would have sent these before the previous answer
