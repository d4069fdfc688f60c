"""The adapter registry: built-ins, and third-party adapters from a real installed distribution."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from llmload.adapters import (
    BUILTIN_ADAPTERS,
    AnthropicMessagesAdapter,
    OpenAIChatAdapter,
    OpenAICompletionsAdapter,
    OpenAIEmbeddingsAdapter,
    OpenAIResponsesAdapter,
    RerankAdapter,
    StreamAdapter,
    available_adapters,
    get_adapter_class,
)
from llmload.errors import ConfigError

_SERIAL = itertools.count()
FAKE_ADAPTER = """
from llmload.adapters import Framing, RequestSpec

class EchoAdapter:
    name = "echo"
    default_path = "/echo"
    default_framing = Framing.RAW

    def __init__(self, config):
        self.config = config

    def build_request(self, sample):
        return RequestSpec("POST", "/echo", b"{}", {}, sample.max_tokens)

    def feed(self, state, data, event=""):
        return 1 if data else 0

class NotAnAdapter:
    name = "half"
"""


def install_fake_distribution(
    root: Path, entry_points: dict[str, str], monkeypatch: pytest.MonkeyPatch, source: str = FAKE_ADAPTER
) -> None:
    """A real ``*.dist-info`` with an ``entry_points.txt`` on ``sys.path``: what ``pip install`` leaves.

    The plugin module gets a name unique to the test, so no test sees a module another imported.
    """
    module = f"fake_llmload_plugin_{next(_SERIAL)}"
    (root / f"{module}.py").write_text(source)
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    lines = "\n".join(f"{name} = {target.format(module=module)}" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[llmload.adapters]\n{lines}\n")
    monkeypatch.syspath_prepend(str(root))


def test_builtins() -> None:
    assert {
        "openai-chat": OpenAIChatAdapter,
        "openai-completions": OpenAICompletionsAdapter,
        "openai-responses": OpenAIResponsesAdapter,
        "anthropic-messages": AnthropicMessagesAdapter,
        "stream": StreamAdapter,
        "openai-embeddings": OpenAIEmbeddingsAdapter,
        "rerank": RerankAdapter,
    } == BUILTIN_ADAPTERS
    assert get_adapter_class("openai-chat") is OpenAIChatAdapter
    assert get_adapter_class("stream") is StreamAdapter
    assert {"openai-chat", "openai-completions", "stream"} <= set(available_adapters())
    assert available_adapters() == sorted(available_adapters())


def test_unknown_name_lists_the_valid_ones_on_one_line() -> None:
    with pytest.raises(ConfigError) as info:
        get_adapter_class("openai")
    message = str(info.value)
    assert message.startswith("unknown adapter 'openai'; valid adapters: ")
    assert "anthropic-messages, openai-chat, openai-completions, openai-embeddings, openai-responses, rerank, stream" in message
    assert "\n" not in message


def test_entry_point_adapter_is_discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_distribution(tmp_path, {"echo": "{module}:EchoAdapter"}, monkeypatch)
    assert "echo" in available_adapters()
    cls = get_adapter_class("echo")
    assert cls.__name__ == "EchoAdapter"
    assert cls.__module__.startswith("fake_llmload_plugin_")


def test_builtin_names_win_over_entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_distribution(tmp_path, {"openai-chat": "{module}:EchoAdapter"}, monkeypatch)
    assert get_adapter_class("openai-chat") is OpenAIChatAdapter
    assert available_adapters().count("openai-chat") == 1


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (
            "no_such_module_xyz:Adapter",
            r"^adapter 'broken' \(entry point 'no_such_module_xyz:Adapter'\) failed to import: ModuleNotFoundError",
        ),
        (
            "{module}:NotAnAdapter",
            r"^adapter 'broken' .* is not an adapter: missing default_path, default_framing, build_request, feed$",
        ),
        ("{module}:FAKE", r"failed to import: AttributeError"),
    ],
)
def test_broken_entry_points_are_config_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, expected: str
) -> None:
    install_fake_distribution(tmp_path, {"broken": target}, monkeypatch)
    with pytest.raises(ConfigError, match=expected):
        get_adapter_class("broken")


def test_entry_point_that_is_not_a_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = FAKE_ADAPTER + "\ndef make_adapter():\n    pass\n"
    install_fake_distribution(tmp_path, {"fn": "{module}:make_adapter"}, monkeypatch, source)
    with pytest.raises(
        ConfigError, match=r"^adapter 'fn' \(entry point 'fake_llmload_plugin_\d+:make_adapter'\) is not a class"
    ):
        get_adapter_class("fn")
