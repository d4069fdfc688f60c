"""Tool-call answers in the Responses and Messages shapes, the plan every tool-call answer follows, and the
prompt of a Responses or Messages request that holds tool results.

:class:`CallPlan`: an answer of ``max_tokens`` tokens made of k tool calls shares its tokens among
them in order (at least one each; after the reasoning tokens, in chat); each call's arguments are
the JSON ``{"input": "<its words>"}``, one word per token. :mod:`llmload.sim.tools` decides
when an answer is made of calls; the encoders here stream them:

* Responses (:class:`ResponsesToolEncoder`): ``response.created``, ``response.in_progress``, then
  per call a ``function_call`` output item (``response.output_item.added`` with its ``call_id``
  and ``name``, one ``response.function_call_arguments.delta`` per token,
  ``response.function_call_arguments.done``, ``response.output_item.done``), then
  ``response.completed`` whose ``output`` holds the calls and ``usage`` the counts.
* Messages (:class:`MessagesToolEncoder`): ``message_start``, per call a ``tool_use`` block
  (``content_block_start`` with its ``id`` and ``name``, one ``input_json_delta`` per token,
  ``content_block_stop``), ``ping`` after the first start, then ``message_delta`` with
  ``stop_reason: "tool_use"`` and ``message_stop``.

These answers have no reasoning part (``--reasoning-tokens`` does not apply to them). Their
prompt tokens (:func:`prompt_tokens`) count the tool results where they stand, as chat counts a
``role: tool`` message: a ``function_call_output``'s ``output``, a ``tool_result`` block's
``content``.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson

from llmload.jsonvalue import Json
from llmload.sim.api import BaseEncoder, GenRequest, message_tokens

__all__ = ["CallPlan", "MessagesToolEncoder", "ResponsesToolEncoder", "prompt_tokens"]

_ids = itertools.count(1)
_OPEN = '{"input":"'
_CLOSE = '"}'


class CallPlan:
    """How an answer's tokens make its tool calls: call ``c`` has tokens ``[spans[c], spans[c + 1])``,
    its arguments ``{"input": "<its words>"}`` streamed one word per token."""

    __slots__ = ("ids", "names", "spans")

    def __init__(self, names: tuple[str, ...], first: int, total: int, id_prefix: str) -> None:
        n = total - first
        k = max(1, min(len(names), n))
        self.spans = [first + n * c // k for c in range(k)] + [total]
        self.ids = [f"{id_prefix}{next(_ids):x}" for _ in range(k)]
        self.names = names[:k]

    def call_of(self, i: int) -> int:
        spans = self.spans
        c = 0
        while i >= spans[c + 1]:
            c += 1
        return c

    def piece(self, i: int, word: str) -> tuple[int, bool, str]:
        """Token ``i``: (its call, whether it starts the call, its fragment of the call's arguments)."""
        c = self.call_of(i)
        start, end = self.spans[c], self.spans[c + 1]
        return c, i == start, (_OPEN if i == start else "") + word + (_CLOSE if i == end - 1 else "")

    def arguments(self, c: int, text: str) -> str:
        """Call ``c``'s whole arguments, given its words."""
        return _OPEN + text + _CLOSE

    def sent(self, n: int) -> range:
        """The calls begun within the first ``n`` tokens."""
        return range(sum(1 for s in self.spans[:-1] if s < n))


def prompt_tokens(endpoint: str, obj: dict[str, Any]) -> list[Any]:
    """The prompt's tokens of a valid Responses (``endpoint`` ``"responses"``) or Messages body, tool results included."""
    tokens: list[Any] = []
    if endpoint == "responses":
        if isinstance(obj.get("instructions"), str):
            message_tokens({"role": "system", "content": obj["instructions"]}, tokens)
        given: Any = obj.get("input")  # a valid body's: a string or a list of items
        for item in [{"role": "user", "content": given}] if isinstance(given, str) else given:
            if item.get("type") == "function_call_output":
                item = {"role": "tool", "content": item.get("output")}
            message_tokens(item, tokens)
        return tokens
    if obj.get("system") is not None:
        message_tokens({"role": "system", "content": obj["system"]}, tokens)
    for m in obj["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            parts = [_result_part(b) if isinstance(b, dict) and b.get("type") == "tool_result" else b for b in content]
            m = {"role": m.get("role"), "content": parts}
        message_tokens(m, tokens)
    return tokens


def _result_part(block: dict[str, Any]) -> dict[str, Json]:
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return {"type": "text", "text": content if isinstance(content, str) else ""}


def _event(type_: str, **fields: Any) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (type_.encode(), orjson.dumps({"type": type_, **fields}))


class ResponsesToolEncoder(BaseEncoder):
    """Events of a ``/v1/responses`` answer made of function calls (module docstring)."""

    __slots__ = ("created", "plan", "rid", "seq")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, offset)
        self.plan = CallPlan(req.calls, 0, req.max_tokens, "call_sim")  # type: ignore[attr-defined]
        self.rid = f"resp_simt{next(_ids):x}"
        self.created = created
        self.seq = 0

    def _event(self, type_: str, **fields: Any) -> bytes:
        fields["sequence_number"] = self.seq
        self.seq += 1
        return _event(type_, **fields)

    def _item(self, c: int, n: int | None) -> dict[str, Json]:
        """Call ``c`` as an output item: in progress (``n`` None) or done within ``n`` tokens."""
        plan = self.plan
        args = "" if n is None else plan.arguments(c, self.text(min(plan.spans[c + 1], n), plan.spans[c]))
        return {"id": f"fc_{plan.ids[c]}", "type": "function_call", "status": "in_progress" if n is None else "completed",
                "arguments": args, "call_id": plan.ids[c], "name": plan.names[c]}  # fmt: skip

    def _response(self, status: str, n: int = 0, cached: int | None = None, **extra: Any) -> dict[str, Json]:
        req = self.req
        done = status == "completed"
        usage = None
        if done:
            usage = {"input_tokens": req.prompt_tokens, "input_tokens_details": {"cached_tokens": cached or 0},
                     "output_tokens": n, "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": req.prompt_tokens + n}  # fmt: skip
        output = [self._item(c, n) for c in self.plan.sent(n)] if done else []
        return {"id": self.rid, "object": "response", "created_at": self.created, "status": status, "error": None,
                "incomplete_details": None, "model": req.model, "output": output,
                "max_output_tokens": req.max_tokens if req.limit_given else None, "usage": usage, **extra}  # fmt: skip

    def _close(self, c: int) -> list[bytes]:
        item = self._item(c, self.plan.spans[c + 1])
        return [self._event("response.function_call_arguments.done", item_id=item["id"], output_index=c,
                            arguments=item["arguments"]),
                self._event("response.output_item.done", output_index=c, item=item)]  # fmt: skip

    def head_events(self) -> list[bytes]:
        created = self._response("in_progress")
        return [self._event("response.created", response=created), self._event("response.in_progress", response=created),
                self._event("response.output_item.added", output_index=0, item=self._item(0, None))]  # fmt: skip

    def token_event(self, i: int, last: bool) -> bytes:
        c, starts, args = self.plan.piece(i, self.word(i).decode())
        opened = b""
        if starts and c:
            opened = b"".join([*self._close(c - 1), self._event("response.output_item.added", output_index=c,
                                                                 item=self._item(c, None))])  # fmt: skip
        return opened + self._event("response.function_call_arguments.delta", item_id=f"fc_{self.plan.ids[c]}",
                                    output_index=c, delta=args)  # fmt: skip

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        final = self._response("completed", n, cached_tokens)
        return [*self._close(self.plan.call_of(max(n, 1) - 1)), self._event("response.completed", response=final)]

    def error_events(self, message: str) -> list[bytes]:
        failed = self._response("failed", error={"code": "server_error", "message": message})
        return [self._event("response.failed", response=failed)]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        return orjson.dumps(self._response("completed", n, cached_tokens))


class MessagesToolEncoder(BaseEncoder):
    """Events of a ``/v1/messages`` answer made of ``tool_use`` blocks (module docstring)."""

    __slots__ = ("mid", "plan")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, offset)
        self.plan = CallPlan(req.calls, 0, req.max_tokens, "toolu_sim")  # type: ignore[attr-defined]
        self.mid = f"msg_simt{next(_ids):x}"

    def _block(self, c: int, n: int | None) -> dict[str, Json]:
        plan = self.plan
        given = {} if n is None else {"input": self.text(min(plan.spans[c + 1], n), plan.spans[c])}
        return {"type": "tool_use", "id": plan.ids[c], "name": plan.names[c], "input": given}

    def _message(self, n: int | None, cached: int | None = None) -> dict[str, Json]:
        req = self.req
        p = req.prompt_tokens
        usage = {"input_tokens": p - (cached or 0), "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": cached or 0, "output_tokens": 1 if n is None else n}  # fmt: skip
        content = [] if n is None else [self._block(c, n) for c in self.plan.sent(n)]
        return {"id": self.mid, "type": "message", "role": "assistant", "model": req.model, "content": content,
                "stop_reason": None if n is None else "tool_use", "stop_sequence": None, "usage": usage}  # fmt: skip

    def head_events(self) -> list[bytes]:
        return [_event("message_start", message=self._message(None)),
                _event("content_block_start", index=0, content_block=self._block(0, None)), _event("ping")]  # fmt: skip

    def token_event(self, i: int, last: bool) -> bytes:
        c, starts, args = self.plan.piece(i, self.word(i).decode())
        delta = _event("content_block_delta", index=c, delta={"type": "input_json_delta", "partial_json": args})
        if starts and c:
            return b"".join([_event("content_block_stop", index=c - 1),
                             _event("content_block_start", index=c, content_block=self._block(c, None)), delta])  # fmt: skip
        return delta

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        usage: dict[str, Json] = {"output_tokens": n}
        if cached_tokens is not None:
            usage.update(input_tokens=self.req.prompt_tokens - cached_tokens, cache_creation_input_tokens=0,
                         cache_read_input_tokens=cached_tokens)  # fmt: skip
        return [_event("content_block_stop", index=self.plan.call_of(max(n, 1) - 1)),
                _event("message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None}, usage=usage),
                _event("message_stop")]  # fmt: skip

    def error_events(self, message: str) -> list[bytes]:
        return [_event("error", error={"type": "api_error", "message": message})]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        return orjson.dumps(self._message(n, cached_tokens))
