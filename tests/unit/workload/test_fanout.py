"""The fanout table of an agent class: its keys, one error line per bad value, the delegate tool it adds."""

from __future__ import annotations

import pytest

from llmload.errors import ProfileError
from llmload.workload import profile_from_dict
from llmload.workload.fanout import DELEGATE_TOOL, MAX_AGENTS, ChildAnswer, FanoutSpec

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}


def agent_class(**extra):
    c = {"name": "coder", "weight": 1, "input_tokens": 40, "output_tokens": 20, "turns": 6, "tools": [SEARCH],
         "fanout": {"every": 3, "agents": 2}}  # fmt: skip
    c.update(extra)
    return {k: v for k, v in c.items() if v is not None}


def spec_of(**extra):
    return profile_from_dict({"classes": [agent_class(**extra)]}).classes[0].agent


def test_the_table_is_read_and_the_parent_is_offered_the_delegate_tool():
    spec = spec_of(fanout={"every": 2, "agents": 3, "turns": {"dist": "uniform", "min": 1, "max": 4},
                           "input_tokens": 100, "output_tokens": [50, 200]})  # fmt: skip
    fan = spec.fanout
    assert (fan.every, fan.agents) == (2, 3)
    assert fan.turns.mean == 2.5 and fan.input_tokens.mean == 100 and [o.mean for o in fan.output_tokens] == [50, 200]
    assert spec.tools == (SEARCH, DELEGATE_TOOL)
    child = spec.child()
    assert child.tools == (SEARCH,) and child.fanout is None and [o.mean for o in child.output_tokens] == [50, 200]


def test_defaults_are_the_classs_own_and_a_class_defined_delegate_tool_is_kept_as_given():
    mine = {"name": "delegate", "description": "ask a helper", "parameters": {"type": "object"}}
    spec = spec_of(tools=[SEARCH, mine])
    assert spec.fanout == FanoutSpec(3, 2)
    assert [t["function"]["name"] for t in spec.tools] == ["search", "delegate"]
    assert spec.tools[1]["function"]["description"] == "ask a helper"  # not added a second time
    assert spec.child().tools == (SEARCH,)


def test_it_reads_back_from_the_profiles_own_dict():
    p = profile_from_dict({"classes": [agent_class(fanout={"every": 1, "agents": 2, "turns": 3, "output_tokens": 9})]})
    back = profile_from_dict(p.to_dict()).classes[0].agent
    assert back == p.classes[0].agent and back.fanout.output_tokens[0].mean == 9


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"fanout": 3}, "fanout: expected a table"),
        ({"fanout": {"agents": 2}}, "fanout: missing 'every'"),
        ({"fanout": {"every": 2}}, "fanout: missing 'agents'"),
        ({"fanout": {"every": 0, "agents": 2}}, "fanout.every: must be a positive integer"),
        ({"fanout": {"every": 2.5, "agents": 2}}, "fanout.every: must be a positive integer"),
        ({"fanout": {"every": True, "agents": 2}}, "fanout.every: must be a positive integer"),
        ({"fanout": {"every": 2, "agents": -1}}, "fanout.agents: must be a positive integer"),
        ({"fanout": {"every": 2, "agents": "2"}}, "fanout.agents: must be a positive integer"),
        ({"fanout": {"every": 2, "agents": MAX_AGENTS + 1}}, f"fanout.agents: at most {MAX_AGENTS}"),
        ({"fanout": {"every": 6, "agents": 2}}, "fanout.every: 6 leaves no turn after a fan-out"),
        ({"fanout": {"every": 2, "agents": 2, "depth": 2}}, "fanout.depth: unknown key"),
        ({"fanout": {"every": 2, "agents": 2, "turns": 0}}, "fanout.turns"),
        (
            {"fanout": {"every": 2, "agents": 2, "output_tokens": []}},
            "fanout.output_tokens: the per-turn list is empty",
        ),
        ({"fanout": {"every": 2, "agents": 2, "output_tokens": [5, 0]}}, "fanout.output_tokens[1]"),
        ({"fanout": {"every": 2, "agents": 2, "input_tokens": -3}}, "fanout.input_tokens"),
        ({"tools": None}, "fanout: sub-agents need an agent class"),
    ],
)
def test_each_bad_value_gives_one_line_naming_the_class_and_key(extra, field):
    with pytest.raises(ProfileError) as e:
        profile_from_dict({"name": "p", "classes": [agent_class(**extra)]})
    msg = str(e.value)
    at = "classes[0]." if field.startswith("fanout: sub-agents") else "classes[0] (class 'coder')."
    assert msg.startswith("profile ") and f"{at}{field}" in msg and "\n" not in msg, msg


def test_a_dataset_classs_children_open_with_its_records(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"conversations": [{"from": "human", "value": "a b"}, {"from": "gpt", "value": "c"}]}\n')
    c = agent_class(input_tokens=None, output_tokens="dataset", turns="dataset",
                    prompt={"source": "dataset", "path": str(data), "format": "sharegpt"})  # fmt: skip
    c["fanout"] = {"every": 1, "agents": 2, "input_tokens": 10}
    with pytest.raises(ProfileError, match=r"classes\[0\] \(class 'coder'\)\.fanout\.input_tokens: a dataset class"):
        profile_from_dict({"classes": [c]})
    c["fanout"] = {"every": 1, "agents": 2}
    assert profile_from_dict({"classes": [c]}).classes[0].agent.fanout == FanoutSpec(1, 2)


def test_due_after_every_nth_turn_while_a_turn_is_left():
    fan = FanoutSpec(3, 2)
    assert [k for k in range(1, 10) if fan.due(k, 9)] == [3, 6]


def test_a_failed_child_answers_with_an_error_text_the_model_can_read():
    a = ChildAnswer.failed("http_5xx")
    assert not a.ok and a.text == "error: sub-agent failed (http_5xx)" and a.tokens > 0
