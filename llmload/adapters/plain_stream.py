"""The plain streaming-gateway adapter (``stream``, ``POST /v1/stream``).

For gateways that take ``{"prompt": ..., "stream": true, "max_new_tokens": N}`` and answer
either raw text (``text/plain``: every read is content) or SSE / NDJSON whose data is
plain text or a JSON object. Accepted JSON shapes, first match wins:

* ``{"token": {"text": ...}}`` -- TGI's ``/generate_stream``; the final event's
  ``details`` gives ``finish_reason`` and ``generated_tokens`` (recorded as the
  completion-token usage);
* ``{"text": ...}``, ``{"delta": ...}``, ``{"content": ...}``, ``{"response": ...}``
  (Ollama's native NDJSON, whose final object gives ``done_reason``, ``eval_count`` and
  ``prompt_eval_count``); ``delta`` may also be an object holding ``content`` or ``text``;
* llama.cpp's native ``/completion`` (``--endpoint-path /completion``; it reads
  ``n_predict``, not ``max_new_tokens``: pass it in ``--extra-body``): ``{"content": ...}``
  per event, and a final ``"stop": true`` event whose ``stop_type`` is the finish reason
  (``limit`` -> ``length``, ``eos``/``word`` -> ``stop``), ``tokens_predicted`` and
  ``tokens_evaluated`` the token counts, ``timings`` the server timing (its ``cache_n`` the
  cached prompt tokens). Its events merge tokens whose UTF-8 is incomplete, so counting
  events falls short of the tokens;
* ``{"error": ...}`` (or ``event: error``) raises a server error;
* an OpenAI-style ``usage`` object and a top-level ``finish_reason`` are recorded too.

``[DONE]`` ends the stream. Data that does not parse as a JSON object is content text,
never an error: a raw read may start with ``{`` and be cut anywhere. The flip side: a raw
read that happens to be a whole JSON object is taken for an event, not for text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import orjson
from orjson import loads

from llmload.adapters.base import DONE, AdapterConfig, Framing, RequestSpec, StreamState, body_tail, json_headers
from llmload.adapters.chunks import count_chars, malformed, server_error, server_error_from_data
from llmload.adapters.openai_common import record_usage
from llmload.adapters.server_timing import record_server_timing

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["StreamAdapter"]

_TEXT_KEYS = ("text", "delta", "content", "response")
_OPEN_BRACE = 0x7B


class StreamAdapter:
    """Streams a plain-text / TGI-style gateway endpoint."""

    name: ClassVar[str] = "stream"
    default_path: ClassVar[str] = "/v1/stream"
    default_framing: ClassVar[Framing] = Framing.RAW

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        self._tail = body_tail(config, stream=True)
        self._headers = json_headers("*/*")

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{prompt, max_new_tokens, stream: true, ...}``; ``extra_body`` merged last."""
        body = {"prompt": sample.prompt, "max_new_tokens": sample.max_tokens}
        body.update(self._tail)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), sample.max_tokens)

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """One raw read, SSE data or NDJSON line: 1 for content, 0 for none, DONE at ``[DONE]``."""
        if not data:
            return 0
        if event == "error":
            raise server_error_from_data(data)
        if data[0] == _OPEN_BRACE:
            try:
                obj = loads(data)
            except ValueError:
                obj = None  # text that starts with "{"
            if obj is not None:  # JSON starting with "{" is always an object
                try:
                    return _feed_object(state, obj)
                except (AttributeError, TypeError, ValueError) as exc:
                    raise malformed(f"unexpected chunk structure ({type(exc).__name__})", data) from exc
        elif data == b"[DONE]":
            # A gateway stream has no finish reasons: its explicit end marker is a proper
            # finish (an early end without it counts as truncated).
            if state.finish_reason is None:
                state.finish_reason = "done"
            return DONE
        state.text_chars += count_chars(data)
        if state.text_parts is not None:
            state.text_parts.append(bytes(data))  # a raw read may split a UTF-8 character: decoded at the end
        return 1


def _feed_object(state: StreamState, obj: dict[str, Any]) -> int:
    """A JSON event: find its text (see the module docstring) and record end-of-stream facts."""
    text: Any  # any JSON value until checked to be a str (or None) below
    token = obj.get("token")
    if token is not None:
        text = token.get("text")
    else:
        text = None
        for key in _TEXT_KEYS:
            text = obj.get(key)
            if text is not None:
                break
        if type(text) is dict:
            text = text.get("content") or text.get("text")
    if text is None or type(text) is str:
        n = 1 if text else 0
    else:
        raise TypeError("text field is not a string")
    if text:  # (as n: the same test, that also tells the type checker text is a str)
        state.text_chars += len(text)
        if state.text_parts is not None:
            state.text_parts.append(text)
    elif obj.get("error"):
        raise server_error(obj)
    if len(obj) > 1:
        _record_end(state, obj)
    return n


def _record_end(state: StreamState, obj: dict[str, Any]) -> None:
    """Finish reason and token counts from TGI ``details``, Ollama's final object or ``usage``."""
    details = obj.get("details")
    if details:
        if details.get("finish_reason"):
            state.finish_reason = details["finish_reason"]
        if details.get("generated_tokens") is not None:
            state.usage_completion_tokens = int(details["generated_tokens"])
    reason = obj.get("finish_reason") or obj.get("done_reason")
    if reason:
        state.finish_reason = reason
    if obj.get("eval_count") is not None:
        state.usage_completion_tokens = int(obj["eval_count"])
    if obj.get("prompt_eval_count") is not None:
        state.usage_prompt_tokens = int(obj["prompt_eval_count"])
    usage = obj.get("usage")
    if usage:
        record_usage(state, usage)
    if obj.get("stop") is True:  # llama.cpp /completion's final event (every event has "stop")
        _record_llamacpp_end(state, obj)


_LLAMACPP_STOP = {"limit": "length", "eos": "stop", "word": "stop"}


def _record_llamacpp_end(state: StreamState, obj: dict[str, Any]) -> None:
    stop_type = obj.get("stop_type") or "eos"
    if stop_type != "none":  # "none": it did not finish (the completeness check judges the stream)
        state.finish_reason = _LLAMACPP_STOP.get(stop_type, stop_type)
    if type(obj.get("tokens_predicted")) is int:
        state.usage_completion_tokens = obj["tokens_predicted"]
    if type(obj.get("tokens_evaluated")) is int:
        state.usage_prompt_tokens = obj["tokens_evaluated"]
    record_server_timing(state, obj)
    timings = obj.get("timings")
    if type(timings) is dict and type(timings.get("cache_n")) is int:
        state.usage_cached_tokens = timings["cache_n"]
