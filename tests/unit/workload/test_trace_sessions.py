"""Sessions in a trace: their keys read back as written, the arrivals are single entries and first turns, and every
inconsistent turn is one line naming the file, the line and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmload.errors import ProfileError
from llmload.workload.trace_sessions import SessionTurn
from llmload.workload.traces import Trace, TraceEntry, load_trace, trace_lines

TOOLS = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)


def agent_session() -> list[TraceEntry]:
    """Session "s": a tool call answered by its result, then a text answer and a new user message; "u" a single entry."""
    return [
        TraceEntry(0.0, 20, 8, (), SessionTurn("s", 1, user_tokens=20, tool_calls=("search",), tools=TOOLS)),
        TraceEntry(3.0, 30, 5),
        TraceEntry(40.0, 78, 8, (), SessionTurn("s", 2, wait_ms=300.25, tool_results=(50,))),
        TraceEntry(400.0, 120, 16, (), SessionTurn("s", 3, wait_ms=2.0, user_tokens=20)),
    ]


def write(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def test_a_session_reads_back_as_written_and_its_first_turn_is_its_arrival(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines(agent_session()))
    first = json.loads(path.read_text().splitlines()[0])
    assert first["session"] == "s" and first["tools"] == [TOOLS[0]] and "parallel_tool_calls" not in first
    trace = load_trace(path)
    assert trace.entries == tuple(agent_session())
    assert trace.arrivals == (0, 1) and trace.sessions == {0: (0, 2, 3)}
    assert Trace(path, trace.entries[1:2]).sessions == {}  # built elsewhere: grouped all the same


def test_a_session_key_without_turn_is_metadata_as_before(tmp_path):
    trace = load_trace(write(tmp_path, [{"timestamp": 0, "input_length": 5, "output_length": 1, "session": "x"}] * 2))
    assert trace.arrivals == (0, 1) and not trace.sessions and trace.entries[0].turn is None


def lines_with(i: int, **change) -> list[dict]:
    """The agent session's lines, with line ``i + 1``'s keys changed (None: removed)."""
    docs = [e.to_dict() for e in agent_session()]
    for k, v in change.items():
        if v is None:
            docs[i].pop(k, None)
        else:
            docs[i][k] = v
    return docs


@pytest.mark.parametrize(
    ("i", "change", "says"),
    [
        (0, {"turn": 2}, r"line 1: session 's' starts at turn 2; a session's first entry is its turn 1"),
        (2, {"turn": 3}, r"line 3: session 's' turn 3 follows its turn 1; .* \(records of two runs in one file\?\)"),
        (2, {"tool_results": None, "user_tokens": 5}, r"line 3: session 's' turn 2 sends 0 tool results, but the "
                                                      r"previous answer held 1 tool call; give one"),
        (2, {"tool_results": [50, 50]}, r"line 3: session 's' turn 2 sends 2 tool results, but the previous answer"),
        (3, {"user_tokens": None}, r"line 4: session 's' turn 3 needs user_tokens ≥ 1"),
        (3, {"tool_results": [5]}, r"line 4: session 's' turn 3 sends 1 tool results, but the previous answer was text"),
        (2, {"user_tokens": 4}, r"line 3: .* answers tool calls: give tool_results, not user_tokens"),
        (2, {"tools": list(TOOLS)}, r"line 3: session 's' turn 2: tools belong to turn 1"),
        (0, {"tools": None}, r"line 1: session 's' turn 1 has tool_calls, but its turn 1 gives no tools"),
        (0, {"session": ""}, r"line 1: session must be a non-empty string"),
        (0, {"turn": 0}, r"line 1: turn must be an int ≥ 1"),
        (2, {"wait_ms": -1}, r"line 3: wait_ms must be a number of milliseconds ≥ 0, got -1"),
        (2, {"tool_results": [0]}, r"line 3: tool_results must be a list of token counts \(ints ≥ 1\)"),
        (0, {"tool_calls": "search"}, r"line 1: tool_calls must be a list of tool names"),
        (0, {"tools": [{"name": "x"}]}, r"line 1: tools must be a list of tool definitions"),
        (0, {"parallel_tool_calls": 1}, r"line 1: parallel_tool_calls must be true or false"),
    ],
)
def test_each_inconsistent_turn_is_one_line_naming_the_line_and_the_key(tmp_path, i, change, says):
    with pytest.raises(ProfileError, match=r"^trace '.*t.jsonl': " + says):
        load_trace(write(tmp_path, lines_with(i, **change)))


def test_a_limit_cuts_a_session_after_its_kept_turns(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines(agent_session()))
    trace = load_trace(path, limit=3)
    assert trace.sessions == {0: (0, 2)} and trace.arrivals == (0, 1)


def test_rebase_keeps_the_sessions(tmp_path):
    from llmload.cli import main as cli_main

    shifted = [e.to_dict() | {"timestamp": e.timestamp_ms + 1.7e12} for e in agent_session()]
    out = tmp_path / "r.jsonl"
    assert cli_main(["trace", "rebase", str(write(tmp_path, shifted)), "-o", str(out)]) == 0
    assert load_trace(out).entries == tuple(agent_session())
