"""The OpenAI (legacy) completions adapter (``openai-completions``, ``POST /v1/completions``).

Sends the sample's ``prompt`` as text; a chunk's generated output is ``choices[0].text``.
Parsing rules shared with chat are in :mod:`llmload.adapters.openai_common`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmload.adapters.openai_common import OpenAIStreamAdapter

if TYPE_CHECKING:
    from llmload.adapters.base import StreamState
    from llmload.workload.request_types import RequestSample

__all__ = ["OpenAICompletionsAdapter"]


class OpenAICompletionsAdapter(OpenAIStreamAdapter):
    """Streams ``/v1/completions`` as Server-Sent Events."""

    name = "openai-completions"
    default_path = "/v1/completions"

    def _input(self, sample: RequestSample) -> tuple[str, Any]:
        return "prompt", sample.prompt

    def _choice_content(self, state: StreamState, choice: dict[str, Any]) -> int:
        text = choice.get("text")
        if text:
            if type(text) is not str:
                raise TypeError("text is not a string")
            state.text_chars += len(text)
            if state.text_parts is not None:
                state.text_parts.append(text)
            return 1
        return 0
