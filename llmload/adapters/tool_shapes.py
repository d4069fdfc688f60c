"""An agent class's tools and tool turns in each API's own shape, and tool calls noted from a stream.

The workload writes an agent session (:mod:`llmload.workload.agent`) in OpenAI chat's shape: tools
``{type: "function", function: {name, description, parameters}}``, an assistant message with
``tool_calls`` and one ``{role: "tool", tool_call_id, content}`` message per call. The chat
adapter sends that as it is; the others turn it into their API's form here:

* Responses: tools ``{type: "function", name, description, parameters}``; the assistant's calls
  become ``{type: "function_call", call_id, name, arguments}`` input items (after a ``message``
  item for its text, if any) and each result a ``{type: "function_call_output", call_id, output}``.
* Anthropic Messages: tools ``{name, description, input_schema}``; the assistant's calls become
  ``tool_use`` content blocks (``id``, ``name``, ``input``: the arguments parsed, ``{}`` when they
  are not a JSON object) and the results ``tool_result`` blocks (``tool_use_id``, ``content``) of one
  user message (consecutive results share it, as the API wants turns to alternate).

A stream's tool calls go on ``StreamState.tool_calls`` (``[id, name, arguments]`` per call):
:func:`note_call` when a call starts (its id and name), :func:`note_arguments` for each
fragment of its arguments (the last call started). Only events that carry tool calls call them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from llmload.adapters.base import StreamState
from llmload.jsonvalue import Json

__all__ = ["anthropic_messages", "anthropic_tools", "note_arguments", "note_call", "responses_items", "responses_tools"]


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = tool.get("function")
    return fn if isinstance(fn, Mapping) else tool


def responses_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Json]]:
    """Chat-shaped tool definitions as the Responses API takes them."""
    return [{"type": "function", **_function(t)} for t in tools]


def anthropic_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Json]]:
    """Chat-shaped tool definitions as the Messages API takes them (``parameters`` → ``input_schema``)."""
    out = []
    for t in tools:
        fn = _function(t)
        tool: dict[str, Json] = {"name": fn["name"]}
        if fn.get("description"):
            tool["description"] = fn["description"]
        tool["input_schema"] = fn.get("parameters") or {"type": "object"}
        out.append(tool)
    return out


def responses_items(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Json]]:
    """A chat-shaped conversation as Responses input items (module docstring)."""
    items: list[dict[str, Json]] = []
    for m in messages:
        role = m.get("role")
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        elif m.get("tool_calls"):
            if m.get("content"):
                items.append({"type": "message", "role": role, "content": m["content"]})
            for c in m["tool_calls"]:
                fn = c["function"]
                items.append({"type": "function_call", "call_id": c["id"], "name": fn["name"], "arguments": fn["arguments"]})
        else:
            items.append({"type": "message", **m})
    return items


def anthropic_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Json]]:
    """A chat-shaped conversation (no system messages) as Messages API turns (module docstring)."""
    out: list[dict[str, Json]] = []
    for m in messages:
        if m.get("role") == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            last = out[-1] if out else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list) and \
                    last["content"] and last["content"][-1].get("type") == "tool_result":  # fmt: skip
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.get("tool_calls"):
            blocks: list[dict[str, Json]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            for c in m["tool_calls"]:
                blocks.append({"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                               "input": _input_object(c["function"]["arguments"])})  # fmt: skip
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append(dict(m))
    return out


def _input_object(arguments: str) -> dict[str, Json]:
    try:
        value = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def note_call(state: StreamState, call_id: str, name: str, arguments: str = "") -> None:
    """A tool call started in the stream: its id and name (and any arguments it came with)."""
    calls = state.tool_calls
    if calls is None:
        calls = state.tool_calls = []
    calls.append([call_id or "", name or "", arguments or ""])


def note_arguments(state: StreamState, fragment: str) -> None:
    """A fragment of the arguments of the last call started (none started: a call without id or name)."""
    calls = state.tool_calls
    if not calls:
        note_call(state, "", "", fragment)
        return
    calls[-1][2] += fragment
