"""Endpoint adapters and their registry: a name on the command line -> an adapter class.

* :mod:`~llmload.adapters.base` — the adapter interface (:class:`Adapter`) and its value types
  (:class:`AdapterConfig`, :class:`RequestSpec`, :class:`StreamState`, :class:`Framing`);
* :mod:`~llmload.adapters.openai_common` — what the OpenAI-compatible adapters share: the request
  body and the streamed-chunk parser (:class:`~llmload.adapters.openai_common.OpenAIStreamAdapter`);
* :mod:`~llmload.adapters.openai_chat` — :class:`OpenAIChatAdapter` (``openai-chat``, ``POST /v1/chat/completions``);
* :mod:`~llmload.adapters.openai_completions` — :class:`OpenAICompletionsAdapter` (``openai-completions``,
  ``POST /v1/completions``);
* :mod:`~llmload.adapters.openai_responses` — :class:`OpenAIResponsesAdapter` (``openai-responses``,
  ``POST /v1/responses``);
* :mod:`~llmload.adapters.anthropic_messages` — :class:`AnthropicMessagesAdapter` (``anthropic-messages``,
  ``POST /v1/messages``);
* :mod:`~llmload.adapters.openai_embeddings` — :class:`OpenAIEmbeddingsAdapter` (``openai-embeddings``,
  ``POST /v1/embeddings``: not streamed, the JSON answer read whole; batched inputs);
* :mod:`~llmload.adapters.rerank` — :class:`RerankAdapter` (``rerank``, ``POST /v1/rerank``: a query and
  documents, relevance scores back; not streamed);
* :mod:`~llmload.adapters.json_body` — a non-streamed JSON answer read whole by the raw reads (embeddings, rerank);
* :mod:`~llmload.adapters.plain_stream` — :class:`StreamAdapter`, the plain streaming gateway (``stream``,
  ``POST /v1/stream``);
* :mod:`~llmload.adapters.tool_shapes` — an agent class's tools and tool turns in the Responses and
  Messages shapes, and tool calls noted from a stream;
* :mod:`~llmload.adapters.image_shapes` — a conversation's image parts (kept in chat's shape) in the
  Responses and Messages shapes;
* :mod:`~llmload.adapters.typed_events` — one SSE event of an API whose events carry their type
  (:func:`~llmload.adapters.typed_events.decode_typed_event`);
* :mod:`~llmload.adapters.framing` — the stream framings that cut a body into events (SSE, NDJSON):
  :class:`~llmload.adapters.framing.SseParser`, :class:`~llmload.adapters.framing.NdjsonParser`;
* :mod:`~llmload.adapters.chunks` — a bad or error-carrying chunk turned into the contract's exception;
* :mod:`~llmload.adapters.server_timing` — the server's own per-request timing, read off the last
  message (:func:`~llmload.adapters.server_timing.record_server_timing`);
* :mod:`~llmload.adapters.sniff` — what a body that gave no content held instead: another framing, or
  another API's events (:func:`~llmload.adapters.sniff.sniff`).

Built-ins are listed explicitly in :data:`BUILTIN_ADAPTERS`. Third-party packages add
adapters through the ``llmload.adapters`` entry-point group, e.g. in ``pyproject.toml``::

    [project.entry-points."llmload.adapters"]
    my-api = "my_package.adapter:MyAdapter"

Built-in names win over entry points of the same name. Nothing is registered on import:
entry points are looked up (and imported) only when a name is asked for.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from llmload.adapters.anthropic_messages import AnthropicMessagesAdapter
from llmload.adapters.base import (
    DONE,
    Adapter,
    AdapterConfig,
    Framing,
    RequestSpec,
    StreamState,
    api_headers_for,
    api_key_env_of,
)
from llmload.adapters.openai_chat import OpenAIChatAdapter
from llmload.adapters.openai_completions import OpenAICompletionsAdapter
from llmload.adapters.openai_embeddings import OpenAIEmbeddingsAdapter
from llmload.adapters.openai_responses import OpenAIResponsesAdapter
from llmload.adapters.plain_stream import StreamAdapter
from llmload.adapters.rerank import RerankAdapter
from llmload.errors import ConfigError

__all__ = [
    "BUILTIN_ADAPTERS",
    "DONE",
    "ENTRY_POINT_GROUP",
    "Adapter",
    "AdapterConfig",
    "AnthropicMessagesAdapter",
    "Framing",
    "OpenAIChatAdapter",
    "OpenAICompletionsAdapter",
    "OpenAIEmbeddingsAdapter",
    "OpenAIResponsesAdapter",
    "RequestSpec",
    "RerankAdapter",
    "StreamAdapter",
    "StreamState",
    "api_headers_for",
    "api_key_env_of",
    "available_adapters",
    "get_adapter_class",
]

#: Entry-point group scanned for third-party adapters.
ENTRY_POINT_GROUP = "llmload.adapters"

#: The adapters shipped with llmload, by name.
BUILTIN_ADAPTERS: dict[str, type] = {
    OpenAIChatAdapter.name: OpenAIChatAdapter,
    OpenAICompletionsAdapter.name: OpenAICompletionsAdapter,
    OpenAIResponsesAdapter.name: OpenAIResponsesAdapter,
    AnthropicMessagesAdapter.name: AnthropicMessagesAdapter,
    StreamAdapter.name: StreamAdapter,
    OpenAIEmbeddingsAdapter.name: OpenAIEmbeddingsAdapter,
    RerankAdapter.name: RerankAdapter,
}

_REQUIRED = ("name", "default_path", "default_framing", "build_request", "feed")


def available_adapters() -> list[str]:
    """Names of every adapter that can be selected: built-ins and installed entry points."""
    names = set(BUILTIN_ADAPTERS)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def get_adapter_class(name: str) -> type:
    """The adapter class registered under ``name``; :class:`ConfigError` if there is none."""
    if name in BUILTIN_ADAPTERS:
        return BUILTIN_ADAPTERS[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                cls = ep.load()
            except Exception as exc:  # a broken plugin must not look like a typo
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                raise ConfigError(f"adapter {name!r} (entry point {ep.value!r}) failed to import: {reason}") from exc
            if not isinstance(cls, type):
                raise ConfigError(f"adapter {name!r} (entry point {ep.value!r}) is not a class: {cls!r}")
            missing = [attr for attr in _REQUIRED if not hasattr(cls, attr)]
            if missing:
                raise ConfigError(
                    f"adapter {name!r} (entry point {ep.value!r}) is not an adapter: missing {', '.join(missing)}"
                )
            return cls
    raise ConfigError(f"unknown adapter {name!r}; valid adapters: {', '.join(available_adapters())}")
