"""The endpoint-adapter interface and its value types.

An adapter turns a :class:`~llmload.workload.types.RequestSample` into an HTTP request
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
* records ``finish_reason`` and usage on the per-request :class:`StreamState`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from llmload.workload.types import RequestSample

__all__ = ["DONE", "Adapter", "AdapterConfig", "Framing", "RequestSpec", "StreamState"]

#: Returned by :meth:`Adapter.feed` for an explicit end-of-stream sentinel.
DONE = -1


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


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One HTTP request, as the adapter wants it sent."""

    method: str
    path: str
    body: bytes  # already-encoded JSON
    headers: dict[str, str]
    max_tokens: int  # what was asked for; used to detect early ends


class StreamState:
    """Per-request mutable state the adapter fills while parsing a stream.

    ``usage_*`` stay ``None`` unless the server sent them. ``text_chars`` counts
    characters of generated content (a cheap sanity signal, not a token count).
    """

    __slots__ = ("finish_reason", "text_chars", "usage_completion_tokens", "usage_prompt_tokens")

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage_prompt_tokens: int | None = None
        self.usage_completion_tokens: int | None = None
        self.text_chars = 0


class Adapter(Protocol):
    """What every endpoint adapter provides. See the module docstring for ``feed``."""

    name: ClassVar[str]
    default_path: ClassVar[str]
    default_framing: ClassVar[Framing]

    def __init__(self, config: AdapterConfig) -> None: ...

    def build_request(self, sample: RequestSample) -> RequestSpec: ...

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int: ...
