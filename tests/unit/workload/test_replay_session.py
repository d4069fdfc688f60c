"""A trace's session replayed: each turn built as a live session builds it, sent in order, each after the previous
answer and its recorded wait (a virtual clock), a failed turn ending the session."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from llmload.workload.agent import ToolCall
from llmload.workload.replay_session import ReplaySession
from llmload.workload.trace_sessions import SessionTurn
from llmload.workload.traces import TraceEntry

TOOLS = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)


def entries(parallel: bool = False) -> list[TraceEntry]:
    """Turn 1 answered with two tool calls; turn 2 sends their results, answered in text; turn 3 a new user message."""
    return [
        TraceEntry(0.0, 20, 8, (), SessionTurn("s", 1, user_tokens=20, tool_calls=("search", "lookup"), tools=TOOLS,
                                               parallel_tool_calls=parallel)),  # fmt: skip
        TraceEntry(900.0, 128, 30, (), SessionTurn("s", 2, wait_ms=300.0, tool_results=(50, 40))),
        TraceEntry(1500.0, 180, 16, (), SessionTurn("s", 3, wait_ms=100.0, user_tokens=12)),
    ]


def session(speedup: float = 1.0, cap: int | None = None, on_end=lambda: None, parallel: bool = False) -> ReplaySession:
    return ReplaySession(entries(parallel), (4, 7, 9), random.Random(3), "trace", speedup=speedup, cap=cap, on_end=on_end)


def test_each_turn_sends_what_the_recording_sent_around_the_answers_of_this_replay():
    s = session(cap=20)
    first = s.next_turn()
    assert (first.turn, first.input_tokens, first.max_tokens, first.messages) == (1, 20, 8, None)
    assert len(first.prompt.split()) == 20 and first.tools == TOOLS and not first.parallel_tool_calls
    assert s.entry_index == 4 and s.wait_s == pytest.approx(0.3)
    # the server made the two calls again: they are answered with their own ids, names and arguments
    second = s.next_turn("", 8, (ToolCall("c1", "search", '{"q": 1}'), ToolCall("c2", "lookup", "{}")))
    assistant, r1, r2 = second.messages[-3:]
    assert assistant == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": 1}'}},
        {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}  # fmt: skip
    assert (r1["role"], r1["tool_call_id"], len(r1["content"].split())) == ("tool", "c1", 50)
    assert (r2["tool_call_id"], len(r2["content"].split())) == ("c2", 40)
    assert second.input_tokens == 20 + 8 + 50 + 40 and second.max_tokens == 20  # capped
    third = s.next_turn("the answer", 5)
    assert third.messages[-2:][0] == {"role": "assistant", "content": "the answer"}
    assert third.messages[-1]["role"] == "user" and len(third.messages[-1]["content"].split()) == 12
    assert third.input_tokens == second.input_tokens + 5 + 12 and s.done and s.wait_s == 0.0
    with pytest.raises(RuntimeError, match="session 's' is over after 3 turns"):
        s.next_turn("x", 1)


def test_calls_the_server_did_not_make_now_are_the_recordings_with_ids_of_their_own():
    s = session(parallel=True)
    assert s.next_turn().parallel_tool_calls
    second = s.next_turn("some text", 3, None)  # this time the server answered in text: the recorded calls are sent
    calls = second.messages[-3]["tool_calls"]
    assert second.messages[-3]["content"] == "some text"
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_2_0", "search", "{}"), ("call_2_1", "lookup", "{}")]  # fmt: skip
    assert [m["tool_call_id"] for m in second.messages[-2:]] == ["call_2_0", "call_2_1"]


class Clock:
    """A virtual clock: the server answers every request in ``service_s``; thinking advances it."""

    def __init__(self, monkeypatch, service_s: float = 0.05) -> None:
        self.now = 100.0
        self.service_s = service_s
        self.sent: list[tuple[float, dict]] = []
        self.fail_turn = 0
        monkeypatch.setattr("llmload.workload.replay_session.perf_counter", lambda: self.now)

    def think(self, seconds: float) -> None:
        self.now += seconds

    def send(self, sample, **fields):
        self.sent.append((self.now, {"turn": sample.turn, **fields}))
        start = self.now
        self.now += self.service_s
        ok = sample.turn != self.fail_turn
        agent = fields["agent"]
        if agent is not None and sample.turn == 1:
            agent.calls = (ToolCall("c1", "search", "{}"), ToolCall("c2", "lookup", "{}"))
        return SimpleNamespace(outcome="ok" if ok else "error", reply_text="text", output_tokens=4, input_tokens=sample.input_tokens,
                               start_ns=int(start * 1e9))  # fmt: skip


def test_run_sends_every_turn_in_order_each_after_the_previous_answer_and_its_wait_at_the_replays_speed(monkeypatch):
    clock, ended = Clock(monkeypatch), []
    session(speedup=2.0, on_end=lambda: ended.append(1)).run(clock.send, clock.think, intended_ns=123)
    times = [t for t, _ in clock.sent]
    fields = [f for _, f in clock.sent]
    assert [f["turn"] for f in fields] == [1, 2, 3] and ended == [1]
    # turn 2: 50 ms of answer, then 300 ms of tool run at speedup 2; turn 3: 50 ms, then 100 / 2 ms
    assert times == pytest.approx([100.0, 100.2, 100.3])
    assert [f["intended_ns"] for f in fields] == [123, 0, 0]  # the arrival times turn 1 only
    assert [f["arrival_index"] for f in fields] == [4, 7, 9] and {f["session"] for f in fields} == {"s"}
    assert [f["keep_reply"] for f in fields] == [True, True, False]
    agents = [f["agent"] for f in fields]
    assert [a.waited_s for a in agents] == pytest.approx([0.0, 0.15, 0.0])  # a tool wait only before tool results
    assert agents[0].spec is not None and agents[0].spec.tools == TOOLS and agents[1].spec is None
    assert agents[1].results == (50, 40) and [a.last for a in agents] == [False, False, True]
    assert agents[2].session_start_ns == int(100.0 * 1e9) and agents[2].session_tokens == (20 + 4) + (20 + 4 + 90 + 4)


def test_a_failed_turn_ends_the_session_and_on_end_runs_once_however_it_ends(monkeypatch):
    clock, ended = Clock(monkeypatch), []
    clock.fail_turn = 2
    session(on_end=lambda: ended.append(1)).run(clock.send, clock.think, intended_ns=0)
    assert [f["turn"] for _, f in clock.sent] == [1, 2] and ended == [1]

    def stopped(seconds: float) -> None:  # the test's end while the session waits for its tool
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        session(on_end=lambda: ended.append(2)).run(clock.send, stopped, intended_ns=0)
    assert ended == [1, 2]


def test_a_conversation_without_tools_has_no_agent_turns(monkeypatch):
    convo = [TraceEntry(0.0, 10, 4, (), SessionTurn("c", 1, user_tokens=10)),
             TraceEntry(50.0, 30, 4, (), SessionTurn("c", 2, wait_ms=20.0, user_tokens=16))]  # fmt: skip
    clock = Clock(monkeypatch)
    ReplaySession(convo, (0, 1), random.Random(1), "trace").run(clock.send, clock.think, intended_ns=0)
    assert [f["agent"] for _, f in clock.sent] == [None, None]
    assert [t for t, _ in clock.sent] == pytest.approx([100.0, 100.07])
