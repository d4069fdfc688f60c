"""The OpenAI chat-completions adapter (``openai-chat``, ``POST /v1/chat/completions``).

Sends ``messages`` (the sample's conversation, else one user message with its prompt).
The answer text (``content``) is kept when asked (``state.text_parts``): a conversation
re-sends it as the assistant's turn; reasoning and refusals are not kept; tool calls are
assembled on ``state.tool_calls`` (id, name, arguments), touched only by events that carry them.
An agent class's request (``sample.tools``) also sends ``tools`` and ``parallel_tool_calls``.
An image class's request (``sample.images``) sends its user message's content as parts: the
prompt's ``text`` part, then one ``image_url`` part per image (a ``data:`` URI).
A chunk's generated output is ``choices[0].delta``: ``content`` (a string, or a list of
typed parts whose ``text`` parts are counted), and also ``reasoning_content`` /
``reasoning`` (reasoning models on vLLM, SGLang, llama.cpp, OpenRouter), ``refusal``
(OpenAI) and ``tool_calls`` (a call's name or argument text). All of these are output
tokens the server generated, so each counts as content: TTFT is the first of any of them,
and a reasoning model's TTFT is its time to first *reasoning* token. The adapter notes the
channel (see :mod:`llmload.adapters.base`): ``reasoning_content``/``reasoning`` are
reasoning, the rest is output, so the time to first output token is known too. Parsing
rules shared with completions are in :mod:`llmload.adapters.openai_common`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmload.adapters.openai_common import OpenAIStreamAdapter

if TYPE_CHECKING:
    from llmload.adapters.base import StreamState
    from llmload.workload.request_types import RequestSample

__all__ = ["OpenAIChatAdapter"]

_REASONING_FIELDS = ("reasoning_content", "reasoning")


class OpenAIChatAdapter(OpenAIStreamAdapter):
    """Streams ``/v1/chat/completions`` as Server-Sent Events."""

    name = "openai-chat"
    default_path = "/v1/chat/completions"
    sends_tools = True

    def _input(self, sample: RequestSample) -> tuple[str, Any]:
        if sample.messages:
            return "messages", sample.messages
        if sample.images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": sample.prompt}]
            parts += [{"type": "image_url", "image_url": {"url": url}} for url in sample.images]
            return "messages", ({"role": "user", "content": parts},)
        return "messages", ({"role": "user", "content": sample.prompt},)

    def _choice_content(self, state: StreamState, choice: dict[str, Any]) -> int:
        delta = choice.get("delta")
        if not delta:
            return 0
        text = delta.get("content")
        if text:
            state.text_chars += len(text) if type(text) is str else _parts_chars(text)
            if state.first_output_chunk < 0:
                state.first_output_chunk = state.reasoning_chunks
            if state.text_parts is not None:
                state.text_parts.append(text if type(text) is str else _parts_text(text))
            return 1
        return _other_output(state, delta)


def _note_tool_calls(state: StreamState, calls: list[dict[str, Any]]) -> int:
    """Assemble tool-call deltas on ``state.tool_calls`` (``[id, name, arguments]`` by ``index``); their characters."""
    found = state.tool_calls
    if found is None:
        found = state.tool_calls = []
    chars = 0
    for call in calls:
        function = call.get("function") or {}
        name, args = function.get("name") or "", function.get("arguments") or ""
        chars += len(name) + len(args)
        i = call.get("index", 0)
        while len(found) <= i:
            found.append(["", "", ""])
        entry = found[i]
        if call.get("id"):
            entry[0] = call["id"]
        entry[1] += name
        entry[2] += args
    return chars


def _parts_chars(parts: list[dict[str, Any]]) -> int:
    """Characters of the ``text`` parts of content sent as a list of typed parts."""
    if type(parts) is not list:
        raise TypeError("content is neither a string nor a list of parts")
    return sum(len(p["text"]) for p in parts if type(p) is dict and type(p.get("text")) is str)


def _parts_text(parts: list[dict[str, Any]]) -> str:
    """The ``text`` parts of content sent as a list of typed parts, joined."""
    return "".join(p["text"] for p in parts if type(p) is dict and type(p.get("text")) is str)


def _other_output(state: StreamState, delta: dict[str, Any]) -> int:
    """Reasoning, refusal or tool-call output in a delta without content text."""
    for field in _REASONING_FIELDS:
        text = delta.get(field)
        if text:
            state.text_chars += len(text)
            state.reasoning_chunks += 1
            return 1
    chars = 0
    refusal = delta.get("refusal")
    if refusal:
        chars = len(refusal)
    else:
        calls = delta.get("tool_calls")
        if calls:
            chars = _note_tool_calls(state, calls)
    if not chars:
        return 0
    state.text_chars += chars
    if state.first_output_chunk < 0:
        state.first_output_chunk = state.reasoning_chunks
    return 1
