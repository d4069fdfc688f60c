"""Value types shared by the workload and the adapters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RequestSample"]


@dataclass(frozen=True, slots=True)
class RequestSample:
    """One request to send, independent of the endpoint's wire format.

    ``prompt`` is the text (chat adapters send it as one user message unless
    ``messages`` is given: a conversation's history, user and assistant turns in order,
    ending with the new user turn; completions and plain-text adapters send ``prompt``,
    which then holds the whole conversation as one text). ``input_tokens`` is the
    workload's estimate of the prompt's token count (the server's ``usage`` wins when
    sent); ``max_tokens`` is the number of output tokens to ask for. ``turn`` is the
    request's turn in its conversation, 1 for the first (and for a single request).
    ``tools``: an agent class's tool definitions (OpenAI's form), sent by the chat adapter,
    with ``parallel_tool_calls`` (:mod:`llmload.workload.agent`); None otherwise. ``tool_choice``:
    ``"none"`` when the model must answer in text though the tools are sent (a sub-agent's last
    allowed turn, :mod:`llmload.workload.fanout`); None: not sent (the API's default, auto).
    ``images``: an image class's ``data:`` URIs, sent after the prompt's text
    (:mod:`llmload.workload.images`); in a later turn of a conversation, every image its
    ``messages`` carry (as chat ``image_url`` parts); None otherwise.
    """

    class_name: str
    prompt: str
    input_tokens: int
    max_tokens: int
    messages: tuple[dict[str, str], ...] | None = None
    turn: int = 1
    tools: tuple[dict[str, Any], ...] | None = None
    parallel_tool_calls: bool = False
    tool_choice: str | None = None
    images: tuple[str, ...] | None = None
