"""An agent session's chat-shaped tools and tool turns in the Responses and Messages shapes; calls noted from streams."""

from __future__ import annotations

from llmload.adapters.base import StreamState
from llmload.adapters.tool_shapes import (
    anthropic_messages,
    anthropic_tools,
    note_arguments,
    note_call,
    responses_items,
    responses_tools,
)

SHORT = {"name": "calc", "parameters": {"type": "object"}}
LONG = {"type": "function", "function": {"name": "search", "description": "web", "parameters": {"type": "object"}}}
CALL = {"role": "assistant", "content": "let me see",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "[1]"}}]}  # fmt: skip


def test_tools_in_each_shape():
    assert responses_tools([LONG]) == [{"type": "function", "name": "search", "description": "web", "parameters": {"type": "object"}}]
    assert anthropic_tools([LONG, {"type": "function", "function": {"name": "x"}}]) == [
        {"name": "search", "description": "web", "input_schema": {"type": "object"}},
        {"name": "x", "input_schema": {"type": "object"}},
    ]
    assert responses_tools([SHORT]) == [{"type": "function", **SHORT}]


def test_an_assistant_text_beside_its_calls_is_kept_in_both_shapes():
    items = responses_items([{"role": "user", "content": "q"}, CALL, {"role": "tool", "tool_call_id": "c1", "content": "r"}])
    assert [i["type"] for i in items] == ["message", "message", "function_call", "function_call_output"]
    assert items[1] == {"type": "message", "role": "assistant", "content": "let me see"}
    turns = anthropic_messages([{"role": "user", "content": "q"}, CALL, {"role": "tool", "tool_call_id": "c1", "content": "r"},
                                {"role": "user", "content": "next"}])  # fmt: skip
    assert turns[1]["content"][0] == {"type": "text", "text": "let me see"}
    assert turns[1]["content"][1]["input"] == {}  # arguments that are no JSON object: an empty input
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "user"]


def test_calls_are_noted_in_order_and_fragments_go_to_the_last():
    state = StreamState()
    note_arguments(state, "{")  # a fragment before any call: a call without id or name
    note_call(state, "a", "f")
    note_arguments(state, "{}")
    note_call(state, "b", "g", "[")
    note_arguments(state, "]")
    assert state.tool_calls == [["", "", "{"], ["a", "f", "{}"], ["b", "g", "[]"]]
