"""The agents part: turns by kind (tool call or answer), the tool waits, and whole sessions, from agent records only."""

from __future__ import annotations

import orjson
import pytest

from llmload.metrics.parts.agents import AgentFigures, Agents
from llmload.metrics.parts.contract import Context
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import seen_of
from llmload.workload.agent import AgentTurn, ToolCall

MS = 1_000_000
CALL = (ToolCall("c1", "search", "{}"),)


def turn(start_ms: int, ttft_ms: int, context: int, *, calls=None, waited=0.0, last=False, session_start_ms=0,
         session_tokens=0, outcome="ok", turn_no=1) -> RequestRecord:  # fmt: skip
    r = RequestRecord("agent", context, 10)
    r.start_ns = start_ms * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + 5 * k) * MS for k in range(4)]
    r.end_ns = r.chunk_ns[-1] + MS
    r.output_tokens, r.outcome, r.turn = 4, outcome, turn_no
    r.agent = AgentTurn(session_start_ms * MS, session_tokens, last, waited)
    r.agent.calls = calls
    return r


def session_records() -> list[RequestRecord]:
    """One session from t = 1 s: tool turn (then a 2 s tool wait), answer turn, tool turn, answer turn (the last)."""
    return [
        turn(1000, 100, 100, calls=CALL, turn_no=1),  # the first turn: session_start 0, its own start
        turn(4000, 200, 420, waited=2.0, session_start_ms=1000, session_tokens=104, turn_no=2),
        turn(5000, 100, 500, calls=CALL, session_start_ms=1000, session_tokens=528, turn_no=3),
        turn(6000, 300, 820, waited=1.0, last=True, session_start_ms=1000, session_tokens=1032, turn_no=4),
    ]


def figures(records) -> AgentFigures:
    part = Agents()
    for r in records:
        part.add(r, seen_of(r, None))
    return part.result(Context(10.0))


def test_turns_are_split_by_kind_with_their_latencies_and_context():
    f = figures(session_records())
    tool, answer = f.kinds["tool_turn"], f.kinds["answer_turn"]
    assert (tool.ok, answer.ok) == (2, 2)
    assert tool.input_tokens_mean == 300 and answer.input_tokens_mean == 620  # the context grows turn after turn
    assert tool.lat("ttft").p50 == pytest.approx(100, rel=0.01) and answer.lat("ttft").max == pytest.approx(300, rel=0.01)
    assert f.tool_wait.count == 2 and f.tool_wait.max == pytest.approx(2000, rel=0.01)


def test_a_session_is_counted_at_its_last_turn_with_its_duration_turns_and_tokens():
    s = figures(session_records()).sessions
    assert (s.sessions, s.failed, s.turns_mean, s.turns_max) == (1, 0, 4, 4)
    assert s.tokens_mean == 1032 + 820 + 4 == s.tokens_max
    assert s.duration.max == pytest.approx(5000 + 300 + 15 + 1, rel=0.01)  # first start to last end (ms)


def test_a_failed_turn_ends_its_session_and_is_in_no_kind():
    f = figures([turn(0, 100, 100, calls=CALL), turn(1000, 100, 300, outcome="error", turn_no=2)])
    assert f.sessions.failed == 1 and f.sessions.sessions == 0
    assert f.kinds["tool_turn"].ok == 1 and "answer_turn" not in f.kinds


def test_records_of_other_classes_leave_the_part_empty_and_the_summary_without_the_key():
    part = Agents()
    plain = RequestRecord("chat", 10, 10)
    plain.outcome = "ok"
    part.add(plain, seen_of(plain, None))
    assert part.empty and part.result(Context(1.0)).to_dict() == {}
    assert part.result(Context(1.0)).console_lines(4) == []


def test_the_summary_block_reads_back_and_the_console_says_it_in_one_line():
    f = figures(session_records())
    d = orjson.loads(orjson.dumps(f.to_dict()))
    assert set(d["agent"]) == {"tool_turn", "answer_turn", "tool_wait_ms", "sessions"}
    assert set(d["agent"]["tool_turn"]) >= {"requests", "ttft_ms", "tpot_ms", "e2e_ms", "input_tokens_mean"}
    assert AgentFigures.from_dict(d).to_dict() == d
    (line,) = f.console_lines(4)
    assert line.startswith("agent: 2 tool turns (TTFT p50 100 ms") and "tool wait p50 1." in line
    assert "1 sessions (4.0 turns" in line


def merged_halves(records):
    """(the part fed every record, the part fed half merged with the other half through the wire)."""
    whole, a, b = Agents(), Agents(), Agents()
    for i, r in enumerate(records):
        whole.add(r, seen_of(r, None))
        (a if i % 2 else b).add(r, seen_of(r, None))
    a.merge(Agents.from_wire(orjson.loads(orjson.dumps(b.to_wire()))))
    return whole, a


def test_halves_merge_into_the_whole():
    whole, a = merged_halves(session_records() * 3)
    assert a.result(Context(1.0)).to_dict() == whole.result(Context(1.0)).to_dict()
    assert [e.value(a) for e in Agents.exported] == [6, 3]


def child(start_ms: int, ttft_ms: int, context: int, turn_no: int, *, calls=None, last=False, outcome="ok",
          session_start_ms=0) -> RequestRecord:  # fmt: skip
    r = turn(start_ms, ttft_ms, context, calls=calls, last=last, outcome=outcome, turn_no=turn_no,
             session_start_ms=session_start_ms)  # fmt: skip
    r.agent.child = True
    return r


def fanout_records() -> list[RequestRecord]:
    """A parent's fan-out after its turn 1 (children A, B, C; B fails) waited 1.5 s, a second one waited 0.5 s."""
    after = turn(5000, 300, 900, session_start_ms=1000, session_tokens=104, turn_no=2)
    after.agent.children, after.agent.fanout_s = 3, 1.5
    again = turn(7000, 300, 1200, session_start_ms=1000, session_tokens=1100, turn_no=3)
    again.agent.children, again.agent.fanout_s = 1, 0.5
    return [
        turn(1000, 100, 100, turn_no=1),
        child(2000, 40, 50, 1, calls=CALL),  # A: a tool turn, then its text answer ends it
        child(2500, 60, 120, 2, session_start_ms=2000),
        child(2000, 50, 50, 1, outcome="error"),  # B fails at once
        child(2000, 70, 50, 1),  # C answers at once
        after,
        child(6000, 80, 50, 1),
        again,
    ]


def test_child_turns_are_their_own_kind_and_the_fanout_counts_its_children_requests_and_waits():
    f = figures(fanout_records())
    assert f.kinds["answer_turn"].ok == 3 and "tool_turn" not in f.kinds  # the parent's turns only
    assert f.kinds["child_turn"].ok == 4 and f.kinds["child_turn"].lat("ttft").max == pytest.approx(80, rel=0.01)
    fan = f.fanout
    assert (fan.fanouts, fan.started, fan.requests) == (2, 4, 5)
    assert (fan.children.sessions, fan.children.failed) == (3, 1)  # a text answer ends a child: A, C, the 2nd one
    assert fan.wait.count == 2 and fan.wait.max == pytest.approx(1500, rel=0.01) and fan.wait.p50 is not None
    assert f.sessions.sessions == 0 and f.sessions.failed == 0  # the parent's session is still running
    assert f.tool_wait.count == 0


def test_the_fanout_block_reads_back_and_has_its_own_console_line():
    f = figures(fanout_records())
    d = orjson.loads(orjson.dumps(f.to_dict()))
    assert set(d["agent"]) == {"answer_turn", "child_turn", "tool_wait_ms", "sessions", "fanout"}
    assert set(d["agent"]["fanout"]) == {"fanouts", "children_started", "children_finished", "children_failed",
                                         "child_requests", "wait_ms", "child_duration_ms", "child_turns_mean",
                                         "child_tokens_mean"}  # fmt: skip
    assert d["agent"]["fanout"]["wait_ms"]["p90"] is not None
    assert AgentFigures.from_dict(d).to_dict() == d
    _, line = f.console_lines(4)
    assert line.startswith("agent fan-out: 2 fan-outs, waited p50 ") and "4 child sessions started, 3 finished, 1 failed" in line
    assert "5 child requests, TTFT p50" in line
    assert "fanout" not in figures(session_records()).to_dict()["agent"]  # no fan-out: the block as before


def test_fanout_halves_merge_into_the_whole():
    whole, a = merged_halves(fanout_records() * 3)
    assert a.result(Context(1.0)).to_dict() == whole.result(Context(1.0)).to_dict()
    assert "f" not in Agents().to_wire()  # a part without fan-out sends no fan-out block
