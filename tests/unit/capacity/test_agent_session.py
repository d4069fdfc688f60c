"""predict's agent classes: tool-call answers as the simulator draws them, tool waits, results, sub-agents.

The main check runs the same closed-loop agent workload two ways on the simulator's engine model (a
preset's parameters) on a virtual clock: predict's drive (:mod:`llmload.capacity.agent_session`), and
what a live ``llmload run`` against ``llmload sim`` does, piece by piece: each user's own
:class:`~llmload.workload.agent.AgentSession` (chat messages with tools, tool results, the tool waits and
think times slept), each request parsed by the simulator's own parser and answered with tool calls by its
own :func:`~llmload.sim.tools.tool_request` (``--tool-call-share``, its seeded RNG).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import replace

import orjson
import pytest

from llmload.capacity.agent_session import AgentTokens, ToolAnswers, new_session
from llmload.capacity.drive import StepSpec, Workload, drive
from llmload.capacity.session_replay import Requests
from llmload.capacity.workload_args import class_spec
from llmload.sim.api import BaseEncoder, parse_request
from llmload.sim.batching import BatchingEngine
from llmload.sim.presets import preset_params
from llmload.sim.tools import tool_request
from llmload.sim.virtual import VirtualLoop
from llmload.workload.agent import ToolCall
from llmload.workload.conversation import user_message
from llmload.workload.fanout import ChildAnswer, Delegation
from llmload.workload.profiles import profile_from_dict
from llmload.workload.sampler import WorkloadSampler

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
         {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]  # fmt: skip
AGENT = {"name": "agent", "weight": 1, "turns": 6, "input_tokens": {"dist": "uniform", "min": 100, "max": 300},
         "output_tokens": [40, 40, {"dist": "uniform", "min": 20, "max": 80}, 120], "tools": TOOLS,
         "tool_calls": {"per_turn": 1, "result_tokens": {"dist": "uniform", "min": 100, "max": 500},
                        "latency_s": {"dist": "exponential", "mean": 1.0, "max": 5}},
         "think_time_s": {"dist": "exponential", "mean": 0.5, "max": 3}}  # fmt: skip


def _spec(**extra):
    profile = profile_from_dict({"name": "a", "classes": [{**AGENT, **extra}]})
    return profile, class_spec(profile.classes[0], "a")


def _p50(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def test_tool_answers_draw_as_the_simulator_and_call_one_tool_or_all():
    _, spec = _spec()
    ours = ToolAnswers(0.75, 0)
    got = [ours.decide(spec.agent, 50) for _ in range(4000)]
    assert sum(bool(c) for c in got) / 4000 == pytest.approx(0.75, abs=0.03)
    assert {c for c in got if c} == {("search",), ("lookup",)}  # parallel_tool_calls false: one, drawn
    _, par = _spec(tool_calls={"per_turn": 2})
    assert {ToolAnswers(1.0, 0).decide(par.agent, 50) for _ in range(10)} == {("search", "lookup")}
    assert ToolAnswers(1.0, 0).decide(par.agent, 1) == ("search",)  # never more calls than the answer has tokens
    assert not any(ToolAnswers(0.0, 0).decide(spec.agent, 50) for _ in range(100))
    # the simulator's own rule, with the same share: the same expected share of tool turns
    rng, body = random.Random(0), orjson.dumps({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS,
                                                "parallel_tool_calls": False, "max_tokens": 50})  # fmt: skip
    sim = [getattr(tool_request(parse_request("chat", body, "m", 16), body, 0.75, rng), "calls", ()) for _ in range(4000)]
    assert sum(bool(c) for c in sim) / 4000 == pytest.approx(sum(bool(c) for c in got) / 4000, abs=0.04)


def test_after_tool_calls_the_next_turn_carries_the_results_and_no_user_message():
    _, spec = _spec(input_tokens=100, tool_calls={"per_turn": 1, "result_tokens": 300})
    s = AgentTokens(Requests([spec], random.Random(0)), 0)
    t1 = s.next_turn()
    assert (t1.prompt, t1.max_tokens, t1.turn) == (100, 40, 1)
    s.reply, s.calls = 40, 2
    t2 = s.next_turn()
    assert (t2.prompt, t2.max_tokens, s.results) == (100 + 40 + 600, 40, (300, 300))
    s.reply, s.calls = 40, 0
    t3 = s.next_turn()
    assert t3.prompt == 740 + 40 + 100 and s.results == () and 20 <= t3.max_tokens <= 80
    s.reply = t3.max_tokens
    assert s.next_turn().max_tokens == 120 and list(t3.tokens[:740]) == list(t2.tokens)  # the history


def _live_way(params, profile, users, run_s, share, seed=0):
    """The agent workload as llmload run against llmload sim sends it, on a virtual clock (a fan-out as
    llmload.users.sub_agents runs it: the children beside the parent's own tools, the next turn after them all)."""
    loop, sim_rng = VirtualLoop(), random.Random(seed)
    engine = BatchingEngine(params, loop)  # type: ignore[arg-type]
    out, state = [], {}

    class Sink:
        def __init__(self, rec, on_end):
            self.rec, self.on_end = rec, on_end

        def emit(self, n, finished):
            self.rec["times"] += [loop.time()] * n
            if finished:
                self.on_end(self.rec)

        def fail(self, message):
            raise AssertionError(message)

    def submit(uid, sample, on_end, child=False):
        messages = list(sample.messages) if sample.messages else [user_message(sample.prompt, sample.images)]
        body = orjson.dumps({"messages": messages, "max_tokens": sample.max_tokens, "tools": list(sample.tools),
                             "parallel_tool_calls": sample.parallel_tool_calls,
                             **({"tool_choice": sample.tool_choice} if sample.tool_choice else {})})  # fmt: skip
        req = tool_request(parse_request("chat", body, "m", 16), body, share, sim_rng)
        rec = {"uid": uid, "t": loop.time(), "times": [], "req": req, "calls": getattr(req, "calls", ()),
               "turn": sample.turn, "context": sample.input_tokens, "child": child}  # fmt: skip
        engine.submit(Sink(rec, on_end), req.max_tokens, req.prompt_tokens, req.tokens)
        out.append(rec)

    def reply_of(rec):
        n, calls = len(rec["times"]), tuple(ToolCall(f"c{i}", c, "{}") for i, c in enumerate(rec["calls"]))
        return ("" if calls else BaseEncoder(rec["req"], rec["uid"]).text(n), n, calls or None)

    def turn(uid):
        if loop.time() >= run_s:
            return
        sampler, session, reply = state[uid]
        if session is None or session.done:
            session, reply = sampler.start_session(), None
        state[uid] = (sampler, session, None)
        submit(uid, session.next_turn() if reply is None else session.next_turn(*reply), lambda rec: ended(uid, rec))

    def ended(uid, rec):
        sampler, session, _ = state[uid]
        reply = reply_of(rec)
        state[uid] = (sampler, session, reply)
        if session.done:
            loop.call_soon(turn, uid)
        elif session.fanout_due:
            fan_out(uid, session, reply)
        else:
            loop.call_later(session.tool_wait_s(reply[2]) if reply[2] else session.think_time_s, turn, uid)

    def fan_out(uid, session, reply):
        kids, t0 = session.children(), loop.time()
        own, answers = session.tool_wait_s(reply[2]) if reply[2] else 0.0, [None] * session._spec.fanout.agents

        def kid_turn(i, kid, r):
            submit(uid, kid.next_turn() if r is None else kid.next_turn(*r), lambda rec: kid_ended(i, kid, rec), True)

        def kid_ended(i, kid, rec):
            r = reply_of(rec)
            if r[2] and not kid.done:
                loop.call_later(kid.tool_wait_s(r[2]), kid_turn, i, kid, r)
                return
            answers[i] = ChildAnswer(r[0], r[1] if r[0] else 0)
            if all(x is not None for x in answers):
                loop.call_at(max(t0 + own, loop.time()), resume)

        def resume():
            sample = session.next_turn(*reply, delegated=Delegation(tuple(answers), loop.time() - t0))
            state[uid] = (state[uid][0], session, None)
            submit(uid, sample, lambda rec: ended(uid, rec))

        for i, kid in enumerate(kids):
            kid_turn(i, kid, None)

    for uid in range(users):
        state[uid] = (WorkloadSampler(profile, seed, uid), None, None)
        loop.call_soon(turn, uid)
    loop.run(run_s + 600)
    return out


@pytest.mark.parametrize("fanout", [None, {"every": 2, "agents": 3, "turns": 3, "output_tokens": 30}])
def test_predict_of_an_agent_workload_agrees_with_the_live_code_path_on_the_same_engine(fanout):
    params = preset_params("batch-starved")  # 4 slots for 8 users: it queues
    profile, spec = _spec(**({"fanout": fanout} if fanout else {}))
    ours = [s for s in drive(params, Workload((spec,), (StepSpec(8, 600.0, 0.0),), tool_call_share=0.6), drain_s=600)
            if s.done and len(s.times) > 1]  # fmt: skip
    theirs = [r for r in _live_way(params, profile, 8, 600.0, 0.6) if len(r["times"]) > 1]
    assert len(ours) == pytest.approx(len(theirs), rel=0.1)
    assert sum(bool(s.calls) for s in ours) / len(ours) == pytest.approx(
        sum(bool(r["calls"]) for r in theirs) / len(theirs), abs=0.04)  # fmt: skip
    for child in (False, True) if fanout else (False,):  # a child's turns are its own, numbered from 1
        assert sum(s.agent.child == child for s in ours) == pytest.approx(sum(r["child"] == child for r in theirs),
                                                                          rel=0.1)  # fmt: skip
        for k in range(1, 7 if not child else 4):  # per turn: the context the client sends (history, answers, results)
            a = [s.prompt for s in ours if s.turn == k and s.agent.child == child]
            b = [r["context"] for r in theirs if r["turn"] == k and r["child"] == child]
            # two independent samples (~50 sessions each: turn 1's prompt has sd ~55 tokens): within 3 standard
            # errors of their difference, not a fixed 5 % (about one standard error at these counts)
            assert abs(statistics.fmean(a) - statistics.fmean(b)) <= 3 * math.sqrt(
                statistics.pvariance(a) / len(a) + statistics.pvariance(b) / len(b)), (child, k)  # fmt: skip
    got = (_p50(s.times[0] - s.t for s in ours), _p50((s.times[-1] - s.times[0]) / (len(s.times) - 1) for s in ours))
    want = (_p50(r["times"][0] - r["t"] for r in theirs),
            _p50((r["times"][-1] - r["times"][0]) / (len(r["times"]) - 1) for r in theirs))  # fmt: skip
    assert got == pytest.approx(want, rel=0.1)


def test_a_fan_out_runs_its_children_in_parallel_and_their_answers_grow_the_parent_s_context():
    _, spec = _spec(turns=4, input_tokens=100, output_tokens=50, think_time_s=0.0,
                    tool_calls={"per_turn": 1, "result_tokens": 300, "latency_s": 2.0},
                    fanout={"every": 2, "agents": 3, "turns": 2, "output_tokens": 30})  # fmt: skip
    sent = drive(preset_params(), Workload((spec,), (StepSpec(1, 120.0, 0.0),), tool_call_share=0.5), drain_s=600)
    parent = [s for s in sent if s.session == "0.1"]
    kids = [s for s in sent if s.session.startswith("0.1.f1.")]
    assert [s.turn for s in parent] == [1, 2, 3, 4] and {s.session for s in kids} == {"0.1.f1.1", "0.1.f1.2", "0.1.f1.3"}
    assert all(s.agent.child and s.max_tokens == 30 and s.prompt >= 100 for s in kids)
    assert {s.t for s in kids if s.turn == 1} == {parent[1].times[-1]}  # all three start when turn 2 ends
    last_kid = max(s.times[-1] for s in kids)
    own = 2.0 if parent[1].calls else 0.0
    assert parent[2].t == pytest.approx(max(last_kid, parent[1].times[-1] + own))  # after the children (and its tools)
    answers = [0 if s.calls else len(s.times) for s in kids if s.agent.last or not s.calls]
    t3 = parent[2].agent
    assert t3.children == 3 and t3.fanout_s == pytest.approx(parent[2].t - parent[1].times[-1])
    assert parent[2].prompt == parent[1].prompt + 50 + sum(t3.results) and sum(t3.results) >= sum(answers) - 1e-9
    assert len(t3.results) == len(parent[1].calls) + 3  # its own calls' results, then one per child
    for s in kids:  # a child turn after tool calls waits the tool latency
        if s.turn == 2:
            first = next(k for k in kids if k.session == s.session and k.turn == 1)
            assert first.calls and s.t == pytest.approx(first.times[-1] + 2.0) and s.agent.waited_s == 2.0


def test_new_session_makes_agent_sessions_for_agent_classes_only():
    _, spec = _spec()
    src = Requests([spec, replace(spec, name="plain", agent=None)], random.Random(0))
    kinds = {type(new_session(src)).__name__ for _ in range(4)}
    assert kinds == {"AgentTokens", "Session"}


def test_longest_counts_an_agent_s_tool_results_and_per_turn_lengths_and_no_tools_is_a_text_answer():
    from llmload.capacity.session_replay import longest

    _, spec = _spec(input_tokens=100, tool_calls={"per_turn": 2, "result_tokens": 300})
    assert longest(spec, "output") == 120  # the per-turn list's longest
    assert longest(spec, "input") == 6 * 100 + 5 * 120 + 5 * 2 * 300  # every earlier turn: 2 results of 300
    bare = replace(spec.agent, tools=())
    assert ToolAnswers(1.0, 0).decide(bare, 50) == ()


def test_plan_takes_the_tool_call_share_and_answers_for_an_agent_profile(tmp_path, capsys):
    from llmload.capacity.engine_file import write_engine
    from llmload.capacity.plan_command import plan_main

    profile = tmp_path / "a.json"
    profile.write_bytes(orjson.dumps({"classes": [{**AGENT, "fanout": {"every": 2, "agents": 2}}]}))
    engine = tmp_path / "engine.toml"
    write_engine(engine, preset_params("batch-starved"), [], [], {})
    argv = ["--engine", str(engine), "--profile", str(profile), "-u", "8", "-t", "60s", "--slo", "ttft_ms=2000"]
    assert plan_main([*argv, "--tool-call-share", "0.5"]) == 0
    assert "replica" in capsys.readouterr().out
    assert plan_main([*argv, "--tool-call-share", "2"]) == 2
    assert "--tool-call-share 2" in capsys.readouterr().err
