"""A run's records as a trace: sessions keep their turns, waits, tool calls and result sizes; single requests their
times and lengths; bad or mixed-up records are one line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.errors import ProfileError
from llmload.metrics.dump import record_to_line
from llmload.metrics.record import RequestRecord
from llmload.workload.agent import AgentSpec, AgentTurn, ToolCall
from llmload.workload.trace_records import read_records, records_to_trace
from llmload.workload.traces import load_trace, trace_lines

MS = 1_000_000
T0 = 1_700_000_000 * 10**9  # wall clock of the first request
TOOLS = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)


def record(start_ms: float, took_ms: float, asked: int, out: int, *, session: str = "", turn: int = 0,
           agent: AgentTurn | None = None, calls: int = 0, outcome: str = "ok", cls: str = "agent",
           intended_ms: float = 0.0, usage: int | None = None) -> bytes:  # fmt: skip
    rec = RequestRecord(cls, asked, 64)
    rec.start_wall_ns, rec.start_ns, rec.end_ns = T0 + int(start_ms * MS), 10 * MS, 10 * MS + int(took_ms * MS)
    rec.intended_ns = rec.start_ns - int(intended_ms * MS) if intended_ms else 0
    rec.outcome, rec.output_tokens, rec.session, rec.turn, rec.agent = outcome, out, session, turn, agent
    if usage is not None:
        rec.input_tokens, rec.input_tokens_from_usage = usage, True
    if agent is not None and calls:
        agent.calls = tuple(ToolCall(f"c{i}", "search", "{}") for i in range(calls))
    return record_to_line(rec)


def agent_run() -> list[bytes]:
    """Session "1.1": turn 1 answered with 2 calls, results of 30 and 45 tokens after a 500 ms tool run, a text answer,
    then a user message of 20 after 80 ms of think time; a single request of another class in between."""
    return [
        record(0, 100, 20, 6, session="1.1", turn=1, agent=AgentTurn(spec=AgentSpec(TOOLS, per_turn=2)), calls=2, usage=31),
        record(250, 40, 300, 9, cls="chat"),
        record(600.2, 200, 20 + 6 + 75, 8, session="1.1", turn=2, agent=AgentTurn(waited_s=0.5002, results=(30, 45))),
        record(880.2, 50, 101 + 8 + 20, 16, session="1.1", turn=3, agent=AgentTurn()),
    ]


def write(tmp_path: Path, lines: list[bytes], name: str = "records.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    return path


def test_a_session_keeps_its_turns_waits_tool_calls_and_result_sizes(tmp_path):
    got = records_to_trace(read_records([write(tmp_path, agent_run())]))
    assert (got.sessions, got.singles, got.skipped) == (1, 1, 0)
    e = got.entries
    assert [x.timestamp_ms for x in e] == [0.0, 250.0, 600.2, 880.2]
    assert [(x.input_length, x.output_length) for x in e] == [(31, 64), (300, 64), (101, 64), (129, 64)]  # usage wins
    t1, t2, t3 = e[0].turn, e[2].turn, e[3].turn
    assert e[1].turn is None
    assert (t1.session, t1.turn, t1.user_tokens, t1.tool_calls, t1.tools, t1.parallel_tool_calls) == (
        "1.1", 1, 20, ("search", "search"), TOOLS, True)
    assert (t2.turn, t2.wait_ms, t2.tool_results, t2.user_tokens, t2.tool_calls) == (2, 500.2, (30, 45), 0, ())
    assert (t3.turn, t3.user_tokens, t3.tool_results) == (3, 20, ())
    assert t3.wait_ms == pytest.approx(80.0)  # think time: from turn 2's end (600.2 + 200) to turn 3's start
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines(e))
    trace = load_trace(path)  # what --trace replays: valid, one session and one single request
    assert trace.arrivals == (0, 1) and trace.sessions == {0: (0, 2, 3)}


def test_an_open_loop_request_is_placed_at_its_intended_time_and_classes_can_be_picked(tmp_path):
    lines = [record(0, 10, 5, 2, cls="chat"), record(100, 10, 5, 2, cls="chat", intended_ms=30), *agent_run()[2:3]]
    got = records_to_trace(read_records([write(tmp_path, lines)]), classes=["chat"])
    assert [x.timestamp_ms for x in got.entries] == [0.0, 70.0] and got.skipped == 1


def test_sessions_are_kept_up_to_their_first_missing_turn_across_worker_files(tmp_path):
    run = agent_run()
    a = write(tmp_path, [run[0], run[3]], "records.jsonl")
    b = write(tmp_path, [run[1], record(5, 10, 7, 2, session="2.1", turn=2, agent=AgentTurn())], "records.worker1.jsonl")
    got = records_to_trace(read_records([a, b]))
    # "1.1" lost its turn 2 (not given): turn 1 only; "2.1" has no turn 1: left out
    assert got.sessions == 1 and got.skipped == 2 and [x.turn.turn for x in got.entries if x.turn] == [1]


def test_a_failed_turn_is_its_sessions_last_with_no_kind(tmp_path):
    run = agent_run()
    failed = record(600, 5, 101, 0, session="1.1", turn=2, agent=AgentTurn(waited_s=0.5, results=(30, 45)), outcome="error")
    got = records_to_trace(read_records([write(tmp_path, [run[0], failed])]))
    assert orjson.loads(failed)["turn_kind"] is None
    assert [x.turn.turn for x in got.entries] == [1, 2] and got.entries[1].turn.tool_calls == ()


def test_records_without_result_sizes_split_the_growth_between_the_calls(tmp_path):
    run = agent_run()
    doc = orjson.loads(run[2])
    del doc["tool_results"]
    got = records_to_trace(read_records([write(tmp_path, [run[0], orjson.dumps(doc) + b"\n"])]))
    assert got.entries[1].turn.tool_results == (37, 37)  # (101 - 20 - 6) // 2


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ([b"not json\n"], r"records '.*records.jsonl': line 1: not JSON"),
        ([b"[1]\n"], r"line 1: not a request record"),
        ([b'{"class": "x"}\n'], r"line 1: start_wall_ns must be an int, got None; is it a file written by --records-jsonl\?"),
        ([], r"no request records to convert; pass the files a run wrote with --records-jsonl"),
        ([agent_run()[0], agent_run()[0]], r"line 2: session '1.1' turn 1 appears twice \(also .*line 1\): records of two "
                                           r"runs in one file\?"),
    ],
)
def test_bad_records_are_one_line(tmp_path, lines, says):
    with pytest.raises(ProfileError, match=says):
        records_to_trace(read_records([write(tmp_path, lines)]))


def test_tool_calls_without_the_first_turns_tools_cannot_be_replayed(tmp_path):
    doc = orjson.loads(agent_run()[0])
    del doc["tools"]
    with pytest.raises(ProfileError, match=r"line 1: session '1.1' made tool calls but its first turn's record has no tools"):
        records_to_trace(read_records([write(tmp_path, [orjson.dumps(doc) + b"\n"])]))
