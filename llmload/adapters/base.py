"""The endpoint-adapter interface and its value types.

An adapter turns a :class:`~llmload.workload.request_types.RequestSample` into an HTTP request
(:meth:`Adapter.build_request`) and turns each framed stream event back into token
counts (:meth:`Adapter.feed`). Adapters are **pure**: no clock, no sockets, no logging.
The generic stream loop (``llmload.users.stream``) owns I/O, timing and errors.

Hot-path contract of :meth:`Adapter.feed` (called once per framed event):

* returns ``n > 0`` when the event carried generated content: ``n`` is its token count
  when the server says so, else ``1`` (one content chunk);
* returns ``0`` for events without content (role-only chunk, usage-only chunk, ping, ...);
* returns ``DONE`` (``-1``) for an explicit end-of-stream sentinel such as ``[DONE]``;
* raises :class:`~llmload.errors.MalformedChunk` for an event it cannot parse and
  :class:`~llmload.errors.ServerErrorEvent` for an error reported inside the stream;
* records ``finish_reason`` and usage on the per-request :class:`StreamState`;
* notes which *channel* an event was, for adapters whose API has a reasoning channel:
  ``state.reasoning_chunks += 1`` for a reasoning event, and for an answer or tool-call
  event ``if state.first_output_chunk < 0: state.first_output_chunk = state.reasoning_chunks``
  (the index, among content events, of the first output event). Nothing else per event;
  adapters without a reasoning channel do neither (every content event is output);
* appends the event's answer text to ``state.text_parts`` when that is a list (the
  caller asked for the reply: one ``is not None`` test per event otherwise).

Optional class attributes: ``api_key_env`` (the environment variable holding the key,
default ``OPENAI_API_KEY``) and ``api_headers(api_key)`` (a classmethod returning the
headers every request to the API carries besides its own: credentials and protocol
headers; default ``Authorization: Bearer <key>`` when a key is set). Read them through
:func:`api_headers_for` / :func:`api_key_env_of`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from llmload.jsonvalue import Json

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DONE",
    "Adapter",
    "AdapterConfig",
    "Framing",
    "RequestSpec",
    "StreamState",
    "api_headers_for",
    "api_key_env_of",
    "bearer_headers",
    "body_tail",
    "json_headers",
    "store_usage",
]

#: Returned by :meth:`Adapter.feed` for an explicit end-of-stream sentinel.
DONE = -1

#: Where the API key comes from when an adapter does not say (``--api-key``'s default).
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class Framing(enum.Enum):
    """How the response body is cut into events."""

    SSE = "sse"  # text/event-stream: ``data:`` lines, events end at a blank line
    NDJSON = "ndjson"  # one JSON document per line
    RAW = "raw"  # raw text; every read that returns bytes is one event

    @classmethod
    def from_content_type(cls, content_type: str | None, default: Framing) -> Framing:
        """Framing implied by a response ``Content-Type`` header, else ``default``."""
        ct = (content_type or "").split(";", 1)[0].strip().lower()
        if ct == "text/event-stream":
            return cls.SSE
        if ct in ("application/x-ndjson", "application/jsonl", "application/json-seq", "application/x-jsonlines"):
            return cls.NDJSON
        if ct.startswith("text/plain") or ct == "application/octet-stream":
            return cls.RAW
        return default


@dataclass(frozen=True, slots=True)
class AdapterConfig:
    """Endpoint settings shared by all adapters; built once from the command line.

    ``path`` overrides the adapter's default endpoint path. ``stream_format`` is
    ``"auto"`` (decide from the response Content-Type) or a :class:`Framing` value.
    ``extra_body`` is merged into every request body last (user wins).
    """

    model: str = "llmload-sim"
    path: str | None = None
    include_usage: bool = True
    ignore_eos: bool = False
    temperature: float | None = None
    stream_format: str = "auto"
    extra_body: dict[str, Any] = field(default_factory=dict)
    batch: int = 1  # inputs per request of a batching API (``--inputs-per-request``)


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One HTTP request, as the adapter wants it sent."""

    method: str
    path: str
    body: bytes  # already-encoded JSON
    headers: dict[str, str]
    max_tokens: int  # what was asked for; used to detect early ends
    inputs: int = 0  # texts in a batching API's request (embeddings); 0: not one


class StreamState:
    """Per-request mutable state the adapter fills while parsing a stream.

    ``usage_*`` stay ``None`` unless the server sent them (``usage_reasoning_tokens``:
    ``completion_tokens_details.reasoning_tokens`` / ``output_tokens_details.reasoning_tokens``).
    ``text_chars`` counts characters of generated content (a cheap sanity signal, not a
    token count). Channels (see the module docstring): ``reasoning_chunks`` = content
    events that were reasoning, ``reasoning_extra_tokens`` = tokens beyond one per
    reasoning event where the server stated a count, ``first_output_chunk`` = index among
    content events of the first answer/tool-call event (-1: none, or no channels noted).
    ``usage_counted`` is the running ``completion_tokens`` already attributed to content
    events (servers that send usage on every chunk; see ``openai_common``).
    ``server_timing``/``server_queue_ms``/``server_prefill_ms``/``server_decode_ms``: the
    server's own per-request timing from its last chunk, when it sends one
    (:mod:`llmload.adapters.server_timing`); ``None`` otherwise.
    ``usage_cached_tokens``: the prompt tokens served from the server's prefix cache
    (``prompt_tokens_details.cached_tokens``, Responses ``input_tokens_details.cached_tokens``,
    Anthropic ``cache_read_input_tokens``). ``text_parts`` is ``None`` unless the caller
    wants the answer text (a conversation's next turn re-sends it): then a list, and
    adapters append each event's answer text to it (nothing joined per event; the caller
    joins once, :meth:`reply_text`). ``body_start`` is the stream loop's first read, kept
    (not copied) to tell what the body held when no content could be read from it
    (:mod:`llmload.adapters.sniff`). ``tool_calls``: the tool calls the answer held, assembled
    from their deltas by an adapter that reads them (``[id, name, arguments]`` per call, in
    index order), else ``None``; only events carrying tool calls touch it.
    """

    __slots__ = (
        "body_start",
        "finish_reason",
        "first_output_chunk",
        "reasoning_chunks",
        "reasoning_extra_tokens",
        "server_decode_ms",
        "server_prefill_ms",
        "server_queue_ms",
        "server_timing",
        "text_chars",
        "text_parts",
        "tool_calls",
        "usage_cached_tokens",
        "usage_completion_tokens",
        "usage_counted",
        "usage_prompt_tokens",
        "usage_reasoning_tokens",
    )

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage_prompt_tokens: int | None = None
        self.usage_completion_tokens: int | None = None
        self.usage_reasoning_tokens: int | None = None
        self.usage_counted: int | None = None
        self.text_chars = 0
        self.reasoning_chunks = 0
        self.reasoning_extra_tokens = 0
        self.first_output_chunk = -1
        self.server_timing: str | None = None
        self.server_queue_ms: float | None = None
        self.server_prefill_ms: float | None = None
        self.server_decode_ms: float | None = None
        self.usage_cached_tokens: int | None = None
        self.text_parts: list[str | bytes] | None = None
        self.tool_calls: list[list[str]] | None = None
        self.body_start = b""

    def reply_text(self) -> str:
        """The answer text kept in :attr:`text_parts`, joined (raw reads are bytes: decoded once, together)."""
        parts = self.text_parts or ()
        try:
            return "".join(parts)  # type: ignore[arg-type]
        except TypeError:  # raw-text reads are kept as bytes: a read may split a UTF-8 character
            return b"".join(p if type(p) is bytes else p.encode() for p in parts).decode("utf-8", "replace")  # type: ignore[union-attr]


class Adapter(Protocol):
    """What every endpoint adapter provides. See the module docstring for ``feed``."""

    name: ClassVar[str]
    default_path: ClassVar[str]
    default_framing: ClassVar[Framing]

    def __init__(self, config: AdapterConfig) -> None: ...

    def build_request(self, sample: RequestSample) -> RequestSpec: ...

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int: ...


def body_tail(config: AdapterConfig, **fields: Json) -> dict[str, Json]:
    """The fields every request body of an adapter ends with, built once per adapter.

    ``fields`` first (``stream=True`` and what the API adds), then ``ignore_eos`` and
    ``temperature`` when set, then the user's ``extra_body``, which wins.
    """
    tail = dict(fields)
    if config.ignore_eos:
        tail["ignore_eos"] = True
    if config.temperature is not None:
        tail["temperature"] = config.temperature
    tail.update(config.extra_body)
    return tail


def json_headers(accept: str = "text/event-stream") -> dict[str, str]:
    """The request headers of a JSON POST whose answer streams (no compression: it would delay chunks)."""
    return {"Content-Type": "application/json", "Accept": accept, "Accept-Encoding": "identity"}


def store_usage(
    state: StreamState,
    usage: dict[str, Any],
    prompt: str,
    completion: str,
    completion_details: str,
    prompt_details: str,
) -> None:
    """Store a usage object's token counts on ``state``, under the API's own key names.

    ``prompt``/``completion`` are the counts; ``completion_details.reasoning_tokens`` and
    ``prompt_details.cached_tokens`` are read when present. Once per request (the usage chunk).
    """
    value = usage.get(prompt)
    if value is not None:
        state.usage_prompt_tokens = int(value)
    value = usage.get(completion)
    if value is not None:
        state.usage_completion_tokens = int(value)
    details = usage.get(completion_details)
    if details:
        value = details.get("reasoning_tokens")
        if value is not None:
            state.usage_reasoning_tokens = int(value)
    details = usage.get(prompt_details)
    if details:
        value = details.get("cached_tokens")
        if value is not None:
            state.usage_cached_tokens = int(value)


def bearer_headers(api_key: str) -> dict[str, str]:
    """``Authorization: Bearer <key>`` (OpenAI and every OpenAI-compatible server), or none."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def api_headers_for(adapter_cls: type, api_key: str) -> dict[str, str]:
    """Headers every request of ``adapter_cls``'s API carries: its ``api_headers`` or a Bearer token.

    They hold the secret: callers must never log them.
    """
    own = getattr(adapter_cls, "api_headers", None)
    return dict(own(api_key)) if own is not None else bearer_headers(api_key)


def api_key_env_of(adapter_cls: type) -> str:
    """The environment variable that holds ``adapter_cls``'s API key."""
    return getattr(adapter_cls, "api_key_env", DEFAULT_API_KEY_ENV)
