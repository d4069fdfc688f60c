"""The OpenAI Responses adapter (``openai-responses``, ``POST /v1/responses``).

Request: ``{model, input, max_output_tokens, stream: true, store: false, ...}``. ``input``
is the sample's prompt (a string), or its conversation as a list of
``{type: "message", role, content}`` items. The ``type`` is optional in OpenAI's schema
but llama-server requires it on assistant items (HTTP 400 "Cannot determine type of
'item'" from a conversation's second turn on); every item carries it. An agent class's
request also sends its ``tools`` and its tool turns as ``function_call`` /
``function_call_output`` items (:mod:`llmload.adapters.tool_shapes`). An image class's request
sends one user message of an ``input_text`` part and an ``input_image`` part (a ``data:`` URI)
per image. ``store: false`` keeps a load test from filling the server's response store;
``extra_body`` (merged last) can turn it back on. ``--ignore-eos`` and ``--temperature``
are sent as ``ignore_eos`` / ``temperature`` when set; the Responses API has no
``stream_options``: usage always comes with the final event.

Stream: SSE whose events are named (``event: response.output_text.delta``) and whose data
repeats the name as ``"type"``. The adapter dispatches on the name, so lifecycle events
(``response.created``, ``response.in_progress``, ``response.output_item.added``/``done``,
``response.content_part.*``, every ``*.done`` with its full text, ...) cost a dict look-up
and are never parsed. Data without an ``event:`` line (a proxy that drops it) is parsed
and dispatched on its ``"type"``.

* Output (content, counted once per event with a non-empty ``delta``):
  ``response.output_text.delta``, ``response.refusal.delta``,
  ``response.function_call_arguments.delta`` and ``response.custom_tool_call_input.delta``
  (tool calls); reasoning: ``response.reasoning_text.delta`` and
  ``response.reasoning_summary_text.delta`` (also the beta names
  ``response.reasoning.delta`` / ``response.reasoning_summary.delta``). The adapter notes
  the channel (see :mod:`llmload.adapters.base`).
* End: ``response.completed`` and ``response.incomplete`` return
  :data:`~llmload.adapters.base.DONE`; their ``response.usage`` gives ``input_tokens``,
  ``output_tokens`` and ``output_tokens_details.reasoning_tokens``. The finish reason is
  the response's ``status`` (``completed``), or for an incomplete response its
  ``incomplete_details.reason`` (``max_output_tokens``, ``content_filter``). A
  ``data: [DONE]`` some proxies append also ends the stream.
* Server timing: llama-server puts its per-request ``timings`` beside ``response`` in the
  ``response.completed`` event (:mod:`llmload.adapters.server_timing`); vLLM's
  ``metrics`` are read from the same place should it send them.
* Errors: ``response.failed`` (its ``response.error``) and ``error`` events raise
  :class:`~llmload.errors.ServerErrorEvent`; data that is not JSON, or a ``delta`` that
  is not a string, raises :class:`~llmload.errors.MalformedChunk`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from llmload.adapters.base import (
    DONE,
    AdapterConfig,
    Framing,
    RequestSpec,
    StreamState,
    bearer_headers,
    body_tail,
    json_headers,
    store_usage,
)
from llmload.adapters.chunks import malformed, server_error
from llmload.adapters.image_shapes import responses_image_items
from llmload.adapters.server_timing import record_server_timing
from llmload.adapters.tool_shapes import note_arguments, note_call, responses_items, responses_tools
from llmload.adapters.typed_events import decode_typed_event
from llmload.jsonvalue import Json

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["OpenAIResponsesAdapter"]

_OUTPUT, _REASONING, _END, _FAILED, _ERROR, _CALL_ARGS, _ITEM = 1, 2, 3, 4, 5, 6, 7
_KINDS = {
    "response.output_text.delta": _OUTPUT,
    "response.refusal.delta": _OUTPUT,
    "response.function_call_arguments.delta": _CALL_ARGS,
    "response.output_item.added": _ITEM,
    "response.custom_tool_call_input.delta": _OUTPUT,
    "response.reasoning_text.delta": _REASONING,
    "response.reasoning_summary_text.delta": _REASONING,
    "response.reasoning.delta": _REASONING,
    "response.reasoning_summary.delta": _REASONING,
    "response.completed": _END,
    "response.incomplete": _END,
    "response.failed": _FAILED,
    "error": _ERROR,
}


class OpenAIResponsesAdapter:
    """Streams ``/v1/responses`` (OpenAI Responses API, also served by vLLM) as SSE."""

    name: ClassVar[str] = "openai-responses"
    default_path: ClassVar[str] = "/v1/responses"
    default_framing: ClassVar[Framing] = Framing.SSE
    api_headers = staticmethod(bearer_headers)

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        self._tail = body_tail(config, stream=True, store=False)
        self._headers = json_headers()

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{model, input, max_output_tokens, stream: true, store: false}``; ``extra_body`` merged last."""
        body: dict[str, Json] = {
            "model": self.config.model,
            "input": [{"type": "message", **m} for m in sample.messages] if sample.messages else _prompt(sample),
            "max_output_tokens": sample.max_tokens,
        }
        if sample.tools is not None:  # an agent class: its tools, its tool turns as function_call(_output) items
            body["tools"] = responses_tools(sample.tools)
            body["parallel_tool_calls"] = sample.parallel_tool_calls
            if sample.tool_choice is not None:  # "none": answer in text (a sub-agent's last turn)
                body["tool_choice"] = sample.tool_choice
            if sample.messages:
                body["input"] = responses_items(sample.messages)
        if sample.images and sample.messages:  # a conversation's image parts, as input_text / input_image
            body["input"] = responses_image_items(body["input"])  # type: ignore[arg-type]
        body.update(self._tail)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), sample.max_tokens)

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """One SSE event; see the module docstring for the rules."""
        kind, obj = decode_typed_event(data, event, _KINDS, _ERROR)
        if obj is None:
            return kind
        try:
            if kind == _OUTPUT:
                delta = obj["delta"]
                if not delta:
                    return 0
                if type(delta) is not str:
                    raise TypeError("delta is not a string")
                state.text_chars += len(delta)
                if state.first_output_chunk < 0:
                    state.first_output_chunk = state.reasoning_chunks
                if state.text_parts is not None and obj["type"] == "response.output_text.delta":
                    state.text_parts.append(delta)  # the answer a next turn re-sends (not refusals or tool calls)
                return 1
            if kind == _REASONING:
                delta = obj["delta"]
                if not delta:
                    return 0
                if type(delta) is not str:
                    raise TypeError("delta is not a string")
                state.text_chars += len(delta)
                state.reasoning_chunks += 1
                return 1
            if kind >= _CALL_ARGS:  # a function call's item or arguments
                return _tool_event(state, kind, obj)
            return _end(state, kind, obj)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise malformed(f"unexpected event structure ({type(exc).__name__})", data) from exc


def _tool_event(state: StreamState, kind: int, obj: dict[str, Any]) -> int:
    """A function call's arguments delta (output, noted on the call), or an output item that may start a call."""
    if kind == _ITEM:
        item = obj["item"]
        if item.get("type") == "function_call":
            note_call(state, item.get("call_id") or item.get("id") or "", item.get("name") or "", item.get("arguments") or "")
        return 0
    delta = obj["delta"]
    if not delta:
        return 0
    if type(delta) is not str:
        raise TypeError("delta is not a string")
    state.text_chars += len(delta)
    if state.first_output_chunk < 0:
        state.first_output_chunk = state.reasoning_chunks
    note_arguments(state, delta)
    return 1


def _end(state: StreamState, kind: int, obj: dict[str, Any]) -> int:
    """``response.completed`` / ``incomplete`` (usage, finish reason, server timing: DONE) or ``response.failed`` (raises)."""
    response = obj.get("response") or {}
    if kind == _FAILED:
        raise server_error({"error": response.get("error") or "response.failed without an error object"})
    _record_end(state, response)
    record_server_timing(state, obj)  # llama.cpp's timings sit beside "response"
    return DONE


def _record_end(state: StreamState, response: dict[str, Any]) -> None:
    """Usage and finish reason of a ``response.completed`` / ``response.incomplete`` event."""
    usage = response.get("usage")
    if usage:
        record_responses_usage(state, usage)
    status = response.get("status")
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        state.finish_reason = details.get("reason") or "incomplete"
    else:
        state.finish_reason = status or "completed"


def record_responses_usage(state: StreamState, usage: dict[str, Any]) -> None:
    """Store a Responses ``usage`` object (``input_tokens``, ``output_tokens``, reasoning, ``input_tokens_details.cached_tokens``) on ``state``."""
    store_usage(state, usage, "input_tokens", "output_tokens", "output_tokens_details", "input_tokens_details")


def _prompt(sample: RequestSample) -> Json:
    """The prompt, or with an image class's images one user message of ``input_text`` and ``input_image`` parts."""
    if not sample.images:
        return sample.prompt
    parts: list[Json] = [{"type": "input_text", "text": sample.prompt}]
    parts += [{"type": "input_image", "image_url": url} for url in sample.images]
    return [{"type": "message", "role": "user", "content": parts}]
