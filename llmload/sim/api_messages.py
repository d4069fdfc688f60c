"""The simulator's Anthropic Messages endpoint: ``POST /v1/messages``.

Request: ``messages`` (a non-empty list of ``user``/``assistant`` messages whose
``content`` is a string or a list of blocks with ``text``), ``system`` (a string or a list
of text blocks), ``max_tokens`` (required, as in the API), ``stream`` (default false);
other fields (``thinking``, ``temperature``, ...) are accepted and ignored; ``tools`` may
make the answer ``tool_use`` blocks (:mod:`llmload.sim.tools`).
The ``anthropic-version`` header is required (400 without it, as Anthropic answers); the
server checks ``x-api-key`` when started with ``--api-key``. The ``llmload_*`` fields of
:mod:`llmload.sim.api` apply; the prompt's tokens are counted as chat's (the system text
first).

Stream, as Anthropic's streaming reference orders it: ``message_start`` (usage
``input_tokens``, ``output_tokens: 1``), ``content_block_start`` (index 0: a ``thinking``
block when there are reasoning tokens, else ``text``), ``ping``; one
``content_block_delta`` per token (``thinking_delta``, then ``text_delta``); between the
two blocks a ``signature_delta``, ``content_block_stop`` and the ``text`` block's
``content_block_start``, sent with the first text token; at the end
``content_block_stop``, ``message_delta`` (``stop_reason: "max_tokens"``: the simulator
always uses the whole limit; ``usage.output_tokens``, thinking included; with the engine
model also the prompt's split ``input_tokens`` / ``cache_read_input_tokens`` by the prefix
cache, which ``message_start``, sent before the prompt is scheduled, cannot know) and
``message_stop``. A mid-stream failure is an ``error`` event (``api_error``).
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson

from llmload.jsonvalue import Json
from llmload.sim.api import ApiError, BaseEncoder, GenRequest, gen_request, load_body, message_tokens, token_limit

__all__ = ["MessagesEncoder", "parse_messages"]

_ids = itertools.count(1)
_SIGNATURE = "c2ltdWxhdGVkIHRoaW5raW5nIHNpZ25hdHVyZQ=="  # the simulator's fixed thinking signature


def parse_messages(body: bytes, model: str, default_max_tokens: int, reasoning_tokens: int = 0) -> GenRequest:
    """Validate a ``/v1/messages`` body (see the module docstring); raises :class:`ApiError`."""
    obj = load_body(body)
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError("messages: must be a non-empty list")
    tokens: list[Any] = []
    system = obj.get("system")
    if system is not None:
        message_tokens({"role": "system", "content": system}, tokens)
    for m in messages:
        if not isinstance(m, dict):
            raise ApiError("messages: each message must be an object")
        if m.get("role") not in ("user", "assistant"):
            raise ApiError(
                f"messages: Unexpected role {m.get('role')!r}. The Messages API accepts a top-level `system` "
                'parameter, not "system" as an input message role.'
            )
        message_tokens(m, tokens)
    limit = token_limit(obj, "max_tokens")
    if limit is None:
        raise ApiError("max_tokens: Field required")
    stream = obj.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError("'stream' must be a boolean")
    return gen_request("messages", obj, model, default_max_tokens, reasoning_tokens, tokens, limit, stream)


def _event(type_: str, **fields: Any) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (type_.encode(), orjson.dumps({"type": type_, **fields}))


class MessagesEncoder(BaseEncoder):
    """Events of one ``/v1/messages`` answer; see the module docstring."""

    __slots__ = ("_text_prefix", "mid", "reasoning")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, offset)
        self.mid = f"msg_sim{next(_ids):x}"
        self.reasoning = req.reasoning_tokens
        self._text_prefix = (
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
            b'"delta":{"type":"text_delta","text":"' % (1 if self.reasoning else 0)
        )

    def _message(self, n: int | None) -> dict[str, Json]:
        """The message object: empty at the start (``n`` None), else with its content and usage."""
        req = self.req
        content: list[dict[str, Json]] = []
        usage: dict[str, Json] = {"input_tokens": req.prompt_tokens, "cache_creation_input_tokens": 0}
        usage.update(cache_read_input_tokens=0, output_tokens=1 if n is None else n)
        if n is not None:
            r = min(self.reasoning, n)
            if r:
                content.append({"type": "thinking", "thinking": self.text(r), "signature": _SIGNATURE})
            if n > r:
                content.append({"type": "text", "text": self.text(n, r)})
        return {
            "id": self.mid,
            "type": "message",
            "role": "assistant",
            "model": req.model,
            "content": content,
            "stop_reason": None if n is None else "max_tokens",
            "stop_sequence": None,
            "usage": usage,
        }

    def _close_thinking(self) -> list[bytes]:
        signature = {"type": "signature_delta", "signature": _SIGNATURE}
        return [_event("content_block_delta", index=0, delta=signature), _event("content_block_stop", index=0)]

    # -- the encoder interface ----------------------------------------------------------------

    def head_events(self) -> list[bytes]:
        block = (
            {"type": "thinking", "thinking": "", "signature": ""} if self.reasoning else {"type": "text", "text": ""}
        )
        return [
            _event("message_start", message=self._message(None)),
            _event("content_block_start", index=0, content_block=block),
            _event("ping"),
        ]

    def token_event(self, i: int, last: bool) -> bytes:
        if i < self.reasoning:
            return (
                b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                b'"delta":{"type":"thinking_delta","thinking":"%b"}}\n\n' % self.word(i)
            )
        event = self._text_prefix + self.word(i) + b'"}}\n\n'
        if i == self.reasoning and i:  # the first answer token: close the thinking block, open the text block
            start = _event("content_block_start", index=1, content_block={"type": "text", "text": ""})
            return b"".join([*self._close_thinking(), start, event])
        return event

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        if n <= self.reasoning:
            events = self._close_thinking()
        else:
            events = [_event("content_block_stop", index=1 if self.reasoning else 0)]
        delta = {"stop_reason": "max_tokens", "stop_sequence": None}
        usage: dict[str, Json] = {"output_tokens": n}
        if cached_tokens is not None:  # the prefix cache's split, known once the prompt was scheduled
            usage.update(self._input_usage(cached_tokens))
        return [*events, _event("message_delta", delta=delta, usage=usage), _event("message_stop")]

    def _input_usage(self, cached: int) -> dict[str, int]:
        """Anthropic counts cached prompt tokens apart: ``input_tokens`` are the uncached ones."""
        p = self.req.prompt_tokens
        return {"input_tokens": p - cached, "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}

    def error_events(self, message: str) -> list[bytes]:
        return [_event("error", error={"type": "api_error", "message": message})]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        message = self._message(n)
        usage = message["usage"]
        if cached_tokens is not None and isinstance(usage, dict):  # always a dict: _message built it
            usage.update(self._input_usage(cached_tokens))
        return orjson.dumps(message)
