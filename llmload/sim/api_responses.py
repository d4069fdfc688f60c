"""The simulator's OpenAI Responses endpoint: ``POST /v1/responses``.

Request: ``input`` (a string, or a list of input items whose ``content`` is a string or
a list of parts with ``text``; required), ``instructions``, ``max_output_tokens``,
``stream`` (default false); other fields (``store``, ``reasoning``, ...) are accepted and
ignored; ``tools`` may make the answer function calls (:mod:`llmload.sim.tools`). The prompt's tokens are the words of the instructions and the input
(each item's first word tagged with its role, as chat's; see :mod:`llmload.sim.api`). The
``llmload_*`` fields of :mod:`llmload.sim.api` apply.

Stream, as the OpenAI reference orders it (every event named, with an increasing
``sequence_number``): ``response.created``, ``response.in_progress``, then for the
reasoning tokens (if any) a ``reasoning`` output item (``response.output_item.added``,
``response.content_part.added`` with a ``reasoning_text`` part, one
``response.reasoning_text.delta`` per token, then ``response.reasoning_text.done``,
``response.content_part.done``, ``response.output_item.done``), then the ``message``
item the same way with ``output_text`` deltas, then ``response.incomplete`` (status
``incomplete``, reason ``max_output_tokens``: the simulator always uses the whole limit)
when the request set ``max_output_tokens``, else ``response.completed``. The final
response carries ``usage``: ``input_tokens`` (``input_tokens_details.cached_tokens``: what
the engine model's prefix cache served), ``output_tokens`` (reasoning included) and
``output_tokens_details.reasoning_tokens``. Events up to the first token are sent before
it, like chat's role chunk; a mid-stream failure is ``response.failed`` with
``response.error``.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson

from llmload.jsonvalue import Json
from llmload.sim.api import ApiError, BaseEncoder, GenRequest, gen_request, load_body, message_tokens, token_limit

__all__ = ["ResponsesEncoder", "parse_responses"]

_ids = itertools.count(1)


def parse_responses(body: bytes, model: str, default_max_tokens: int, reasoning_tokens: int = 0) -> GenRequest:
    """Validate a ``/v1/responses`` body (see the module docstring); raises :class:`ApiError`."""
    obj = load_body(body)
    tokens: list[Any] = []
    instructions = obj.get("instructions")
    if isinstance(instructions, str):
        message_tokens({"role": "system", "content": instructions}, tokens)
    given = obj.get("input")
    if isinstance(given, str):
        message_tokens({"role": "user", "content": given}, tokens)
    elif isinstance(given, list) and given:
        if not all(isinstance(item, dict) for item in given):
            raise ApiError("each item of 'input' must be an object")
        for item in given:
            message_tokens(item, tokens)
    else:
        raise ApiError("'input' is required: a string or a non-empty list of input items")
    stream = obj.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError("'stream' must be a boolean")
    limit = token_limit(obj, "max_output_tokens")
    return gen_request("responses", obj, model, default_max_tokens, reasoning_tokens, tokens, limit, stream)


class ResponsesEncoder(BaseEncoder):
    """Events of one ``/v1/responses`` answer; see the module docstring."""

    __slots__ = ("_reasoning_prefix", "_text_prefix", "created", "mid", "reasoning", "rid", "rsid", "seq")

    def __init__(self, req: GenRequest, created: int, offset: int) -> None:
        super().__init__(req, offset)
        n = next(_ids)
        self.rid, self.rsid, self.mid = f"resp_sim{n:x}", f"rs_sim{n:x}", f"msg_sim{n:x}"
        self.created = created
        self.reasoning = req.reasoning_tokens
        self.seq = 0
        self._reasoning_prefix = (
            b'event: response.reasoning_text.delta\ndata: {"type":"response.reasoning_text.delta","item_id":"%s",'
            b'"output_index":0,"content_index":0,"delta":"' % self.rsid.encode()
        )
        self._text_prefix = (
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"%s",'
            b'"output_index":%d,"content_index":0,"delta":"' % (self.mid.encode(), 1 if self.reasoning else 0)
        )

    # -- events -------------------------------------------------------------------------------

    def _event(self, type_: str, **fields: Any) -> bytes:
        fields["sequence_number"] = self.seq
        self.seq += 1
        return b"event: %s\ndata: %s\n\n" % (type_.encode(), orjson.dumps({"type": type_, **fields}))

    def _response(self, status: str, n: int = 0, cached: int | None = None, **extra: Any) -> dict[str, Json]:
        req = self.req
        done = status != "in_progress"
        r = min(self.reasoning, n)
        output: list[dict[str, Json]] = []
        if done and r:
            output.append(self._reasoning_item(n))
        if done and n > r:
            output.append(self._message_item(n, "incomplete" if status == "incomplete" else "completed"))
        usage = None
        if done and status != "failed":
            usage = {
                "input_tokens": req.prompt_tokens,
                "input_tokens_details": {"cached_tokens": cached or 0},
                "output_tokens": n,
                "output_tokens_details": {"reasoning_tokens": r},
                "total_tokens": req.prompt_tokens + n,
            }
        return {
            "id": self.rid,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": req.model,
            "output": output,
            "max_output_tokens": req.max_tokens if req.limit_given else None,
            "usage": usage,
            **extra,
        }

    def _reasoning_item(self, n: int) -> dict[str, Json]:
        text = self.text(min(self.reasoning, n))
        content = [{"type": "reasoning_text", "text": text}]
        return {"id": self.rsid, "type": "reasoning", "summary": [], "content": content, "status": "completed"}

    def _message_item(self, n: int, status: str) -> dict[str, Json]:
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": self.text(n, self.reasoning)}
        return {"id": self.mid, "type": "message", "status": status, "role": "assistant", "content": [part]}

    def _open(self, reasoning: bool) -> list[bytes]:
        if reasoning:
            item = {"id": self.rsid, "type": "reasoning", "summary": [], "content": [], "status": "in_progress"}
            part: dict[str, Json] = {"type": "reasoning_text", "text": ""}
            index, item_id = 0, self.rsid
        else:
            item = {"id": self.mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []}
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            index, item_id = (1 if self.reasoning else 0), self.mid
        return [
            self._event("response.output_item.added", output_index=index, item=item),
            self._event("response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part),
        ]

    def _close(self, reasoning: bool, n: int) -> list[bytes]:
        if reasoning:
            item = self._reasoning_item(n)
            index, kind = 0, "reasoning_text"
        else:
            item = self._message_item(n, "completed")
            index, kind = (1 if self.reasoning else 0), "output_text"
        content = item["content"]
        part = content[0] if isinstance(content, list) else None
        done = "response.reasoning_text.done" if reasoning else "response.output_text.done"
        at = {"item_id": item["id"], "output_index": index, "content_index": 0}
        assert isinstance(part, dict) and part["type"] == kind
        return [
            self._event(done, **at, text=part["text"]),
            self._event("response.content_part.done", **at, part=part),
            self._event("response.output_item.done", output_index=index, item=item),
        ]

    # -- the encoder interface ----------------------------------------------------------------

    def head_events(self) -> list[bytes]:
        created = self._response("in_progress")
        return [
            self._event("response.created", response=created),
            self._event("response.in_progress", response=created),
            *self._open(self.reasoning > 0),
        ]

    def token_event(self, i: int, last: bool) -> bytes:
        if i < self.reasoning:
            seq = self.seq
            self.seq = seq + 1
            return self._reasoning_prefix + self.word(i) + b'","sequence_number":%d}\n\n' % seq
        opened = b""
        if i == self.reasoning and i:  # the first answer token: close the reasoning item, open the message
            opened = b"".join([*self._close(True, i), *self._open(False)])
        seq = self.seq
        self.seq = seq + 1
        return opened + self._text_prefix + self.word(i) + b'","logprobs":[],"sequence_number":%d}\n\n' % seq

    def _final(self, n: int, cached: int | None) -> dict[str, Json]:
        if self.req.limit_given:
            return self._response("incomplete", n, cached, incomplete_details={"reason": "max_output_tokens"})
        return self._response("completed", n, cached)

    def end_events(self, n: int, cached_tokens: int | None = None) -> list[bytes]:
        events = self._close(n <= self.reasoning, n)
        final = self._final(n, cached_tokens)
        return [*events, self._event(f"response.{final['status']}", response=final)]

    def error_events(self, message: str) -> list[bytes]:
        failed = self._response("failed", error={"code": "server_error", "message": message})
        return [self._event("response.failed", response=failed)]

    def full_body(self, n: int, cached_tokens: int | None = None) -> bytes:
        return orjson.dumps(self._final(n, cached_tokens))
