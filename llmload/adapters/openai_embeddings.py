"""The OpenAI embeddings adapter (``openai-embeddings``, ``POST /v1/embeddings``): a non-streaming API.

The request is ``{"model", "input": [texts], "encoding_format"}``; the answer one JSON document,
``{"data": [{"embedding": [floats] | "<base64>", "index": i}, ...], "usage": {"prompt_tokens": n}}``.

**Batches.** ``--inputs-per-request N`` (default 1) sends N inputs per request, each the size of
the class's prompt: the class's prompt and N-1 rotations of its words (same words, so about the
same token count; different text, so no cache answers one from another). The request's
``inputs`` (:attr:`~llmload.adapters.base.RequestSpec.inputs`) is N; its asked input tokens N
times the class's.

**Reading.** The body is read whole (:mod:`llmload.adapters.json_body`). The read that completes
it is the request's one content event, so its TTFT is the time to the whole answer (= its E2E),
it has no TPOT (0 output tokens: ``usage.completion_tokens`` is set to 0), and its
input tokens are the server's ``usage.prompt_tokens``. An answer that parses but is not N
embeddings of one dimension (floats, or base64 strings of float32) fails as
:class:`MalformedEmbeddings` (kind ``malformed_embeddings``) with what was wrong. Errors the
server states (an empty input, one over the model's length) are HTTP errors with the server's
message, as for every adapter.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from llmload.adapters.base import AdapterConfig, Framing, RequestSpec, StreamState, json_headers
from llmload.adapters.chunks import shorten
from llmload.adapters.json_body import PENDING, whole_json
from llmload.errors import MalformedChunk

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["ENCODINGS", "MalformedEmbeddings", "OpenAIEmbeddingsAdapter", "batch_texts", "check_embeddings",
           "settle_answer"]

#: The ``encoding_format`` values the API takes (``--extra-body '{"encoding_format": "base64"}'`` picks one).
ENCODINGS = ("float", "base64")


class MalformedEmbeddings(MalformedChunk):
    """A successful answer that is not one embedding per input, all of one dimension."""

    kind = "malformed_embeddings"


class OpenAIEmbeddingsAdapter:
    """``POST /v1/embeddings`` with ``config.batch`` inputs per request (see the module docstring)."""

    name: ClassVar[str] = "openai-embeddings"
    default_path: ClassVar[str] = "/v1/embeddings"
    default_framing: ClassVar[Framing] = Framing.RAW
    #: The answer is one JSON document, read whole (a JSON Content-Type is read with :attr:`default_framing`).
    whole_body: ClassVar[bool] = True

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        self.batch = max(1, config.batch)
        tail: dict[str, Any] = {"encoding_format": "float"}
        tail.update(config.extra_body)  # the user's wins (encoding_format, dimensions, ...)
        self._tail = tail
        self._headers = json_headers("application/json")

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{model, input: [N texts], encoding_format}``; ``extra_body`` merged last."""
        body = {"model": self.config.model, "input": batch_texts(sample.prompt, self.batch)}
        body.update(self._tail)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), 0, self.batch)

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """One read of the body: 0 until the JSON document is whole, then 1 (its checks passed)."""
        doc = whole_json(state, data)
        if doc is PENDING:
            return 0
        check_embeddings(doc, self.batch, data)
        settle_answer(state, doc)
        return 1


def settle_answer(state: StreamState, doc: dict[str, Any]) -> None:
    """A whole answer's facts on the state: the server's prompt tokens, 0 output tokens, a finish."""
    usage = doc.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        state.usage_prompt_tokens = usage["prompt_tokens"]
    state.usage_completion_tokens = 0
    state.finish_reason = "stop"


def batch_texts(prompt: str, n: int) -> list[str]:
    """``prompt`` and ``n - 1`` rotations of its words (distinct texts of the same words)."""
    if n <= 1:
        return [prompt]
    words = prompt.split(" ")
    step = max(1, len(words) // n)
    return [prompt] + [" ".join(words[k:] + words[:k]) for k in (i * step % max(1, len(words)) for i in range(1, n))]


def check_embeddings(doc: Any, inputs: int, body: bytes = b"") -> int:
    """The embeddings' dimension when ``doc`` holds one per input, all of one dimension; else raise."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise MalformedEmbeddings(f"the answer has no data list: {shorten(body.decode('utf-8', 'replace'), 80)}",
                                  data=body[:200])  # fmt: skip
    data = doc["data"]
    if len(data) != inputs:
        raise MalformedEmbeddings(f"the answer holds {len(data)} embeddings for {inputs} inputs", data=body[:200])
    dims = {_dimension(item, i) for i, item in enumerate(data)}
    if len(dims) != 1:
        raise MalformedEmbeddings(f"the embeddings differ in dimension: {sorted(dims)}", data=body[:200])
    dim = dims.pop()
    if dim == 0:
        raise MalformedEmbeddings("the embeddings are empty (dimension 0)", data=body[:200])
    return dim


def _dimension(item: Any, i: int) -> int:
    vector = item.get("embedding") if isinstance(item, dict) else None
    if isinstance(vector, list):
        if not all(type(x) is float or type(x) is int for x in vector):
            raise MalformedEmbeddings(f"embedding {i} holds something other than numbers")
        return len(vector)
    if isinstance(vector, str):
        try:
            raw = base64.b64decode(vector, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MalformedEmbeddings(f"embedding {i} is a string but not base64") from exc
        if len(raw) % 4:
            raise MalformedEmbeddings(f"embedding {i}: {len(raw)} base64 bytes are not float32 values")
        return len(raw) // 4
    raise MalformedEmbeddings(f"item {i} of data has no embedding (a list of floats or a base64 string)")
