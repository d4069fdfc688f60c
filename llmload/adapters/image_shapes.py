"""A conversation's image parts in each API's own shape.

The workload keeps a conversation's user messages with images in OpenAI chat's shape
(:func:`llmload.workload.conversation.user_message`): content parts ``{"type": "text", "text"}``
then ``{"type": "image_url", "image_url": {"url": "data:..."}}``. The chat adapter sends that as
it is; the others rewrite those messages' parts here (only messages whose content is a list):

* Responses: ``{"type": "input_text", "text"}`` and ``{"type": "input_image", "image_url": "data:..."}``.
* Anthropic Messages: ``{"type": "text", "text"}`` and ``{"type": "image", "source": {"type": "base64",
  "media_type", "data"}}``; other blocks (``tool_result``, ``tool_use``) stay as they are.

The adapters call these only for a request that carries images (``RequestSample.images``), so
other requests pay nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llmload.jsonvalue import Json

__all__ = ["anthropic_image", "anthropic_image_turns", "responses_image_items"]


def anthropic_image(url: str) -> dict[str, Json]:
    """A ``data:<media type>;base64,<data>`` URI as a Messages API base64 ``image`` block."""
    head, _, data = url.partition(",")
    return {"type": "image", "source": {"type": "base64", "media_type": head[5:].split(";")[0], "data": data}}


def responses_image_items(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses input items with chat content parts rewritten as ``input_text`` / ``input_image`` parts."""
    out = []
    for item in items:
        content = item.get("content")
        if type(content) is list:
            parts = [{"type": "input_image", "image_url": p["image_url"]["url"]} if p.get("type") == "image_url"
                     else {"type": "input_text", "text": p["text"]} if p.get("type") == "text" else p
                     for p in content]  # fmt: skip
            item = {**item, "content": parts}
        out.append(item)
    return out


def anthropic_image_turns(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages API turns with chat ``image_url`` parts rewritten as base64 ``image`` blocks."""
    out = []
    for m in messages:
        content = m.get("content")
        if type(content) is list and any(p.get("type") == "image_url" for p in content):
            blocks = [anthropic_image(p["image_url"]["url"]) if p.get("type") == "image_url" else p for p in content]
            m = {**m, "content": blocks}
        out.append(m)
    return out
