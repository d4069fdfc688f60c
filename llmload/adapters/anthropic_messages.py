"""The Anthropic Messages adapter (``anthropic-messages``, ``POST /v1/messages``).

Request: ``{model, messages, max_tokens, stream: true, ...}`` with the headers
``anthropic-version: 2023-06-01`` and, when a key is set, ``x-api-key`` (from
``--api-key`` or ``$ANTHROPIC_API_KEY``; never logged). The prompt is one user message,
or the sample's conversation, whose ``system`` messages become the top-level ``system``
field. An image class's prompt is a ``text`` block then one ``image`` block per image
(``source: {type: "base64", media_type, data}``). ``--temperature`` and ``--ignore-eos`` (a vLLM extension) are sent when set;
extended thinking is the API's own ``thinking`` field (``--extra-body
'{"thinking": {"type": "enabled", "budget_tokens": 1024}}'``).

Stream: SSE with named events; the adapter dispatches on the name (or, without an
``event:`` line, on the data's ``"type"``):

* ``message_start``: ``message.usage.input_tokens`` (+ ``cache_creation_input_tokens``
  + ``cache_read_input_tokens``: Anthropic counts cached prompt tokens apart) is the
  prompt's usage;
* ``content_block_delta``: content when its ``delta`` is a non-empty ``text_delta``
  (``text``) or ``input_json_delta`` (``partial_json``, a tool call's input): output;
  ``thinking_delta`` (``thinking``): reasoning (the channel is noted, see
  :mod:`llmload.adapters.base`); ``signature_delta`` and ``citations_delta`` carry no
  generated text;
* ``message_delta``: ``delta.stop_reason`` is the finish reason (``end_turn``,
  ``max_tokens``, ``tool_use``, ...), ``usage.output_tokens`` the completion usage
  (thinking included: the API reports no separate reasoning count, so reasoning tokens
  are counted from the ``thinking_delta`` events);
* ``message_stop`` returns :data:`~llmload.adapters.base.DONE` (so does ``[DONE]``);
* ``error`` raises :class:`~llmload.errors.ServerErrorEvent`
  (``{"type": "error", "error": {"type": "overloaded_error", "message": ...}}``);
* ``content_block_start`` of a ``tool_use`` block notes the call's ``id`` and ``name`` on
  ``state.tool_calls`` (its ``input_json_delta`` fragments are the arguments);
* ``ping``, ``content_block_stop`` and unknown events carry no content. A
  ``redacted_thinking`` block (encrypted reasoning) is not counted.

An agent class's request also sends its ``tools`` (``input_schema``; ``disable_parallel_tool_use``
when it runs one call per turn) and its tool turns as ``tool_use`` / ``tool_result`` blocks
(:mod:`llmload.adapters.tool_shapes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from llmload.adapters.base import DONE, AdapterConfig, Framing, RequestSpec, StreamState, body_tail, json_headers
from llmload.adapters.chunks import malformed
from llmload.adapters.image_shapes import anthropic_image_turns
from llmload.adapters.tool_shapes import anthropic_messages, anthropic_tools, note_arguments, note_call
from llmload.adapters.typed_events import decode_typed_event
from llmload.jsonvalue import Json

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["ANTHROPIC_VERSION", "AnthropicMessagesAdapter"]

#: The ``anthropic-version`` header sent with every request.
ANTHROPIC_VERSION = "2023-06-01"
_DELTA, _START, _MESSAGE_DELTA, _STOP, _ERROR, _BLOCK = 1, 2, 3, 4, 5, 6
_KINDS = {
    "content_block_delta": _DELTA,
    "content_block_start": _BLOCK,
    "message_start": _START,
    "message_delta": _MESSAGE_DELTA,
    "message_stop": _STOP,
    "error": _ERROR,
}
_OUTPUT_FIELDS = {"text_delta": "text"}  # a tool call's input_json_delta: _tool_input


class AnthropicMessagesAdapter:
    """Streams ``/v1/messages`` (Anthropic Messages API, also served by gateways) as SSE."""

    name: ClassVar[str] = "anthropic-messages"
    default_path: ClassVar[str] = "/v1/messages"
    default_framing: ClassVar[Framing] = Framing.SSE
    api_key_env: ClassVar[str] = "ANTHROPIC_API_KEY"

    @staticmethod
    def api_headers(api_key: str) -> dict[str, str]:
        """``anthropic-version``, and ``x-api-key`` when a key is set."""
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        self._tail = body_tail(config, stream=True)
        self._headers = json_headers()

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{model, messages, max_tokens, stream: true}`` (+ ``system``); ``extra_body`` merged last."""
        body: dict[str, Json] = {"model": self.config.model}
        if sample.messages:
            system = [m["content"] for m in sample.messages if m.get("role") == "system"]
            turns: list[dict[str, Any]] = [m for m in sample.messages if m.get("role") != "system"]
            if sample.tools is not None:  # an agent class: its tool turns as tool_use / tool_result blocks
                turns = anthropic_messages(turns)
            if sample.images:  # a conversation's image parts, as base64 image blocks
                turns = anthropic_image_turns(turns)
            body["messages"] = turns
            if system:
                body["system"] = "\n\n".join(system)
        else:
            body["messages"] = [{"role": "user", "content": _content(sample)}]
        body["max_tokens"] = sample.max_tokens
        if sample.tools is not None:
            body["tools"] = anthropic_tools(sample.tools)
            if sample.tool_choice is not None:  # "none": answer in text (a sub-agent's last turn)
                body["tool_choice"] = {"type": sample.tool_choice}
            elif not sample.parallel_tool_calls:
                body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        body.update(self._tail)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), sample.max_tokens)

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """One SSE event; see the module docstring for the rules."""
        kind, obj = decode_typed_event(data, event, _KINDS, _ERROR)
        if obj is None:
            return kind
        try:
            if kind == _DELTA:
                delta = obj["delta"]
                dtype = delta["type"]
                if dtype == "thinking_delta":
                    text = delta["thinking"]
                    if not text:
                        return 0
                    state.text_chars += len(text)
                    state.reasoning_chunks += 1
                    return 1
                field = _OUTPUT_FIELDS.get(dtype)
                if field is None:  # a tool call's input, or signature_delta, citations_delta
                    return _tool_input(state, delta) if dtype == "input_json_delta" else 0
                text = delta[field]
                if not text:
                    return 0
                state.text_chars += len(text)
                if state.first_output_chunk < 0:
                    state.first_output_chunk = state.reasoning_chunks
                if state.text_parts is not None:
                    state.text_parts.append(text)  # the answer a next turn re-sends (not tool-call input)
                return 1
            if kind == _STOP:
                return DONE
            _OTHER[kind](state, obj)  # message_start, message_delta, content_block_start
            return 0
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise malformed(f"unexpected event structure ({type(exc).__name__})", data) from exc


def _message_start(state: StreamState, obj: dict[str, Any]) -> None:
    """``message_start`` (once a stream): the prompt's usage, when the server sends it this early."""
    usage = obj["message"].get("usage")
    if usage:
        _record_input(state, usage)


def _message_delta(state: StreamState, obj: dict[str, Any]) -> None:
    """``message_delta`` (once a stream, at the end): the stop reason and the final usage."""
    reason = obj["delta"].get("stop_reason")
    if reason:
        state.finish_reason = reason
    usage = obj.get("usage")
    if usage:
        output = usage.get("output_tokens")
        if output is not None:
            state.usage_completion_tokens = int(output)
        if usage.get("input_tokens") is not None:
            _record_input(state, usage)


def _tool_input(state: StreamState, delta: dict[str, Any]) -> int:
    """An ``input_json_delta``: output (1 when it has text), its ``partial_json`` noted on the last tool call."""
    text = delta["partial_json"]
    if not text:
        return 0
    state.text_chars += len(text)
    if state.first_output_chunk < 0:
        state.first_output_chunk = state.reasoning_chunks
    note_arguments(state, text)
    return 1


def _block_start(state: StreamState, obj: dict[str, Any]) -> None:
    """``content_block_start``: a ``tool_use`` block's id and name are noted (its input follows in deltas)."""
    block = obj["content_block"]
    if block.get("type") == "tool_use":
        note_call(state, block.get("id") or "", block.get("name") or "")


_OTHER = {_START: _message_start, _MESSAGE_DELTA: _message_delta, _BLOCK: _block_start}


def _record_input(state: StreamState, usage: dict[str, Any]) -> None:
    """Prompt tokens of an Anthropic usage object: uncached + cache writes + cache reads (the cached ones)."""
    total = 0
    seen = False
    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        value = usage.get(key)
        if value is not None:
            total += int(value)
            seen = True
    if seen:
        state.usage_prompt_tokens = total
    cached = usage.get("cache_read_input_tokens")
    if cached is not None:
        state.usage_cached_tokens = int(cached)


def _content(sample: RequestSample) -> Json:
    """The prompt, or with an image class's images a ``text`` block then one base64 ``image`` block per image."""
    if not sample.images:
        return sample.prompt
    blocks: list[Json] = [{"type": "text", "text": sample.prompt}]
    for url in sample.images:  # data:image/png;base64,<data>
        head, _, data = url.partition(",")
        source = {"type": "base64", "media_type": head[5:].split(";")[0], "data": data}
        blocks.append({"type": "image", "source": source})
    return blocks
