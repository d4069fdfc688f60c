"""A fan-out run by a user: child sessions in greenlets of their own, all in flight at once, through the user's
``send``; their answers join the parent's next turn; faults and stops end children, never the parent."""

from __future__ import annotations

import logging
import random
from types import SimpleNamespace

import gevent
import pytest
from gevent.event import Event
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_RUNNING, LOCUST_STATE_STOPPING

from llmload.metrics.record import RequestRecord
from llmload.users import sub_agents
from llmload.users.backoff_wait import Backoff, BackoffSpec
from llmload.users.llm_user import LLMUser
from llmload.users.sub_agents import fan_out
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.agent import AgentSession, ToolCall

TOOLS = [{"name": "search", "parameters": {"type": "object"}}]


def agent(**fan):
    return {"name": "agent", "weight": 1, "input_tokens": 5, "output_tokens": 3, "turns": 3, "tools": TOOLS,
            "tool_calls": {"result_tokens": 7}, "fanout": {"every": 1, "agents": 3, "turns": 2, **fan}}  # fmt: skip


class Clock:
    """``perf_counter`` for the module under test: moves only when a request is sent (1 s per request)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeUser:
    """The user's side of a fan-out: ``send`` scripted per session by ``answer(session_id, turn)``:
    "tool" (one call), "text", "error", "boom" (raises), or a callable run first (then "text")."""

    def __init__(self, answer, clock: Clock, barrier: int = 0) -> None:
        self._state = LOCUST_STATE_RUNNING
        self._session_id = "4.1"
        self.answer, self.clock = answer, clock
        self.records: list[RequestRecord] = []
        self.in_flight = self.peak = 0
        self._barrier, self._all_in = barrier, Event()

    def send(self, sample, *, turn=0, keep_reply=False, session="", agent=None):
        rec = RequestRecord(sample.class_name, sample.input_tokens, sample.max_tokens)
        rec.turn, rec.session, rec.agent, rec.outcome = turn, session, agent, "ok"
        rec.start_ns = int(self.clock.now * 1e9)
        self.records.append(rec)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.peak >= self._barrier:
                self._all_in.set()
            assert self._all_in.wait(timeout=5), "the children did not run at the same time"
            what = self.answer(session, turn)
            if callable(what):
                what()
                what = "text"
            if what == "boom":
                raise KeyError("adapter bug")
            gevent.sleep(0)
        finally:
            self.in_flight -= 1
        self.clock.now += 1.0
        rec.output_tokens = 3
        if what == "error":
            rec.outcome, rec.error_kind = "error", "http_5xx"
        elif what == "tool":
            agent.calls = (ToolCall(f"c{len(self.records)}", "search", "{}"),)
            rec.reply_text = ""
        else:
            rec.reply_text = f"answer of {session}"
        return rec


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(sub_agents, "perf_counter", c)
    return c


def parent(**fan) -> AgentSession:
    s = WorkloadSampler(profile_from_dict({"classes": [agent(**fan)]}), seed=3, user_index=4).start_session()
    s.next_turn()
    return s


def test_the_children_are_all_in_flight_at_once_and_their_answers_are_the_parents_next_tool_results(clock):
    user = FakeUser(lambda sid, turn: "tool" if turn == 1 else "text", clock, barrier=3)
    session = parent()
    sample, tool_s = fan_out(user, session, ("", 3, None))
    assert user.peak == 3  # the barrier let no child through before all three were in a request
    kids = [r for r in user.records if r.agent.child]
    assert len(kids) == 6 and {r.session for r in kids} == {"4.1.f1.1", "4.1.f1.2", "4.1.f1.3"}
    assert [r.turn for r in kids] == [1, 1, 1, 2, 2, 2]
    results = sample.messages[-3:]
    assert [m["content"] for m in results] == [f"answer of 4.1.f1.{i}" for i in (1, 2, 3)]
    assert sample.turn == 2 and tool_s == 0.0
    assert sample.input_tokens == 5 + 3 + 3 * 3  # turn 1's prompt, its answer, the three children's answers
    t = session.agent_turn(tool_s)
    assert t.children == 3 and t.fanout_s == 6.0  # six child requests sent while the parent waited


def test_a_child_ends_at_its_first_text_answer(clock):
    user = FakeUser(lambda sid, turn: "text", clock)
    fan_out(user, parent(), ("", 3, None))
    assert [r.turn for r in user.records] == [1, 1, 1]


def test_a_failed_child_and_a_child_that_hits_a_bug_give_error_results_and_the_parent_goes_on(clock, caplog):
    script = {"4.1.f1.1": "error", "4.1.f1.2": "boom"}
    user = FakeUser(lambda sid, turn: script.get(sid, "text"), clock)
    with caplog.at_level(logging.ERROR, logger="llmload.users.sub_agents"):
        sample, _ = fan_out(user, parent(), ("", 3, None))
    assert [m["content"] for m in sample.messages[-3:]] == [
        "error: sub-agent failed (http_5xx)",
        "error: sub-agent failed (client_error)",
        "answer of 4.1.f1.3",
    ]
    assert "sub-agent session 4.1.f1.2 failed" in caplog.text and "KeyError" in caplog.text


def test_the_parents_own_tool_calls_run_beside_its_children(clock, monkeypatch):
    naps: list[float] = []
    real_sleep = gevent.sleep

    def sleep(s=0):
        naps.append(s)
        real_sleep(0)

    monkeypatch.setattr(sub_agents.gevent, "sleep", sleep)
    session = parent(agents=1)
    sample, tool_s = fan_out(
        FakeUser(lambda sid, turn: "text", clock), session, ("", 3, (ToolCall("p1", "search", "{}"),))
    )
    assert naps[0] == 0.0  # the tool latency (0 in this class), slept while the child had started
    assert [m["tool_call_id"] for m in sample.messages[-2:]] == ["p1", "call_2_d1"]


def test_a_graceful_stop_lets_the_childrens_requests_finish_starts_no_new_turn_and_stops_the_user(clock):
    user = FakeUser(None, clock, barrier=3)

    def answer(sid, turn):
        user._state = LOCUST_STATE_STOPPING  # the runner's graceful stop, while the first child request runs
        return "tool"

    user.answer = answer
    with pytest.raises(StopUser):
        fan_out(user, parent(), ("", 3, None))
    assert [r.turn for r in user.records] == [1, 1, 1]  # the requests in flight finished; no turn 2


def test_killing_the_parent_kills_its_children_at_once(clock):
    started = Event()
    release = Event()
    killed: list[str] = []
    user = FakeUser(None, clock)

    def answer(sid, turn):
        def hang():
            started.set()
            try:
                release.wait()
            except gevent.GreenletExit:
                killed.append(sid)
                raise

        return hang

    user.answer = answer
    g = gevent.spawn(fan_out, user, parent(), ("", 3, None))
    assert started.wait(timeout=5)
    g.kill(block=True, timeout=5)
    assert g.dead and sorted(killed) == ["4.1.f1.1", "4.1.f1.2", "4.1.f1.3"]


def test_the_user_runs_the_fanout_between_its_turns(clock, monkeypatch):
    """LLMUser.generate: after turn 1 (every = 1) the children run, then turn 2 carries their answers."""
    user = LLMUser.__new__(LLMUser)
    user._sampler = WorkloadSampler(profile_from_dict({"classes": [agent(agents=2)]}), seed=1, user_index=0)
    user._session = user._reply = None
    user._state = LOCUST_STATE_RUNNING
    user._backoff = Backoff(BackoffSpec(None, None), random.Random(0))
    user._context = SimpleNamespace(error_backoff=BackoffSpec(None, None), open_loop=False)
    fake = FakeUser(lambda sid, turn: "text", clock)
    user.send = fake.send  # type: ignore[method-assign]
    user.generate()
    user.generate()
    parents = [r for r in fake.records if not r.agent.child]
    assert [r.turn for r in parents] == [1, 2] and parents[1].agent.children == 2
    assert [r.session for r in fake.records] == ["0.1", "0.1.f1.1", "0.1.f1.2", "0.1"]
