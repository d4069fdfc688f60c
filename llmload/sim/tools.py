"""Tool-call answers of the simulator's chat endpoint: when a request carries ``tools``, some answers are calls.

A chat request with a non-empty ``tools`` list is answered with tool calls instead of text:

* ``tool_choice`` ``"none"``: never (a text answer); ``"required"``: always; a named function
  (``{"type": "function", "function": {"name": ...}}``): always, that one; ``"auto"`` or absent:
  with probability ``--tool-call-share`` (default 0.75), drawn from the simulator's seeded RNG.
* Which tools: with ``parallel_tool_calls`` (OpenAI's default, true) each offered tool is called
  once; with ``parallel_tool_calls: false`` one tool, drawn among them (a named ``tool_choice``:
  that one).

The answer streams in OpenAI chat's shape, as vLLM does: each call's first chunk carries
``delta.tool_calls[{index, id, type: "function", function: {name, arguments}}]``, the next ones
``function.arguments`` fragments only; the last chunk has ``finish_reason: "tool_calls"``. The
answer's tokens are shared out among the calls in order (at least one each; the arguments of each
call are the JSON ``{"input": "<its words>"}``), after the reasoning tokens if any. A non-streaming
answer holds ``message.tool_calls`` with ``content: null``. Usage, the token limit, ``--stamp-chunks``
and failure injection are those of :mod:`llmload.sim.api`. A malformed ``tools`` or
``tool_choice`` is refused with a 400 naming it.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, fields
from typing import Any

import orjson

from llmload.sim.api import ApiError, BaseEncoder, Encoder, GenRequest

__all__ = ["DEFAULT_TOOL_CALL_SHARE", "ToolCallEncoder", "ToolRequest", "encoder_class", "tool_request"]

#: The share of ``tool_choice: "auto"`` answers that are tool calls, by default.
DEFAULT_TOOL_CALL_SHARE = 0.75

_ids = itertools.count(1)
_OPEN = '{"input":"'
_CLOSE = '"}'


@dataclass(frozen=True, slots=True)
class ToolRequest(GenRequest):
    """A chat request answered with tool calls: the names of the tools called, one per call."""

    calls: tuple[str, ...] = ()


def tool_request(gen: GenRequest, body: bytes, share: float, rng: random.Random) -> GenRequest:
    """``gen`` as a :class:`ToolRequest` when its body's tools are to be called (module docstring), else ``gen``.

    Any other endpoint's request, or a body without ``"tools"``, is returned at once (not parsed again)."""
    if gen.endpoint != "chat" or b'"tools"' not in body:
        return gen
    obj = orjson.loads(body)
    tools = obj.get("tools")
    if tools is None:
        return gen
    names = _tool_names(tools)
    if not names:
        return gen
    choice = obj.get("tool_choice", "auto")
    if choice == "none":
        return gen
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        if name not in names:
            raise ApiError(f"'tool_choice' names the function {name!r}, which is not among 'tools'")
        calls: tuple[str, ...] = (name,)
    elif choice in ("auto", "required"):
        if choice == "auto" and rng.random() >= share:
            return gen
        parallel = obj.get("parallel_tool_calls", True)
        calls = tuple(names) if parallel is not False else (names[rng.randrange(len(names))],)
    else:
        raise ApiError("'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", ...}")
    return ToolRequest(*(getattr(gen, f.name) for f in fields(GenRequest)), calls=calls)


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        raise ApiError("'tools' must be a list")
    names = []
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            raise ApiError("each of 'tools' must be {\"type\": \"function\", \"function\": {\"name\": ...}}")
        names.append(name)
    return names


def encoder_class(req: GenRequest, default: type[BaseEncoder]) -> type[BaseEncoder]:
    """The encoder of ``req``: :class:`ToolCallEncoder` for a :class:`ToolRequest`, else ``default``."""
    return ToolCallEncoder if isinstance(req, ToolRequest) else default


class ToolCallEncoder(Encoder):
    """Chat bytes of an answer made of tool calls (see the module docstring)."""

    __slots__ = ("_call_ids", "_spans")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, created, offset)
        assert isinstance(req, ToolRequest)
        first = min(self.reasoning, req.max_tokens)
        n = req.max_tokens - first
        k = max(1, min(len(req.calls), n))
        # call c's tokens are [_spans[c], _spans[c + 1]) (absolute token indexes)
        self._spans = [first + n * c // k for c in range(k)] + [req.max_tokens]
        self._call_ids = [f"call_sim{next(_ids):x}" for _ in range(k)]

    def _call_of(self, i: int) -> int:
        spans = self._spans
        c = 0
        while i >= spans[c + 1]:
            c += 1
        return c

    def token_event(self, i: int, last: bool) -> bytes:
        if i < self.reasoning:
            return super().token_event(i, last)
        c = self._call_of(i)
        start, end = self._spans[c], self._spans[c + 1]
        word = self.word(i).decode()
        args = (_OPEN if i == start else "") + word + (_CLOSE if i == end - 1 else "")
        call: dict[str, Any] = {"index": c}
        if i == start:
            call.update(id=self._call_ids[c], type="function", function={"name": self._name(c), "arguments": args})
        else:
            call["function"] = {"arguments": args}
        finish = b'"tool_calls"' if last else b"null"
        return b'data: %b,"choices":[{"index":0,"delta":{"tool_calls":%b},"logprobs":null,"finish_reason":%b}]}\n\n' % (
            self._envelope, orjson.dumps([call]), finish,
        )  # fmt: skip

    def _name(self, c: int) -> str:
        calls = self.req.calls  # type: ignore[attr-defined]
        return calls[c]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        """The non-streaming body: ``message.tool_calls`` (``content: null``), ``finish_reason: "tool_calls"``."""
        doc = orjson.loads(super().full_body(n, cached_tokens))
        choice = doc["choices"][0]
        calls = []
        for c in range(len(self._spans) - 1):
            start, end = self._spans[c], min(self._spans[c + 1], n)
            if start >= n:
                break
            args = _OPEN + self.text(end, start) + _CLOSE
            calls.append({"id": self._call_ids[c], "type": "function", "function": {"name": self._name(c), "arguments": args}})
        choice["message"]["content"] = None
        choice["message"]["tool_calls"] = calls
        choice["finish_reason"] = "tool_calls"
        return orjson.dumps(doc)
