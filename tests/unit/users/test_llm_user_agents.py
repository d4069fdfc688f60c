"""LLMUser.generate over agent sessions: after a tool-call answer the user waits the tool latency holding its
slot, then sends the calls and their results; a text answer is a normal turn; the records carry the session tally."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from locust.user.task import LOCUST_STATE_RUNNING

from llmload.adapters.base import StreamState
from llmload.metrics.record import RequestRecord
from llmload.users import llm_user
from llmload.users.backoff_wait import Backoff, BackoffSpec
from llmload.users.llm_user import LLMUser, _settle
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.agent import AgentTurn, ToolCall

TOOLS = [{"name": "search", "parameters": {"type": "object"}}]
AGENT = {"name": "agent", "weight": 1, "input_tokens": 5, "output_tokens": [3, 4], "turns": 4, "think_time_s": 9.0,
         "tools": TOOLS, "tool_calls": {"result_tokens": 7, "latency_s": 2.0}}  # fmt: skip


def make_user(answers: list[str]) -> tuple[LLMUser, list]:
    """A user without Locust: its sampler real, ``send`` scripted: "tool" answers with one call, "text" with text."""
    user = LLMUser.__new__(LLMUser)
    user._sampler = WorkloadSampler(profile_from_dict({"classes": [AGENT]}), seed=1, user_index=0)
    user._session = user._reply = None
    user._state = LOCUST_STATE_RUNNING
    user._backoff = Backoff(BackoffSpec(None, None), random.Random(0))
    user._context = SimpleNamespace(error_backoff=BackoffSpec(None, None), open_loop=False)
    sent: list = []
    script = iter(answers)
    clock = iter(range(1000, 10**9, 1000))

    def send(sample, *, turn=0, keep_reply=False, session="", agent=None):
        rec = RequestRecord(sample.class_name, sample.input_tokens, sample.max_tokens)
        rec.outcome, rec.turn, rec.session, rec.output_tokens, rec.agent = "ok", turn, session, 3, agent
        rec.start_ns = next(clock)
        if next(script) == "tool":
            agent.calls = (ToolCall(f"c{len(sent)}", "search", "{}"),)
            rec.reply_text = ""
        else:
            rec.reply_text = f" reply{len(sent)}"
        sent.append((sample, rec))
        return rec

    user.send = send  # type: ignore[method-assign]
    return user, sent


@pytest.fixture
def slept(monkeypatch):
    naps: list[float] = []
    monkeypatch.setattr(llm_user.gevent, "sleep", naps.append)
    return naps


def test_a_tool_answer_waits_the_tool_latency_then_sends_its_result_and_a_text_answer_thinks(slept):
    user, sent = make_user(["tool", "text", "tool", "text", "text"])
    for _ in range(5):
        user.generate()
    samples = [s for s, _ in sent]
    assert [s.turn for s in samples] == [1, 2, 3, 4, 1]
    assert slept == [2.0, 9.0, 2.0]  # tool latency after a tool answer, think time after a text one
    assert all(s.tools is not None for s in samples)
    assert samples[1].messages[-1]["role"] == "tool" and samples[1].messages[-1]["tool_call_id"] == "c0"
    assert samples[1].input_tokens == samples[0].input_tokens + 3 + 7  # the call's tokens and its result
    assert samples[2].messages[-1]["role"] == "user"  # after a text answer: a new user message
    assert [s.max_tokens for s in samples] == [3, 4, 4, 4, 3]  # the per-turn lengths, the last repeating


def test_the_records_carry_the_session_tally_and_the_tool_wait(slept):
    user, sent = make_user(["tool", "text", "text", "text"])
    for _ in range(4):
        user.generate()
    agents = [rec.agent for _, rec in sent]
    assert all(isinstance(a, AgentTurn) for a in agents)
    assert [a.session_start_ns for a in agents] == [0, 1000, 1000, 1000]
    assert [a.last for a in agents] == [False, False, False, True]
    assert agents[1].waited_s >= 0 and agents[0].waited_s == 0 and agents[2].waited_s == 0
    first, second = sent[0][1], sent[1][1]
    assert agents[2].session_tokens == first.input_tokens + 3 + second.input_tokens + 3


def test_settle_puts_the_streamed_tool_calls_on_an_agent_record_only():
    state = StreamState()
    state.tool_calls = [["c1", "search", '{"q": 1}']]
    rec = RequestRecord("a", 1, 1)
    rec.agent = AgentTurn()
    _settle(rec, state, False)
    assert rec.agent.calls == (ToolCall("c1", "search", '{"q": 1}'),)
    plain = RequestRecord("a", 1, 1)
    _settle(plain, state, False)
    assert plain.agent is None
