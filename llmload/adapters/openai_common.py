"""What the OpenAI-compatible adapters share: the request body and the streamed-chunk parser.

Chat (``/v1/chat/completions``) and completions (``/v1/completions``) differ only in how
the prompt is sent and where a choice keeps its text; both subclass
:class:`OpenAIStreamAdapter` and override :meth:`~OpenAIStreamAdapter._input` and
:meth:`~OpenAIStreamAdapter._choice_content`.

Chunk rules (written against vLLM, SGLang, llama.cpp, TGI's OpenAI route, transformers
serve, Ollama and OpenAI itself):

* ``data: [DONE]`` returns :data:`~llmload.adapters.base.DONE`; a stream may also just end.
  An empty ``data:`` (a keep-alive some proxies send) returns 0.
* A chunk with non-empty content returns 1 (one content chunk, whatever number of tokens
  it holds), unless the server states a count: with vLLM's ``continuous_usage_stats``
  every chunk carries a running ``usage.completion_tokens``, and the increase since the
  previous *content* chunk is returned. Tokens the usage counted on chunks without
  content (a tool-call parser holding text back, SGLang) thus land on the next content
  chunk: a jump of k tokens is k tokens at that one stamp, never k events.
* Role-only, empty-content, finish-only and usage-only chunks (``choices: []``) return 0.
* ``usage`` is recorded wherever it appears (finish chunk or a separate chunk), with
  ``completion_tokens_details.reasoning_tokens`` and ``prompt_tokens_details.cached_tokens``
  when given; ``finish_reason`` is recorded from ``choices[0]``.
* Per-request server timing (vLLM ``metrics``, llama.cpp ``timings``) is read from the
  usage chunk and the finish chunk only (:mod:`llmload.adapters.server_timing`).
* Only ``choices[0]`` is read: llmload always asks for ``n = 1``.
* Errors: ``{"error": ...}`` / ``{"object": "error", ...}`` chunks (also a top-level
  ``error`` beside a finishing choice, as OpenRouter sends mid-stream) and ``event: error``
  raise :class:`~llmload.errors.ServerErrorEvent`; data that is not a JSON object, or
  fields of the wrong type, raise :class:`~llmload.errors.MalformedChunk`.
* Named events other than ``error`` (e.g. ``event: ping``) are parsed like unnamed ones,
  but data that is not JSON is ignored instead of rejected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import orjson
from orjson import loads

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
from llmload.adapters.chunks import malformed, server_error, server_error_from_data
from llmload.adapters.server_timing import record_server_timing

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["OpenAIStreamAdapter", "record_usage"]

_DONE_SENTINEL = b"[DONE]"


def record_usage(state: StreamState, usage: dict[str, Any]) -> None:
    """Store an OpenAI ``usage`` object's prompt, completion, reasoning and cached prompt token counts on ``state``.

    Cached: ``prompt_tokens_details.cached_tokens`` (vLLM with prefix caching, llama.cpp,
    SGLang, OpenAI).
    """
    store_usage(state, usage, "prompt_tokens", "completion_tokens", "completion_tokens_details", "prompt_tokens_details")


class OpenAIStreamAdapter:
    """Base class of the OpenAI-compatible streaming adapters (not registered itself)."""

    name: ClassVar[str]
    default_path: ClassVar[str]
    default_framing: ClassVar[Framing] = Framing.SSE
    accept: ClassVar[str] = "text/event-stream"
    api_headers = staticmethod(bearer_headers)
    sends_tools: ClassVar[bool] = False  # an agent class's tools go in the body (chat)

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        usage = {"stream_options": {"include_usage": True}} if config.include_usage else {}
        self._tail = body_tail(config, stream=True, **usage)
        self._headers = json_headers(self.accept)

    # -- request -------------------------------------------------------------------------

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{model, <input>, max_tokens, [tools, parallel_tool_calls,] stream: true, ...}``; ``extra_body`` merged last."""
        key, value = self._input(sample)
        body = {"model": self.config.model, key: value, "max_tokens": sample.max_tokens}
        if sample.tools is not None and self.sends_tools:  # an agent class (llmload.workload.agent)
            body["tools"] = sample.tools
            body["parallel_tool_calls"] = sample.parallel_tool_calls
            if sample.tool_choice is not None:  # "none": answer in text (a sub-agent's last turn)
                body["tool_choice"] = sample.tool_choice
        body.update(self._tail)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), sample.max_tokens)

    def _input(self, sample: RequestSample) -> tuple[str, Any]:
        """The body field carrying the prompt, and its value."""
        raise NotImplementedError

    # -- response ------------------------------------------------------------------------

    def _choice_content(self, state: StreamState, choice: dict[str, Any]) -> int:
        """1 if ``choice`` carries generated content (adding its length to ``text_chars``), else 0."""
        raise NotImplementedError

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """Parse one event's data; see the module docstring for the rules."""
        if event:
            return self._feed_named(state, data, event)
        try:
            obj = loads(data)
            choices = obj["choices"]
        except (ValueError, KeyError, TypeError):
            return self._feed_unusual(state, data)
        try:
            usage = obj.get("usage")
            if usage:
                return self._feed_with_usage(state, obj, choices, usage)
            if not choices:
                if obj.get("error"):
                    raise server_error(obj)
                return 0
            choice = choices[0]
            reason = choice.get("finish_reason")
            if reason:
                state.finish_reason = reason
                if obj.get("error"):  # OpenRouter: finish_reason "error" beside a top-level error
                    raise server_error(obj)
                record_server_timing(state, obj)  # llama.cpp without include_usage: timings on the finish chunk
            return self._choice_content(state, choice)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            raise malformed(f"unexpected chunk structure ({type(exc).__name__})", data) from exc

    def _feed_with_usage(self, state: StreamState, obj: dict[str, Any], choices: list, usage: dict[str, Any]) -> int:
        """A chunk carrying ``usage``: record it; with a running count, return the tokens it states."""
        counted = state.usage_counted  # completion tokens already attributed to content chunks
        record_usage(state, usage)
        total = state.usage_completion_tokens
        if not choices:
            if obj.get("error"):
                raise server_error(obj)
            record_server_timing(state, obj)  # the final usage chunk: vLLM metrics, llama.cpp timings
            if counted is None:
                state.usage_counted = total
            return 0
        choice = choices[0]
        reason = choice.get("finish_reason")
        if reason:
            state.finish_reason = reason
            if obj.get("error"):
                raise server_error(obj)
            record_server_timing(state, obj)
        reasoning = state.reasoning_chunks
        n = self._choice_content(state, choice)
        if counted is None:  # the first usage seen: a baseline, this chunk counts as sent
            state.usage_counted = total
            return n
        if not n:
            return 0  # tokens counted here without content go to the next content chunk
        state.usage_counted = total
        # the server counts tokens per chunk (continuous usage stats): trust it. (total is an int here: counted is
        # a past total, and a total once stated is never unset; narrowing it would cost a check per chunk)
        stated = total - counted  # type: ignore[operator]
        if stated > 1:
            if state.reasoning_chunks != reasoning:
                state.reasoning_extra_tokens += stated - 1
            return stated
        return n

    def _feed_unusual(self, state: StreamState, data: bytes) -> int:
        """Data that is not a JSON object with ``choices``: the sentinel, errors, usage-only, junk."""
        stripped = data.strip()
        if stripped == _DONE_SENTINEL:
            return DONE
        if not stripped:
            return 0  # an empty ``data:`` keep-alive
        try:
            obj = loads(stripped)
        except ValueError:
            raise malformed("not JSON", data) from None
        if not isinstance(obj, dict):
            raise malformed("not a JSON object", data)
        if obj.get("error") or obj.get("object") == "error":
            raise server_error(obj)
        usage = obj.get("usage")
        if isinstance(usage, dict):
            try:
                record_usage(state, usage)
            except (TypeError, ValueError) as exc:
                raise malformed("bad usage", data) from exc
        record_server_timing(state, obj)
        return 0  # a JSON object without choices (usage-only, ping, metadata): no content

    def _feed_named(self, state: StreamState, data: bytes, event: str) -> int:
        """An event with an ``event:`` name: ``error`` raises; other names are tolerated."""
        if event == "error":
            raise server_error_from_data(data)
        try:
            loads(data)
        except ValueError:
            return 0 if data.strip() != _DONE_SENTINEL else DONE
        return self.feed(state, data)
