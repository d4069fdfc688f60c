"""The OpenAI-compatible wire format of the simulator: request fields in, SSE bytes out.

Endpoints (``endpoint`` values): ``chat`` = ``POST /v1/chat/completions``,
``completions`` = ``POST /v1/completions``, ``stream`` = ``POST /v1/stream`` (gateway
style: ``{"prompt", "stream", "max_new_tokens"}``, answered with raw text); and in their
own modules ``responses`` = ``POST /v1/responses`` (:mod:`.api_responses`) and
``messages`` = ``POST /v1/messages`` (:mod:`.api_messages`).

Token limit: ``max_completion_tokens`` then ``max_tokens`` (chat), ``max_tokens``
(completions), ``max_new_tokens`` then ``max_tokens`` (stream); absent means the
configured default. The simulator always generates exactly that many tokens, so
``finish_reason`` is ``"length"``.

``prompt_tokens`` is an estimate: the whitespace-split word count of the prompt
(completions/stream: the string, or the sum over a list of strings; a list of token
ids counts its length) or of every message's text content (chat). ``GenRequest.tokens``
holds those tokens for the prefix cache (:mod:`llmload.sim.prefix`): the words (or token
ids) in order; in chat, the first word of each message is tagged with the message's role,
so that the same words in other turns do not look like the same prompt.

With the engine model, ``usage`` also carries ``"prompt_tokens_details": {"cached_tokens":
N}``, the prompt tokens the prefix cache served (0 with ``--no-prefix-caching``), the
shape OpenAI and llama.cpp send. vLLM sends it only with ``--enable-prompt-tokens-details``
and leaves it out when N is 0. The fixed-latency mode has no KV cache and omits it.

Streaming chat answers as vLLM does: a first chunk ``delta: {"role": "assistant",
"content": ""}`` (sent at once, before the first token), one chunk per token, the
last token's chunk carrying ``finish_reason``, then when
``stream_options.include_usage`` is true a ``choices: []`` chunk with ``usage``, then
``data: [DONE]``. Completions: the same without the role chunk. The usage chunk also
carries ``--per-request-timing`` (:mod:`llmload.sim.timing`). Fields not named
here (n, stop, logprobs, temperature, ...) are accepted and ignored; chat ``tools``: :mod:`.tools`.

With ``--stamp-chunks`` (:attr:`~llmload.sim.config.SimConfig.stamp_chunks`) every
streamed *content* chunk of chat and completions also carries the server's send time
as a top-level ``"llmload_sent_ns": <int>``: ``time.perf_counter_ns()`` (Linux:
CLOCK_MONOTONIC, so comparable with a client's ``perf_counter_ns()`` on the same host)
taken just before the write; tokens written together share one stamp. The role chunk,
the usage chunk, ``[DONE]`` and the raw text of ``/v1/stream`` are never stamped.

Reasoning (``--reasoning-tokens N``, or ``"llmload_reasoning_tokens": N`` in a request
body, which wins): the first ``min(N, limit)`` tokens of the answer are reasoning, the
rest is the answer; the limit counts both, as OpenAI's and Anthropic's do. Chat streams
them as ``delta.reasoning_content`` chunks and reports ``usage.completion_tokens_details
.reasoning_tokens``; Responses and Messages stream them in their own form (see their
modules); completions and ``/v1/stream`` have no reasoning channel and ignore it.

Failure injection: ``"llmload_fail_after": k`` in a request body ends the response after
``k`` tokens (``k`` < the limit) with the API's own mid-stream error (chat/completions:
``data: {"error": ...}`` then ``[DONE]``; ``/v1/stream``: the connection is closed), or
HTTP 500 for a non-streaming request.

Every encoder offers the same methods to the sinks (:mod:`.sinks`): ``head_events()``
(events before the first token), ``token_event(i, last)`` (token ``i``'s event; when a
token also opens or closes a part of the answer, those events come first, in the same
bytes), ``stamped_token_event``, ``end_events(n, cached_tokens)``,
``error_events(message)`` and ``full_body(n, cached_tokens)`` (non-streaming JSON).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from llmload.jsonvalue import Json
from llmload.sim.http11 import error_body
from llmload.sim.image_parts import ImageError, image_tokens
from llmload.sim.timing import ServerTimes, timing_fields

__all__ = ["DONE_EVENT", "WORDS", "ApiError", "BaseEncoder", "Encoder", "GenRequest", "gen_request", "load_body",
           "message_tokens", "parse_request", "prompt_tokens_of", "token_limit"]

#: Output vocabulary: every token is one of these short words (JSON-safe, non-empty).
WORDS = tuple(
    f" {w}".encode()
    for w in (
        "the", "model", "streams", "tokens", "under", "load", "and", "every", "one", "arrives",
        "on", "time", "while", "the", "scheduler", "keeps", "a", "steady", "pace", "of", "words",
        "for", "each", "request", "in", "flight", "so", "latency", "stays", "low", "today", "again",
    )
)  # fmt: skip

DONE_EVENT = b"data: [DONE]\n\n"

_ids = itertools.count(1)


class ApiError(Exception):
    """A request the API refuses; answered with ``status`` and the OpenAI error body (``type_``: its type)."""

    def __init__(self, message: str, status: int = 400, type_: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type_ = type_


@dataclass(frozen=True, slots=True)
class GenRequest:
    """What the simulator needs from a generation request."""

    endpoint: str  # "chat" | "completions" | "stream"
    model: str
    stream: bool
    max_tokens: int
    include_usage: bool
    prompt_tokens: int
    tokens: Sequence[Any] = ()  # the prompt's tokens, for the prefix cache (see the module docstring)
    reasoning_tokens: int = 0  # the first this many tokens are reasoning (<= max_tokens)
    fail_after: int = 0  # > 0: fail the response after this many tokens (< max_tokens)
    limit_given: bool = True  # the body named a token limit (Responses: incomplete vs completed)


def parse_request(
    endpoint: str, body: bytes, model: str, default_max_tokens: int, reasoning_tokens: int = 0
) -> GenRequest:
    """Validate a request body; ``model`` is used when the body names none. Raises :class:`ApiError`.

    ``reasoning_tokens`` is the simulator's ``--reasoning-tokens`` (a body's
    ``llmload_reasoning_tokens`` wins); endpoints without a reasoning channel ignore it.
    """
    obj = load_body(body)
    tokens: list[Any] = []
    if endpoint == "chat":
        messages = obj.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ApiError("'messages' must be a non-empty list")
        for m in messages:
            message_tokens(m, tokens)
        limit = token_limit(obj, "max_completion_tokens", "max_tokens")
    else:
        if "prompt" not in obj:
            raise ApiError("'prompt' is required")
        _prompt_tokens(obj["prompt"], tokens)
        names = ("max_new_tokens", "max_tokens") if endpoint == "stream" else ("max_tokens",)
        limit = token_limit(obj, *names)
    stream = obj.get("stream", endpoint == "stream")
    if not isinstance(stream, bool):
        raise ApiError("'stream' must be a boolean")
    return gen_request(endpoint, obj, model, default_max_tokens, reasoning_tokens, tokens, limit, stream)


def load_body(body: bytes) -> dict[str, Json]:
    """A request body as a JSON object; :class:`ApiError` otherwise."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise ApiError(f"request body is not valid JSON: {e}") from e
    if not isinstance(obj, dict):
        raise ApiError("request body must be a JSON object")
    return obj


def gen_request(
    endpoint: str,
    obj: dict[str, Json],
    model: str,
    default_max_tokens: int,
    reasoning_tokens: int,
    tokens: list[Any],
    limit: int | None,
    stream: bool,
) -> GenRequest:
    """The :class:`GenRequest` of a validated body: the common fields and the ``llmload_*`` test fields."""
    options = obj.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ApiError("'stream_options' must be an object")
    name = obj.get("model") or model
    max_tokens = default_max_tokens if limit is None else limit
    reasoning = _hook(obj, "llmload_reasoning_tokens", 0)
    if reasoning is None:
        reasoning = reasoning_tokens
    fail_after = _hook(obj, "llmload_fail_after", 1) or 0
    return GenRequest(
        endpoint=endpoint,
        model=name if isinstance(name, str) else model,
        stream=stream,
        max_tokens=max_tokens,
        include_usage=bool(options.get("include_usage", False)),
        prompt_tokens=len(tokens),
        tokens=tokens,
        reasoning_tokens=min(reasoning, max_tokens) if endpoint in _REASONING_ENDPOINTS else 0,
        fail_after=fail_after if fail_after < max_tokens else 0,
        limit_given=limit is not None,
    )


_REASONING_ENDPOINTS = frozenset({"chat", "responses", "messages"})


def _hook(obj: dict[str, Json], name: str, least: int) -> int | None:
    """An ``llmload_*`` test field of the body: an integer >= ``least``, or None when absent."""
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ApiError(f"'{name}' must be an integer >= {least}, got {value!r}")
    return value


def token_limit(obj: dict[str, Json], *names: str) -> int | None:
    """The first of the fields ``names`` the body sets: an integer >= 1 (else :class:`ApiError`), or None."""
    for name in names:
        value = obj.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ApiError(f"'{name}' must be an integer >= 1, got {value!r}")
        return value
    return None


def prompt_tokens_of(prompt: Any) -> int:
    """Estimated token count of a completions prompt (see the module docstring)."""
    tokens: list[Any] = []
    _prompt_tokens(prompt, tokens)
    return len(tokens)


def _prompt_tokens(prompt: Any, out: list[Any]) -> None:
    """Append the tokens of a completions prompt to ``out``."""
    if isinstance(prompt, str):
        out += prompt.split()
        return
    if isinstance(prompt, list):
        if all(isinstance(p, int) and not isinstance(p, bool) for p in prompt):
            out += prompt
            return
        if all(isinstance(p, (str, list)) for p in prompt):
            for p in prompt:
                _prompt_tokens(p, out)
            return
    raise ApiError("'prompt' must be a string, a list of strings or a list of token ids")


def message_tokens(message: Any, out: list[Any]) -> None:
    """Append the words of a message to ``out``, the first one tagged with the role.

    ``content`` is a string or a list of parts whose ``text`` counts (chat parts, Responses
    input parts, Messages blocks), and whose images count their patch tokens (:mod:`.image_parts`).
    """
    if not isinstance(message, dict):
        raise ApiError("each message must be an object")
    content = message.get("content")
    start = len(out)
    if isinstance(content, str):
        out += content.split()
    elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        for p in content:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                out += p["text"].split()
            elif isinstance(p, dict):  # an image part: its patch tokens (llmload.sim.image_parts)
                try:
                    image_tokens(p, out)
                except ImageError as e:
                    raise ApiError(f"invalid image: {e}") from None
    if len(out) > start:
        out[start] = f"{message.get('role')}\x1f{out[start]}"


class BaseEncoder:
    """What every endpoint's encoder shares: the words of the answer (see the module docstring).
    ``timing_format``/``times`` (set by the sink before :meth:`end_events`): :mod:`llmload.sim.timing`."""

    __slots__ = ("offset", "req", "times", "timing_format")

    def __init__(self, req: GenRequest, offset: int) -> None:
        self.req = req
        self.offset = offset
        self.timing_format = "off"
        self.times: ServerTimes | None = None

    def word(self, i: int) -> bytes:
        return WORDS[(self.offset + i) % len(WORDS)]

    def text(self, n: int, start: int = 0) -> str:
        """Tokens ``start .. n-1`` as one string."""
        return b"".join(self.word(i) for i in range(start, n)).decode()

    def head_events(self) -> list[bytes]:
        return []

    def token_event(self, i: int, last: bool) -> bytes:
        raise NotImplementedError

    def stamped_token_event(self, i: int, last: bool, sent_ns: int) -> bytes:
        """:meth:`token_event` with a top-level ``"llmload_sent_ns": sent_ns`` (``--stamp-chunks``)."""
        return self.token_event(i, last)[:-3] + b',"llmload_sent_ns":%d}\n\n' % sent_ns

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        raise NotImplementedError

    def error_events(self, message: str) -> list[bytes]:
        raise NotImplementedError

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        raise NotImplementedError


class Encoder(BaseEncoder):
    """Chat and completions bytes of one response; token ``i`` is ``WORDS[(offset + i) % len(WORDS)]``.

    The SSE methods return whole events (``data: ...\\n\\n``), not yet HTTP-chunk framed.
    """

    __slots__ = ("_content_prefix", "_content_suffix", "_envelope", "_final_suffix", "_reasoning_prefix", "reasoning")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, offset)
        self.reasoning = req.reasoning_tokens
        chat = req.endpoint == "chat"
        rid = f"{'chatcmpl' if chat else 'cmpl'}-sim{next(_ids):x}"
        obj = "chat.completion.chunk" if chat else "text_completion"
        self._envelope = b'{"id":"%s","object":"%s","created":%d,"model":%s' % (
            rid.encode(),
            obj.encode(),
            created,
            orjson.dumps(req.model),
        )
        if chat:
            self._content_prefix = b'data: %b,"choices":[{"index":0,"delta":{"content":"' % self._envelope
            self._reasoning_prefix = b'data: %b,"choices":[{"index":0,"delta":{"reasoning_content":"' % self._envelope
            tail = b'"},"logprobs":null,"finish_reason":%b}]}\n\n'
        else:
            self._content_prefix = self._reasoning_prefix = b'data: %b,"choices":[{"index":0,"text":"' % self._envelope
            tail = b'","logprobs":null,"finish_reason":%b,"stop_reason":null}]}\n\n'
        self._content_suffix = tail % b"null"
        self._final_suffix = tail % b'"length"'

    def role_event(self) -> bytes:
        return (
            b'data: %b,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n'
            % self._envelope
        )

    def head_events(self) -> list[bytes]:
        """Chat: the role chunk, sent before the first token (as vLLM does); completions: nothing."""
        return [self.role_event()] if self.req.endpoint == "chat" else []

    def token_event(self, i: int, last: bool) -> bytes:
        prefix = self._reasoning_prefix if i < self.reasoning else self._content_prefix
        return prefix + self.word(i) + (self._final_suffix if last else self._content_suffix)

    def usage_event(self, completion_tokens: int, cached_tokens: int | None = None) -> bytes:
        """The ``choices: []`` usage chunk; ``cached_tokens`` (when known) adds ``prompt_tokens_details``,
        reasoning tokens (when there are) ``completion_tokens_details``."""
        p, c = self.req.prompt_tokens, completion_tokens
        details = b"" if cached_tokens is None else b',"prompt_tokens_details":{"cached_tokens":%d}' % cached_tokens
        reasoning = min(self.reasoning, c)
        if reasoning:
            details += b',"completion_tokens_details":{"reasoning_tokens":%d}' % reasoning
        timing = timing_fields(self.timing_format, self.times, p, c, cached_tokens)
        return b'data: %b,"choices":[],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d%b}%b}\n\n' % (
            self._envelope, p, p + c, c, details, timing,
        )  # fmt: skip

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        """After the last token: the usage chunk when asked for, then ``[DONE]``."""
        if self.req.include_usage:
            return [self.usage_event(n, cached_tokens), DONE_EVENT]
        return [DONE_EVENT]

    def error_events(self, message: str) -> list[bytes]:
        """A mid-stream error as vLLM sends it: ``data: {"error": ...}``, then ``[DONE]``."""
        return [b"data: " + orjson.dumps(error_body(500, message)) + b"\n\n", DONE_EVENT]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        """The non-streaming JSON body of a response with ``n`` tokens."""
        req = self.req
        env = orjson.loads(self._envelope + b"}")
        r = min(self.reasoning, n)
        if req.endpoint == "chat":
            env["object"] = "chat.completion"
            message: dict[str, Json] = {"role": "assistant", "content": self.text(n, r)}
            if r:
                message["reasoning_content"] = self.text(r)
            choice: dict[str, Json] = {"index": 0, "message": message}
        else:
            choice = {"index": 0, "text": self.text(n)}
        choice.update(logprobs=None, finish_reason="length")
        env["choices"] = [choice]
        env["usage"] = {
            "prompt_tokens": req.prompt_tokens,
            "total_tokens": req.prompt_tokens + n,
            "completion_tokens": n,
        }
        if cached_tokens is not None:
            env["usage"]["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        if r:
            env["usage"]["completion_tokens_details"] = {"reasoning_tokens": r}
        return orjson.dumps(env)
