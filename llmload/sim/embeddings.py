"""The simulator's embeddings endpoint (``POST /v1/embeddings``): a prefill-only request.

The body is OpenAI's: ``{"model", "input": str | [str] | [int] | [[int]], "encoding_format":
"float" | "base64"}``. All the inputs of a request go to the engine as one request of their
summed prompt tokens (one word = one token, as everywhere in the simulator) and one output
token: the engine model charges their prefill (queue and batching included), the fixed mode
answers after ``--ttft-ms``. The answer is written whole when that token is due::

    {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}, ...],
     "model": ..., "usage": {"prompt_tokens": n, "total_tokens": n}}

Vectors are deterministic: ``--embedding-dim`` float32 values drawn from a seed made of the
input's text (the same text, the same unit vector), base64 of their little-endian bytes for
``encoding_format: "base64"``. Refused with 400 and the OpenAI error body: an empty input (no
input, an empty list, an empty text), an input over ``--embedding-max-tokens``, another
encoding format. The engine's counters see each request as one generated token.
"""

from __future__ import annotations

import argparse
import base64
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from llmload.errors import ConfigError
from llmload.sim import http11
from llmload.sim.api import ApiError, load_body

if TYPE_CHECKING:
    from llmload.sim.http_server import _Connection

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_MAX_TOKENS",
    "PATH",
    "EmbeddingRequest",
    "EmbeddingSink",
    "add_embedding_arguments",
    "answer",
    "check_embedding_settings",
    "parse_embeddings",
    "serve_embeddings",
    "vector",
]

PATH = "/v1/embeddings"
DEFAULT_DIM = 384
DEFAULT_MAX_TOKENS = 512
_ENCODINGS = ("float", "base64")


class EmbeddingRequest:
    """The parsed request: its inputs as texts (token-id inputs as their ids joined), their token counts."""

    __slots__ = ("encoding", "model", "texts", "tokens")

    def __init__(self, model: str, texts: list[str], tokens: list[int], encoding: str) -> None:
        self.model, self.texts, self.tokens, self.encoding = model, texts, tokens, encoding


def add_embedding_arguments(g: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    g.add_argument("--embedding-dim", type=int, default=DEFAULT_DIM,
                   help=f"dimension of the vectors /v1/embeddings answers (default {DEFAULT_DIM})")  # fmt: skip
    g.add_argument("--embedding-max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                   help="/v1/embeddings refuses (400) an input over this many tokens "
                   f"(default {DEFAULT_MAX_TOKENS})")  # fmt: skip


def check_embedding_settings(dim: int, max_tokens: int) -> None:
    """One error line for a dimension or a length limit below 1."""
    for flag, v in (("--embedding-dim", dim), ("--embedding-max-tokens", max_tokens)):
        if v < 1:
            raise ConfigError(f"sim: {flag} must be >= 1, got {v}")


def parse_embeddings(body: bytes, model: str, max_tokens: int) -> EmbeddingRequest:
    """The request in ``body``; :class:`ApiError` (400) for what the API refuses (module docstring)."""
    obj = load_body(body)
    raw = obj.get("input")
    if isinstance(raw, str) or (isinstance(raw, list) and raw and all(_is_int(t) for t in raw)):
        raw = [raw]  # one text, or one input of token ids
    if not isinstance(raw, list) or not raw:
        raise ApiError("'input' must be a non-empty string or a non-empty list of strings or token-id lists")
    texts, tokens = [], []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            n, text = len(item.split()), item
        elif isinstance(item, list) and all(_is_int(t) for t in item):
            n, text = len(item), " ".join(map(str, item))
        else:
            raise ApiError(f"input {i} must be a string or a list of token ids")
        if n == 0:
            raise ApiError(f"input {i} is empty: every input must hold at least one token")
        if n > max_tokens:
            raise ApiError(f"input {i} has {n} tokens, over this model's maximum input length of {max_tokens} tokens; "
                           "shorten it")  # fmt: skip
        texts.append(text)
        tokens.append(n)
    encoding = obj.get("encoding_format") or "float"
    if encoding not in _ENCODINGS:
        raise ApiError(f"'encoding_format' must be one of {', '.join(_ENCODINGS)}, got {encoding!r}")
    name = obj.get("model")
    return EmbeddingRequest(name if isinstance(name, str) and name else model, texts, tokens, encoding)


def _is_int(t: Any) -> bool:
    return isinstance(t, int) and not isinstance(t, bool)


def vector(text: str, dim: int) -> np.ndarray:
    """The unit float32 vector of ``text`` (the same text, the same vector)."""
    v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(dim, dtype=np.float32)
    return v / np.float32(np.linalg.norm(v) or 1.0)


def answer(req: EmbeddingRequest, dim: int) -> bytes:
    """The JSON answer of ``req`` (module docstring)."""
    data = []
    for i, text in enumerate(req.texts):
        v = vector(text, dim)
        embedding: Any = base64.b64encode(v.astype("<f4").tobytes()).decode() if req.encoding == "base64" else v
        data.append({"object": "embedding", "index": i, "embedding": embedding})
    n = sum(req.tokens)
    doc = {"object": "list", "data": data, "model": req.model, "usage": {"prompt_tokens": n, "total_tokens": n}}
    return orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)


class EmbeddingSink:
    """What the engine calls for an embeddings request: the whole answer when its one token is due."""

    __slots__ = ("conn", "dim", "keep_alive", "req", "seq")

    def __init__(self, conn: _Connection, req: EmbeddingRequest, dim: int, keep_alive: bool) -> None:
        self.conn, self.req, self.dim, self.keep_alive = conn, req, dim, keep_alive
        self.seq: Any = None

    def emit(self, n: int, finished: bool) -> None:
        if not finished:
            return
        body = answer(self.req, self.dim)
        self._write(http11.head(200, "application/json", length=len(body), keep_alive=self.keep_alive) + body)

    def fail(self, message: str) -> None:
        self._write(http11.json_response(500, http11.error_body(500, message), keep_alive=self.keep_alive))

    def flush_head(self) -> None:
        """Nothing precedes the answer."""

    def _write(self, data: bytes) -> None:
        if self.conn.transport is not None:
            self.conn.transport.write(data)
        self.conn.finish(self.keep_alive)


def serve_embeddings(conn: _Connection, req: http11.Request) -> None:
    """Answer ``POST /v1/embeddings`` on ``conn`` (the HTTP layer's one call for this route)."""
    app, ka = conn.app, req.keep_alive
    cfg = app.config
    if conn.gpu_only:  # the GPU gauges' own port
        conn._error(404, f"no route for {req.method} {req.path}", ka)
        return
    if not app.authorized(req, "embeddings"):
        conn._error(401, "invalid or missing API key: send it as Authorization: Bearer <key>", ka,
                    "authentication_error")  # fmt: skip
        return
    if req.method != "POST":
        conn._error(405, f"use POST for {req.path}", ka)
        return
    assert app.engine is not None
    try:
        emb = parse_embeddings(req.body, cfg.model, cfg.embedding_max_tokens)
        sink = EmbeddingSink(conn, emb, cfg.embedding_dim, ka)
        seq = app.engine.submit(sink, 1, sum(emb.tokens))
    except ApiError as e:
        conn._error(e.status, e.message, ka, e.type_)
        return
    sink.seq = seq
    conn.busy = True
    conn.seq = seq
