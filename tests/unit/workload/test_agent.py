"""Agent classes: the profile's tools and tool_calls, and sessions whose tool turns send the results back."""

from __future__ import annotations

import pytest

from llmload.errors import ProfileError
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.agent import AgentSession, ToolCall
from llmload.workload.fanout import ChildAnswer, Delegation

TOOLS = [{"type": "function", "function": {"name": "search", "description": "find", "parameters": {"type": "object"}}}]


def agent_class(**extra):
    c = {"name": "agent", "weight": 1, "input_tokens": 40, "output_tokens": [15, 15, 100], "turns": 4, "tools": TOOLS,
         "tool_calls": {"per_turn": 1, "result_tokens": 30, "latency_s": {"dist": "uniform", "min": 1, "max": 2}}}  # fmt: skip
    c.update(extra)
    return {k: v for k, v in c.items() if v is not None}


def session(**extra) -> AgentSession:
    s = WorkloadSampler(profile_from_dict({"classes": [agent_class(**extra)]}), 7, 0).start_session()
    assert isinstance(s, AgentSession)
    return s


def test_an_agent_class_reads_back_from_its_own_dict():
    p = profile_from_dict({"classes": [agent_class()]})
    spec = p.classes[0].agent
    assert spec is not None and spec.per_turn == 1 and spec.tools == tuple(TOOLS)
    assert [o.mean for o in spec.output_tokens] == [15, 15, 100]
    assert p.classes[0].output_tokens.mean == 15  # the class's own length is the list's first
    back = profile_from_dict(p.to_dict()).classes[0]
    assert back.agent == spec


def test_the_short_tool_form_is_sent_in_openais_long_one():
    p = profile_from_dict({"classes": [agent_class(tools=[{"name": "calc", "parameters": {"type": "object"}}])]})
    assert p.classes[0].agent.tools == ({"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}},)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"tools": []}, "tools: expected a non-empty list"),
        ({"tools": [{"type": "web", "function": {"name": "x"}}]}, "tools[0].type"),
        ({"tools": [{"name": "a b"}]}, "tools[0].name"),
        ({"tools": [{"name": "a"}, {"name": "a"}]}, "tools[1].name: duplicate"),
        ({"tools": [{"name": "a", "parameters": 3}]}, "tools[0].parameters"),
        ({"tools": [{"name": "a", "colour": 3}]}, "tools[0].colour: unknown key"),
        ({"tool_calls": {"per_turn": 0}}, "tool_calls.per_turn"),
        ({"tool_calls": {"per_turn": True}}, "tool_calls.per_turn"),
        ({"tool_calls": {"result_tokens": 0}}, "tool_calls.result_tokens"),
        ({"tool_calls": {"latency_s": -1}}, "tool_calls.latency_s"),
        ({"tool_calls": {"wait": 1}}, "tool_calls.wait: unknown key"),
        ({"tool_calls": 3}, "tool_calls: expected a table"),
        ({"output_tokens": []}, "output_tokens: the per-turn list is empty"),
        ({"output_tokens": [10, 0]}, "output_tokens[1]"),
        ({"turns": None}, "tools: an agent class is a conversation"),
        ({"tools": None}, "tool_calls: needs tools"),
        ({"tools": None, "tool_calls": None}, "output_tokens: a per-turn list needs an agent class"),
    ],
)
def test_each_bad_value_gives_one_line_naming_its_field(extra, field):
    with pytest.raises(ProfileError) as e:
        profile_from_dict({"classes": [agent_class(**extra)]})
    assert f"classes[0].{field}" in str(e.value) and "\n" not in str(e.value)


def test_every_turn_carries_the_tools_and_its_own_output_length():
    s = session()
    first = s.next_turn()
    assert first.tools == tuple(TOOLS) and not first.parallel_tool_calls
    assert first.max_tokens == 15
    second = s.next_turn("a reply", 2)
    third = s.next_turn("another", 2)
    fourth = s.next_turn("more", 2)
    assert [second.max_tokens, third.max_tokens, fourth.max_tokens] == [15, 100, 100]  # the last entry repeats
    assert s.done


def test_a_tool_turn_sends_the_call_and_its_result_and_the_context_grows_by_it():
    s = session()
    first = s.next_turn()
    calls = (ToolCall("call_1", "search", '{"q": "x"}'),)
    second = s.next_turn("", 12, calls)
    assistant, tool = second.messages[-2:]
    assert assistant == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}]}  # fmt: skip
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1" and len(tool["content"].split()) == 30
    assert second.input_tokens == first.input_tokens + 12 + 30  # the call's tokens and its result's
    assert second.turn == 2 and second.tools == tuple(TOOLS)
    third = s.next_turn("text answer", 3)  # a text answer: a new user message follows
    assert third.messages[-2] == {"role": "assistant", "content": "text answer"} and third.messages[-1]["role"] == "user"


def test_parallel_calls_get_one_result_each_and_wait_for_the_slowest():
    s = session(tool_calls={"per_turn": 2, "result_tokens": 5, "latency_s": {"dist": "uniform", "min": 1, "max": 2}})
    assert s.next_turn().parallel_tool_calls
    calls = (ToolCall("a", "search", "{}"), ToolCall("", "search", "{}"))
    nxt = s.next_turn("", 4, calls)
    assert [m.get("tool_call_id") for m in nxt.messages[-2:]] == ["a", "call_2_1"]  # a call without an id gets one
    waits = [s.tool_wait_s(calls) for _ in range(20)]
    assert all(1 <= w <= 2 for w in waits) and sum(waits) / 20 > 1.5  # the max of two uniform draws


def test_the_session_tally_for_the_statistics():
    s = session()
    s.next_turn()
    t = s.agent_turn(0.0)
    assert (t.session_start_ns, t.session_tokens, t.last, t.calls) == (0, 0, False, None)
    s.took(1000, 40, 15)
    s.next_turn("r", 15)
    s.took(5000, 60, 15)
    assert s.agent_turn(1.5).session_start_ns == 1000 and s.tokens == 130


def test_a_turns_record_data_the_first_turns_spec_and_each_tool_results_tokens():
    s = session(tool_calls={"per_turn": 2, "result_tokens": {"dist": "uniform", "min": 5, "max": 9}})
    s.next_turn()
    first = s.agent_turn(0.0)
    assert first.spec is not None and first.spec.tools == tuple(TOOLS) and first.results == ()
    nxt = s.next_turn("", 4, (ToolCall("a", "search", "{}"), ToolCall("b", "search", "{}")))
    second = s.agent_turn(0.5)
    assert second.spec is None and second.results == tuple(len(m["content"].split()) for m in nxt.messages[-2:])
    s.next_turn("text", 3)
    assert s.agent_turn(0.0).results == ()  # a text answer's next turn sends a user message, no results


def test_a_dataset_agent_keeps_its_last_length_after_a_tool_turn(tmp_path):
    import json

    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps({"conversations": [{"from": "human", "value": "a b c"}, {"from": "gpt", "value": "x " * 40},
                                                  {"from": "human", "value": "d e"}, {"from": "gpt", "value": "y " * 20}]}) + "\n")  # fmt: skip
    c = {"name": "agent", "weight": 1, "prompt": {"source": "dataset", "path": str(data), "format": "sharegpt"},
         "output_tokens": "dataset", "turns": "dataset", "tools": TOOLS}  # fmt: skip
    s = WorkloadSampler(profile_from_dict({"classes": [c]}), 1, 0).start_session()
    first = s.next_turn()
    second = s.next_turn("", 3, (ToolCall("c", "search", "{}"),))
    assert second.max_tokens == first.max_tokens > 1 and second.messages[-1]["role"] == "tool"


def test_a_fanout_is_due_after_every_nth_turn_and_its_children_are_short_agents_of_the_class():
    s = session(turns=5, think_time_s=9.0, fanout={"every": 2, "agents": 3, "turns": 2, "output_tokens": 7})
    s.next_turn()
    assert not s.fanout_due
    s.next_turn("r", 2)
    assert s.fanout_due and s.fanouts == 1
    kids = s.children()
    assert len(kids) == 3 and all(k.child and k.turns == 2 for k in kids)
    firsts = [k.next_turn() for k in kids]
    assert [f.max_tokens for f in firsts] == [7, 7, 7]
    assert all(f.tools == tuple(TOOLS) for f in firsts)  # no delegate tool: children do not fan out
    assert len({f.prompt for f in firsts}) == 3  # each its own task
    kids[0].next_turn("", 3, (ToolCall("c", "search", "{}"),))
    assert kids[0].think_time_s == 0.0 and not kids[0].fanout_due  # no think time, no fan-out of its own
    assert kids[0].agent_turn(0.0).child
    again = session(turns=5, think_time_s=9.0, fanout={"every": 2, "agents": 3, "turns": 2, "output_tokens": 7})
    again.next_turn()
    again.next_turn("r", 2)
    assert [k.next_turn().prompt for k in again.children()] == [f.prompt for f in firsts]  # seeded by the session


def test_a_childs_last_allowed_turn_asks_for_a_text_answer_and_no_other_turn_does():
    s = session(turns=5, fanout={"every": 2, "agents": 1, "turns": 3})
    parent = [s.next_turn(), s.next_turn("r", 2)]
    (kid,) = s.children()
    call = (ToolCall("c", "search", "{}"),)
    turns = [kid.next_turn(), kid.next_turn("", 3, call), kid.next_turn("", 3, call)]
    assert [t.tool_choice for t in turns] == [None, None, "none"]  # its third request is its last: text, never empty
    assert all(t.tools == tuple(TOOLS) for t in turns)  # the history's tool calls still need their definitions
    parent += [s.next_turn("r", 2, call), s.next_turn("r", 2, call), s.next_turn("r", 2, call)]
    assert s.done and {t.tool_choice for t in parent} == {None}  # a parent's turns may always call tools
    single = session(turns=5, fanout={"every": 2, "agents": 1, "turns": 1})
    single.next_turn()
    single.next_turn("r", 2)
    assert single.children()[0].next_turn().tool_choice == "none"  # one request: it is the last


def test_the_turn_after_a_fanout_carries_delegate_calls_and_the_childrens_answers_as_their_results():
    s = session(fanout={"every": 1, "agents": 2})
    first = s.next_turn()
    answers = Delegation((ChildAnswer("found it", 2), ChildAnswer.failed("http_5xx")), 1.25)
    own = (ToolCall("call_x", "search", "{}"),)
    nxt = s.next_turn("let me delegate", 4, own, delegated=answers)
    assistant = nxt.messages[-4]
    assert assistant["role"] == "assistant" and assistant["content"] == "let me delegate"
    assert [(c["id"], c["function"]["name"]) for c in assistant["tool_calls"]] == [
        ("call_x", "search"), ("call_2_d1", "delegate"), ("call_2_d2", "delegate")]
    results = nxt.messages[-3:]
    assert [m["tool_call_id"] for m in results] == ["call_x", "call_2_d1", "call_2_d2"]
    assert len(results[0]["content"].split()) == 30  # the answer's own call: a synthetic result
    assert results[1]["content"] == "found it" and results[2]["content"] == "error: sub-agent failed (http_5xx)"
    failed = ChildAnswer.failed("http_5xx").tokens
    assert nxt.input_tokens == first.input_tokens + 4 + 30 + 2 + failed  # the answer, its result, the children's
    t = s.agent_turn(0.5)
    assert (t.children, t.fanout_s, t.waited_s, t.child) == (2, 1.25, 0.5, False)
    after = s.next_turn("plain", 1)  # the next turn without a fan-out: no children on its tally
    assert after.messages[-1]["role"] == "user" and s.agent_turn(0.0).children == 0


def test_a_text_answer_before_a_fanout_is_the_delegating_message_and_no_user_message_follows():
    s = session(fanout={"every": 1, "agents": 1})
    first = s.next_turn()
    nxt = s.next_turn("on it", 2, None, delegated=Delegation((ChildAnswer("done", 1),), 0.1))
    assert [m["role"] for m in nxt.messages] == ["user", "assistant", "tool"]
    assert nxt.input_tokens == first.input_tokens + 2 + 1


def test_children_are_refused_for_a_class_without_fanout():
    with pytest.raises(RuntimeError, match="has no fanout"):
        session().children()
