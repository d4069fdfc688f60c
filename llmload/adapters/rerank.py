"""The rerank adapter (``rerank``, ``POST /v1/rerank``): a query and documents, relevance scores back; not streamed.

The request is ``{"model", "query", "documents": [texts]}`` (llama.cpp's ``llama-server --reranking``, vLLM,
Jina and Cohere-style servers; ``--extra-body`` adds ``top_n`` and the like); the answer one JSON document,
``{"results": [{"index": i, "relevance_score": x}, ...], "usage": {"prompt_tokens": n}}``.

**Documents.** ``--inputs-per-request N`` (default 1) documents per request, each the size of the class's
prompt, as the embeddings adapter builds its texts (:func:`~llmload.adapters.openai_embeddings.batch_texts`);
the query is the prompt's first :data:`QUERY_WORDS` words. The request's ``inputs`` is N.

**Reading** as for embeddings (:mod:`llmload.adapters.json_body`): latency = E2E, 0 output tokens, the
server's prompt tokens. An answer that is not one result per document (``top_n`` of them when the body
asked for fewer), each with a distinct index in range and a numeric ``relevance_score``, fails as
:class:`MalformedRerank` (kind ``malformed_rerank``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from llmload.adapters.base import AdapterConfig, Framing, RequestSpec, StreamState, json_headers
from llmload.adapters.json_body import PENDING, whole_json
from llmload.adapters.openai_embeddings import batch_texts, settle_answer
from llmload.errors import MalformedChunk

if TYPE_CHECKING:
    from llmload.workload.request_types import RequestSample

__all__ = ["QUERY_WORDS", "MalformedRerank", "RerankAdapter", "check_results"]

#: Words of the class's prompt that make the query.
QUERY_WORDS = 8


class MalformedRerank(MalformedChunk):
    """A successful answer that is not one scored result per document."""

    kind = "malformed_rerank"


class RerankAdapter:
    """``POST /v1/rerank`` with ``config.batch`` documents per request (see the module docstring)."""

    name: ClassVar[str] = "rerank"
    default_path: ClassVar[str] = "/v1/rerank"
    default_framing: ClassVar[Framing] = Framing.RAW
    whole_body: ClassVar[bool] = True  # one JSON answer, read whole (llmload.adapters.json_body)

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.path = config.path or self.default_path
        self.batch = max(1, config.batch)
        top_n = config.extra_body.get("top_n")
        self.expected = min(self.batch, top_n) if type(top_n) is int and top_n > 0 else self.batch
        self._headers = json_headers("application/json")

    def build_request(self, sample: RequestSample) -> RequestSpec:
        """POST ``{model, query, documents: [N texts]}``; ``extra_body`` merged last."""
        query = " ".join(sample.prompt.split(" ")[:QUERY_WORDS])
        body = {"model": self.config.model, "query": query, "documents": batch_texts(sample.prompt, self.batch)}
        body.update(self.config.extra_body)
        return RequestSpec("POST", self.path, orjson.dumps(body), dict(self._headers), 0, self.batch)

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        """One read of the body: 0 until the JSON document is whole, then 1 (its checks passed)."""
        doc = whole_json(state, data)
        if doc is PENDING:
            return 0
        check_results(doc, self.batch, self.expected)
        settle_answer(state, doc)
        return 1


def check_results(doc: Any, documents: int, expected: int) -> None:
    """Raise :class:`MalformedRerank` unless ``doc`` holds ``expected`` scored results of distinct documents."""
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise MalformedRerank("the answer has no results list")
    if len(results) != expected:
        raise MalformedRerank(f"the answer holds {len(results)} results for {expected} of {documents} documents")
    seen = set()
    for i, r in enumerate(results):
        index = r.get("index") if isinstance(r, dict) else None
        score = r.get("relevance_score") if isinstance(r, dict) else None
        if type(index) is not int or not 0 <= index < documents or index in seen:
            raise MalformedRerank(f"result {i} has no distinct document index in 0..{documents - 1}: {index!r}")
        if type(score) not in (int, float):
            raise MalformedRerank(f"result {i} has no numeric relevance_score: {score!r}")
        seen.add(index)
