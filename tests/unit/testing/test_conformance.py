"""The conformance kit itself: it must catch adapters and sidecars that are wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from llmload.adapters import AdapterConfig, OpenAIChatAdapter, RequestSpec, StreamAdapter, StreamState
from llmload.testing import assert_adapter_conforms, check_build_request, iter_transcript_events, run_transcript

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
VLLM = STREAMS / "openai-chat" / "vllm_usage_separate_chunk.sse"


class CountsEveryChoice(OpenAIChatAdapter):
    """A buggy adapter: a role-only chunk counts as content."""

    def _choice_content(self, state: StreamState, choice: dict[str, Any]) -> int:
        return 1 if choice.get("delta") is not None else 0


class NoStreamFlag(OpenAIChatAdapter):
    def build_request(self, sample):  # type: ignore[no-untyped-def]
        spec = super().build_request(sample)
        return RequestSpec(spec.method, spec.path, b'{"max_tokens": 1}', spec.headers, spec.max_tokens)


def copy_fixture(tmp_path: Path, source: Path = VLLM, **expect_changes: Any) -> Path:
    shutil.copy(source, tmp_path / source.name)
    expect = json.loads(source.with_name(source.stem + ".expect.json").read_text())
    expect.update(expect_changes)
    (tmp_path / (source.stem + ".expect.json")).write_text(json.dumps(expect))
    return tmp_path / source.name


def test_a_buggy_adapter_fails_with_the_fixture_and_key_named() -> None:
    with pytest.raises(AssertionError) as info:
        assert_adapter_conforms(CountsEveryChoice(AdapterConfig()), STREAMS / "openai-chat")
    assert "vllm_usage_separate_chunk.sse: content_events: expected 6, got 7" in str(info.value)


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    copy_fixture(tmp_path, tokens_sum=99, usage_prompt_tokens=1)
    with pytest.raises(AssertionError) as info:
        assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)
    message = str(info.value)
    assert "(2 problems)" in message
    assert "tokens_sum: expected 99, got 6" in message
    assert "usage_prompt_tokens: expected 1, got 24" in message


def test_optional_text_chars_is_checked_when_given(tmp_path: Path) -> None:
    copy_fixture(tmp_path, text_chars=5)
    with pytest.raises(AssertionError, match="text_chars: expected 5, got 21"):
        assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)


def test_optional_channel_keys_are_checked_when_given(tmp_path: Path) -> None:
    reasoning = STREAMS / "openai-chat" / "vllm_reasoning.sse"
    copy_fixture(tmp_path, reasoning, reasoning_events=4, first_output_event=4, usage_reasoning_tokens=None)
    assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)
    copy_fixture(tmp_path, reasoning, reasoning_events=3, first_output_event=0, usage_reasoning_tokens=4)
    with pytest.raises(AssertionError) as info:
        assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)
    message = str(info.value)
    assert "(3 problems)" in message
    assert "reasoning_events: expected 3, got 4" in message
    assert "first_output_event: expected 0, got 4" in message
    assert "usage_reasoning_tokens: expected 4, got None" in message


def test_sidecar_problems_are_reported(tmp_path: Path) -> None:
    copy_fixture(tmp_path, contnet_events=6)
    (tmp_path / "orphan.sse").write_bytes(b"data: [DONE]\n\n")
    with pytest.raises(AssertionError) as info:
        assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)
    assert "unknown key 'contnet_events'" in str(info.value)
    assert "orphan.sse: missing sidecar orphan.expect.json" in str(info.value)


def test_an_empty_directory_does_not_pass(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="no transcripts"):
        assert_adapter_conforms(OpenAIChatAdapter(AdapterConfig()), tmp_path)


def test_build_request_checks() -> None:
    assert check_build_request(OpenAIChatAdapter(AdapterConfig())) == []
    assert check_build_request(StreamAdapter(AdapterConfig())) == []
    problems = check_build_request(NoStreamFlag(AdapterConfig()))
    assert problems == [
        "body 'stream' is None, expected true",
        "no max-tokens field equal to 17 (looked for max_tokens, max_completion_tokens, max_output_tokens, max_new_tokens, n_predict, num_predict)",
    ]


def test_unexpected_exceptions_and_bad_returns_are_outcomes_not_crashes(tmp_path: Path) -> None:
    class Raises(OpenAIChatAdapter):
        def feed(self, state, data, event=""):  # type: ignore[no-untyped-def]
            raise KeyError("choices")

    class ReturnsBool(OpenAIChatAdapter):
        def feed(self, state, data, event=""):  # type: ignore[no-untyped-def]
            return True

    assert run_transcript(Raises(AdapterConfig()), VLLM).error == "unexpected KeyError"
    assert run_transcript(ReturnsBool(AdapterConfig()), VLLM).error == "unexpected TypeError"


def test_replay_stops_at_done(tmp_path: Path) -> None:
    path = tmp_path / "after_done.sse"
    path.write_bytes(
        b'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\ndata: {"choices":[{"delta":{"content":"b"}}]}\n\n'
    )
    outcome = run_transcript(OpenAIChatAdapter(AdapterConfig()), path)
    assert (outcome.content_events, outcome.done) == (1, True)


def test_framing_by_extension(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\n\ntwo\r\n")
    (tmp_path / "a.ndjson").write_bytes(b'{"a":1}\n\n{"b":2}\n')
    (tmp_path / "a.json").write_bytes(b"{}")
    assert list(iter_transcript_events(tmp_path / "a.txt")) == [("", b"one"), ("", b""), ("", b"two")]
    assert list(iter_transcript_events(tmp_path / "a.ndjson")) == [("", b'{"a":1}'), ("", b'{"b":2}')]
    with pytest.raises(ValueError, match="unknown transcript extension"):
        list(iter_transcript_events(tmp_path / "a.json"))
    with pytest.raises(ValueError, match="sse_parser"):
        list(iter_transcript_events(VLLM, sse_parser="regex"))
