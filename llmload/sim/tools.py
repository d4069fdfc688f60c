"""Tool-call answers of the simulator: when a request carries ``tools``, some answers are calls.

A chat, Responses or Messages request with a non-empty ``tools`` list is answered with tool calls
instead of text (chat here; Responses and Messages in their own shapes, :mod:`llmload.sim.tool_events`):

* ``tool_choice`` ``"none"``: never (a text answer); ``"required"``: always; a named function
  (``{"type": "function", "function": {"name": ...}}``): always, that one; ``"auto"`` or absent:
  with probability ``--tool-call-share`` (default 0.75), drawn from the simulator's seeded RNG.
  Responses: the same values (a named function is ``{"type": "function", "name": ...}``);
  Messages: ``{"type": "auto" | "any" | "tool" | "none", "name"?}``, ``any`` as ``required``.
* Which tools: with ``parallel_tool_calls`` (OpenAI's default, true) each offered tool is called
  once; with ``parallel_tool_calls: false`` (Messages: ``tool_choice.disable_parallel_tool_use``)
  one tool, drawn among them (a named ``tool_choice``: that one).

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

import random
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import orjson

from llmload.sim.api import ApiError, BaseEncoder, Encoder, GenRequest
from llmload.sim.tool_events import CallPlan, MessagesToolEncoder, ResponsesToolEncoder, prompt_tokens

__all__ = ["DEFAULT_TOOL_CALL_SHARE", "EncoderClass", "ToolCallEncoder", "ToolRequest", "encoder_class", "tool_request"]

#: A concrete encoder class, called as ``(request, created, offset)`` (every one but :class:`BaseEncoder` itself).
EncoderClass = Callable[[GenRequest, int, int], BaseEncoder]

#: The share of ``tool_choice: "auto"`` answers that are tool calls, by default.
DEFAULT_TOOL_CALL_SHARE = 0.75

#: The endpoints answered with tool calls, and the shape of their tool definitions.
_SHAPES = {"chat": '{"type": "function", "function": {"name": ...}}', "responses": '{"type": "function", "name": ...}',
           "messages": '{"name": ..., "input_schema": ...}'}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ToolRequest(GenRequest):
    """A chat request answered with tool calls: the names of the tools called, one per call."""

    calls: tuple[str, ...] = ()


def tool_request(gen: GenRequest, body: bytes, share: float, rng: random.Random) -> GenRequest:
    """``gen`` as a :class:`ToolRequest` when its body's tools are to be called (module docstring), else ``gen``.

    A request of another endpoint, or a body without ``"tools"``, is returned at once (not parsed again).
    Responses and Messages requests also get their prompt tokens counted again with the tool
    results (``function_call_output``, ``tool_result``) in place (:func:`~llmload.sim.tool_events.prompt_tokens`).
    """
    if gen.endpoint not in _SHAPES or b'"tools"' not in body:
        return gen
    obj = orjson.loads(body)
    tools = obj.get("tools")
    if tools is None:
        return gen
    names = _tool_names(tools, gen.endpoint)
    if gen.endpoint != "chat":
        tokens = prompt_tokens(gen.endpoint, obj)
        gen = replace(gen, tokens=tokens, prompt_tokens=len(tokens))
    calls = _choose(obj, gen.endpoint, names, share, rng) if names else None
    if not calls:
        return gen
    return ToolRequest(**{f.name: getattr(gen, f.name) for f in fields(GenRequest)}, calls=calls)


def _choose(obj: dict[str, Any], endpoint: str, names: list[str], share: float, rng: random.Random) -> tuple[str, ...]:
    """The tools called (none: a text answer), from ``tool_choice`` and the parallel-call setting."""
    choice: Any = obj.get("tool_choice", "auto")  # the request body's JSON, any shape
    parallel = obj.get("parallel_tool_calls", True) is not False
    if endpoint == "messages":  # Anthropic: {"type": "auto" | "any" | "tool" | "none", "name"?, "disable_parallel_tool_use"?}
        if not isinstance(choice, dict):
            choice = {"type": "auto"} if choice == "auto" else {"type": None}
        parallel = not choice.get("disable_parallel_tool_use", False)
        kind = choice.get("type")
        choice = {"auto": "auto", "any": "required", "none": "none"}.get(kind, choice) if kind != "tool" else \
            {"type": "function", "name": choice.get("name")}  # fmt: skip
    if choice == "none":
        return ()
    if isinstance(choice, dict):
        fn = choice.get("function") if endpoint == "chat" else choice
        name = fn.get("name") if isinstance(fn, dict) else None
        if name not in names:
            raise ApiError(f"'tool_choice' names the function {name!r}, which is not among 'tools'")
        return (name,)
    if choice not in ("auto", "required"):
        raise ApiError("'tool_choice' must be \"none\", \"auto\", \"required\" or name a function")
    if choice == "auto" and rng.random() >= share:
        return ()
    return tuple(names) if parallel else (names[rng.randrange(len(names))],)


def _tool_names(tools: Any, endpoint: str) -> list[str]:
    if not isinstance(tools, list):
        raise ApiError("'tools' must be a list")
    names = []
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) and endpoint == "chat" else t
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            raise ApiError(f"each of 'tools' must be {_SHAPES[endpoint]}")
        names.append(name)
    return names


def encoder_class(req: GenRequest, default: EncoderClass) -> EncoderClass:
    """The encoder of ``req``: a tool-call encoder for a :class:`ToolRequest` (its endpoint's), else ``default``."""
    if not isinstance(req, ToolRequest):
        return default
    return {"responses": ResponsesToolEncoder, "messages": MessagesToolEncoder}.get(req.endpoint, ToolCallEncoder)


class ToolCallEncoder(Encoder):
    """Chat bytes of an answer made of tool calls (see the module docstring)."""

    __slots__ = ("_plan",)

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, created, offset)
        assert isinstance(req, ToolRequest)
        self._plan = CallPlan(req.calls, min(self.reasoning, req.max_tokens), req.max_tokens, "call_sim")

    def token_event(self, i: int, last: bool) -> bytes:
        if i < self.reasoning:
            return super().token_event(i, last)
        plan = self._plan
        c, starts, args = plan.piece(i, self.word(i).decode())
        call: dict[str, Any] = {"index": c}
        if starts:
            call.update(id=plan.ids[c], type="function", function={"name": plan.names[c], "arguments": args})
        else:
            call["function"] = {"arguments": args}
        finish = b'"tool_calls"' if last else b"null"
        return b'data: %b,"choices":[{"index":0,"delta":{"tool_calls":%b},"logprobs":null,"finish_reason":%b}]}\n\n' % (
            self._envelope, orjson.dumps([call]), finish,
        )  # fmt: skip

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        """The non-streaming body: ``message.tool_calls`` (``content: null``), ``finish_reason: "tool_calls"``."""
        doc = orjson.loads(super().full_body(n, cached_tokens))
        choice = doc["choices"][0]
        plan = self._plan
        calls = [{"id": plan.ids[c], "type": "function", "function": {"name": plan.names[c], "arguments": plan.arguments(
            c, self.text(min(plan.spans[c + 1], n), plan.spans[c]))}} for c in plan.sent(n)]  # fmt: skip
        choice["message"]["content"] = None
        choice["message"]["tool_calls"] = calls
        choice["finish_reason"] = "tool_calls"
        return orjson.dumps(doc)

