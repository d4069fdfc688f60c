"""The OpenAI-compatible wire format of the simulator: request fields in, SSE bytes out.

Endpoints (``endpoint`` values): ``chat`` = ``POST /v1/chat/completions``,
``completions`` = ``POST /v1/completions``, ``stream`` = ``POST /v1/stream`` (gateway
style: ``{"prompt", "stream", "max_new_tokens"}``, answered with raw text).

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
``data: [DONE]``. Completions: the same without the role chunk. Fields not named
here (n, stop, tools, logprobs, temperature, ...) are accepted and ignored.

With ``--stamp-chunks`` (:attr:`~llmload.sim.config.SimConfig.stamp_chunks`) every
streamed *content* chunk of chat and completions also carries the server's send time
as a top-level ``"llmload_sent_ns": <int>``: ``time.perf_counter_ns()`` (Linux:
CLOCK_MONOTONIC, so comparable with a client's ``perf_counter_ns()`` on the same host)
taken just before the write; tokens written together share one stamp. The role chunk,
the usage chunk, ``[DONE]`` and the raw text of ``/v1/stream`` are never stamped.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "DONE_EVENT",
    "WORDS",
    "ApiError",
    "Encoder",
    "GenRequest",
    "parse_request",
    "prompt_tokens_of",
]

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


def parse_request(endpoint: str, body: bytes, model: str, default_max_tokens: int) -> GenRequest:
    """Validate a request body; ``model`` is used when the body names none. Raises :class:`ApiError`."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise ApiError(f"request body is not valid JSON: {e}") from e
    if not isinstance(obj, dict):
        raise ApiError("request body must be a JSON object")
    tokens: list[Any] = []
    if endpoint == "chat":
        messages = obj.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ApiError("'messages' must be a non-empty list")
        for m in messages:
            _message_tokens(m, tokens)
        limit = _limit(obj, "max_completion_tokens", "max_tokens")
    else:
        if "prompt" not in obj:
            raise ApiError("'prompt' is required")
        _prompt_tokens(obj["prompt"], tokens)
        limit = _limit(obj, "max_new_tokens", "max_tokens") if endpoint == "stream" else _limit(obj, "max_tokens")
    prompt_tokens = len(tokens)
    stream = obj.get("stream", endpoint == "stream")
    if not isinstance(stream, bool):
        raise ApiError("'stream' must be a boolean")
    options = obj.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ApiError("'stream_options' must be an object")
    name = obj.get("model") or model
    return GenRequest(
        endpoint=endpoint,
        model=name if isinstance(name, str) else model,
        stream=stream,
        max_tokens=default_max_tokens if limit is None else limit,
        include_usage=bool(options.get("include_usage", False)),
        prompt_tokens=prompt_tokens,
        tokens=tokens,
    )


def _limit(obj: dict[str, Any], *names: str) -> int | None:
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


def _message_tokens(message: Any, out: list[Any]) -> None:
    """Append the words of a chat message to ``out``, the first one tagged with the role."""
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
    if len(out) > start:
        out[start] = f"{message.get('role')}\x1f{out[start]}"


class Encoder:
    """Bytes of one response; token ``i`` is ``WORDS[(offset + i) % len(WORDS)]``.

    The SSE methods return whole events (``data: ...\\n\\n``), not yet HTTP-chunk framed.
    """

    __slots__ = ("_content_prefix", "_content_suffix", "_envelope", "_final_suffix", "offset", "req")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        self.req = req
        self.offset = offset
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
            tail = b'"},"logprobs":null,"finish_reason":%b}]}\n\n'
        else:
            self._content_prefix = b'data: %b,"choices":[{"index":0,"text":"' % self._envelope
            tail = b'","logprobs":null,"finish_reason":%b,"stop_reason":null}]}\n\n'
        self._content_suffix = tail % b"null"
        self._final_suffix = tail % b'"length"'

    def word(self, i: int) -> bytes:
        return WORDS[(self.offset + i) % len(WORDS)]

    def text(self, n: int) -> str:
        """The whole output of ``n`` tokens as one string."""
        return b"".join(self.word(i) for i in range(n)).decode()

    def role_event(self) -> bytes:
        return (
            b'data: %b,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n'
            % self._envelope
        )

    def token_event(self, i: int, last: bool) -> bytes:
        return self._content_prefix + self.word(i) + (self._final_suffix if last else self._content_suffix)

    def stamped_token_event(self, i: int, last: bool, sent_ns: int) -> bytes:
        """:meth:`token_event` with a top-level ``"llmload_sent_ns": sent_ns`` (``--stamp-chunks``)."""
        return self.token_event(i, last)[:-3] + b',"llmload_sent_ns":%d}\n\n' % sent_ns

    def usage_event(self, completion_tokens: int, cached_tokens: int | None = None) -> bytes:
        """The ``choices: []`` usage chunk; ``cached_tokens`` (when known) adds ``prompt_tokens_details``."""
        p, c = self.req.prompt_tokens, completion_tokens
        details = b"" if cached_tokens is None else b',"prompt_tokens_details":{"cached_tokens":%d}' % cached_tokens
        return b'data: %b,"choices":[],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d%b}}\n\n' % (
            self._envelope,
            p,
            p + c,
            c,
            details,
        )

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        """The non-streaming JSON body of a response with ``n`` tokens."""
        req, text = self.req, self.text(n)
        env = orjson.loads(self._envelope + b"}")
        if req.endpoint == "chat":
            env["object"] = "chat.completion"
            choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}}
        else:
            choice = {"index": 0, "text": text}
        choice.update(logprobs=None, finish_reason="length")
        env["choices"] = [choice]
        env["usage"] = {
            "prompt_tokens": req.prompt_tokens,
            "total_tokens": req.prompt_tokens + n,
            "completion_tokens": n,
        }
        if cached_tokens is not None:
            env["usage"]["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        return orjson.dumps(env)
