"""Agent sessions against the simulator: tool turns, tool waits that hold the user's slot, the context growing by
the tool results, and the agent figures in the summary.

Real LLMUsers in this process (:func:`~tests.helpers.harness.run_inprocess`) against ``python -m llmload.sim``
(fixed latency: 20 ms TTFT, 2 ms per token; 3 of 4 answers to a request with tools are tool calls) for 3 s:
4 users, an agent class of 4 turns per session with a 0.3 s tool latency and 50-token tool results, once per
API shape (chat ``role: tool``, Responses ``function_call_output``, Messages ``tool_result``).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from tests.helpers.harness import run_inprocess

pytestmark = pytest.mark.integration

USERS = 4
RESULT, INPUT = 50, 20
PROFILE = f"""
[[classes]]
name = "agent"
weight = 1
turns = 4
input_tokens = {INPUT}
output_tokens = [8, 8, 8, 16]
tools = [{{type = "function", function = {{name = "search", parameters = {{type = "object"}}}}}}]
tool_calls = {{per_turn = 1, result_tokens = {RESULT}, latency_s = 0.3}}
"""


#: The APIs, and the finish reason of an answer made of tool calls (Responses: the response's status).
APIS = {"openai-chat": "tool_calls", "openai-responses": "completed", "anthropic-messages": "tool_use"}


@pytest.mark.parametrize("api", list(APIS))
def test_agent_sessions_wait_for_their_tools_holding_their_slot_and_grow_by_the_results(sim, tmp_path: Path, api):
    url = sim("--ttft-ms", "20", "--itl-ms", "2", "--tool-call-share", "0.75")
    profile = tmp_path / "agent.toml"
    profile.write_text(PROFILE)
    records = []
    summary = run_inprocess(url, ["--profile", str(profile), "--seed", "5", "--api", api], users=USERS, seconds=3.0,
                            on_record=records.append)  # fmt: skip
    ok = [r for r in records if r.outcome == "ok"]
    assert ok and all(r.agent is not None for r in ok)
    tool_turns = [r for r in ok if r.agent.calls]
    assert len(tool_turns) >= 8 and len(ok) - len(tool_turns) >= 3  # both kinds of answers came
    assert all(r.finish_reason == APIS[api] and r.agent.calls[0].name == "search" for r in tool_turns)

    by_session = defaultdict(list)
    for r in ok:
        by_session[r.session].append(r)
    grew = 0
    for turns in by_session.values():
        turns.sort(key=lambda r: r.turn)
        for prev, nxt in zip(turns, turns[1:], strict=False):
            if nxt.turn != prev.turn + 1:
                continue
            if prev.agent.calls:  # the next turn sends the call and its result: the context grows by the result
                assert nxt.input_tokens == prev.input_tokens + RESULT, (prev.input_tokens, nxt.input_tokens)
                assert nxt.agent.waited_s >= 0.29 and nxt.start_ns - prev.end_ns >= 0.29e9  # the tool ran
                grew += 1
            else:  # a text answer: its reply and a new user message
                assert nxt.input_tokens == prev.input_tokens + prev.output_tokens + INPUT
    assert grew >= 4

    # the slot is held during tool waits: sessions in flight (first start .. last end) never exceed the users,
    # and with every user in a session most of the time, reach them
    spans = [(min(r.start_ns for r in t), max(r.end_ns for r in t)) for t in by_session.values()]
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    level = peak = 0
    for _, d in edges:
        level += d
        peak = max(peak, level)
    assert peak == USERS
    users_of = {s.split(".")[0] for s in by_session}
    assert len(users_of) == USERS

    agent = summary["classes"]["agent"]["agent"]
    assert agent["tool_turn"]["ok"] >= 8 and agent["answer_turn"]["ok"] >= 3
    assert agent["tool_turn"]["ttft_ms"]["p50"] >= 15 and agent["answer_turn"]["e2e_ms"]["count"] >= 3
    assert agent["tool_wait_ms"]["p50"] == pytest.approx(300, abs=60)
    sessions = agent["sessions"]
    assert sessions["sessions"] >= USERS and sessions["turns_mean"] == 4
    assert sessions["duration_ms"]["p50"] >= 300 and sessions["tokens_mean"] > 4 * INPUT


@pytest.mark.llamacpp
@pytest.mark.parametrize("api", ["openai-chat", "openai-responses"])
def test_llama_server_takes_the_tools_and_answers_in_text(tmp_path: Path, api):
    """llama-server (b11434, the random-weight test GGUF, with or without ``--jinja``) accepts the tools (and, sent by
    hand, a history with tool calls and results) but never calls one: every turn is an answer turn."""
    from tests.engines.crosscheck import run_llmload
    from tests.engines.llama_server import llama_server, missing_reason
    from tests.engines.make_gguf import ensure_model

    if missing_reason() is not None:
        pytest.skip(str(missing_reason()))
    profile = tmp_path / "agent.toml"
    profile.write_text(PROFILE.replace("[8, 8, 8, 16]", "8"))
    with llama_server(ensure_model("tiny"), alias="tiny", log_dir=tmp_path) as srv:
        s, records, _ = run_llmload(srv.url, tmp_path, "--api", api, "-u", "2", "-r", "2", "-t", "3s", "--profile", str(profile))
    agent = s["classes"]["agent"]
    assert agent["errors"] == 0 and agent["ok"] >= 4, agent
    assert "tool_turn" not in agent["agent"] and agent["agent"]["answer_turn"]["ok"] == agent["ok"]
    assert {r["turn"] for r in records if r["outcome"] == "ok"} >= {1, 2}


FANOUT_USERS, EVERY = 2, 1
FANOUT_PROFILE = PROFILE.replace("turns = 4", "turns = 3") + "fanout = {every = 1, agents = 2, turns = 2}\n"


def test_sub_agents_run_in_parallel_beside_their_waiting_parent_and_their_answers_join_its_context(sim, tmp_path: Path):
    """``fanout = {every = 1, agents = 2, turns = 2}``: after turns 1 and 2 of each 3-turn session, two child
    sessions at once; 2 users for 2.5 s. The context the server counted (``usage.prompt_tokens``, the simulator's
    word count) grows by the children's final answers."""
    url = sim("--ttft-ms", "20", "--itl-ms", "2", "--tool-call-share", "0.75")
    profile = tmp_path / "fanout.toml"
    profile.write_text(FANOUT_PROFILE)
    records = []
    summary = run_inprocess(url, ["--profile", str(profile), "--seed", "5"], users=FANOUT_USERS, seconds=2.5,
                            on_record=records.append)  # fmt: skip
    ok = [r for r in records if r.outcome == "ok"]
    assert ok and len(ok) == len([r for r in records if r.outcome != "interrupted"])
    by_session = defaultdict(list)
    for r in ok:
        by_session[r.session].append(r)
    children = {s: t for s, t in by_session.items() if ".f" in s}
    assert len(children) >= 4 and all(r.agent.child for t in children.values() for r in t)

    # sessions and requests in flight exceed the users while children run: the parent holds its slot meanwhile
    def peak(spans):
        level = top = 0
        for _, d in sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans]):
            level += d
            top = max(top, level)
        return top

    assert peak([(min(r.start_ns for r in t), max(r.end_ns for r in t)) for t in by_session.values()]) > FANOUT_USERS
    assert peak([(r.start_ns, r.end_ns) for r in ok]) > FANOUT_USERS

    joined = 0
    for sid, turns in by_session.items():
        if sid in children:
            continue
        turns.sort(key=lambda r: r.turn)
        for prev, nxt in zip(turns, turns[1:], strict=False):
            kids = [sorted(t, key=lambda r: r.turn) for s, t in children.items() if s.startswith(f"{sid}.f{prev.turn // EVERY}.")]
            if nxt.turn != prev.turn + 1 or len(kids) != 2 or any(not t[-1].agent.last and t[-1].agent.calls for t in kids):
                continue  # a child cut by the end of the test
            assert nxt.agent.children == 2 and nxt.start_ns >= max(t[-1].end_ns for t in kids)  # waited for both
            answers = sum(t[-1].output_tokens for t in kids if not t[-1].agent.calls)  # a final text answer each
            own = RESULT * len(prev.agent.calls) if prev.agent.calls else prev.output_tokens
            assert nxt.input_tokens == prev.input_tokens + own + answers, (prev.input_tokens, own, answers, nxt.input_tokens)
            joined += 1
    assert joined >= 2

    agent = summary["classes"]["agent"]["agent"]
    fan = agent["fanout"]
    assert fan["fanouts"] >= joined and fan["children_started"] >= len(children) and fan["children_failed"] == 0
    assert fan["child_requests"] == len([r for r in records if r.agent.child])  # any outcome (cut ones too)
    assert fan["wait_ms"]["p50"] >= 20 and fan["wait_ms"]["p90"] >= fan["wait_ms"]["p50"]
    assert agent["child_turn"]["ok"] == sum(len(t) for t in children.values())
    parents = agent["tool_turn"]["ok"] + agent["answer_turn"]["ok"]
    assert parents == len([r for r in ok if not r.agent.child]) and agent["sessions"]["turns_mean"] == 3
