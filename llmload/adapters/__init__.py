"""Endpoint adapters and their registry: a name on the command line -> an adapter class.

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
from llmload.adapters.openai_responses import OpenAIResponsesAdapter
from llmload.adapters.plain_stream import StreamAdapter
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
    "OpenAIResponsesAdapter",
    "RequestSpec",
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
