"""``--api openai-embeddings`` against llama.cpp's ``llama-server --embeddings`` (build b11434, CPU, one thread).

The suite's random-weight tiny model (tests/engines/make_gguf.py: hidden 256, 4 layers) embeds: its GGUF names no
pooling type, so the server needs ``--pooling mean`` (without it every request answers 400 "Pooling type 'none' is
not OAI compatible. Please use a different pooling type"). Its vectors are meaningless (random weights) but
well-formed: 256 floats per input, or base64 of the same 256 float32 values, ``usage.prompt_tokens`` stated.

* the wire through the adapter's checks: float and base64 answers of the same dimension;
* a 1,4 ladder of 4-text batches: every request ok, the server's prompt tokens counted, the verdict judged on
  latency p50 (E2E);
* bad inputs give the server's words: an empty input is ``http_400`` "Input content cannot be empty"; an input
  over the physical batch (512 tokens) is ``http_500`` "input (N tokens) is too large to process. increase the
  physical batch size (current batch size: 512)" -- llama.cpp answers this client error with a 500.

Rerank: ``llama-server --reranking`` answers ``/v1/rerank`` on the same model (relevance scores from random
weights): ``--api rerank`` runs against it, every request ok, the documents and the server's prompt tokens counted;
an empty document list is ``http_400`` '"documents" must be a non-empty string array'.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from llmload.adapters.openai_embeddings import check_embeddings
from tests.engines.crosscheck import run_llmload, write_profile
from tests.engines.llama_server import llama_server, missing_reason
from tests.engines.make_gguf import ensure_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.llamacpp,
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]


@pytest.fixture(scope="module")
def llama_embed(tmp_path_factory):
    """llama-server --embeddings --pooling mean with the tiny model, 4 slots of 2048 tokens."""
    with llama_server(ensure_model("tiny"), alias="tiny", parallel=4, ctx_size=8192,
                      log_dir=tmp_path_factory.mktemp("llama-embed"), extra=("--embeddings", "--pooling", "mean")) as srv:  # fmt: skip
        yield srv


def post(url: str, body: dict) -> tuple[int, dict]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("POST", "/v1/embeddings", json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_float_and_base64_answers_pass_the_adapters_checks(llama_embed):
    texts = ["the quick brown fox", "jumps over the lazy dog"]
    status, doc = post(llama_embed.url, {"model": "tiny", "input": texts, "encoding_format": "float"})
    assert status == 200 and check_embeddings(doc, 2) == 256 and doc["usage"]["prompt_tokens"] > 0, doc
    status, b64 = post(llama_embed.url, {"model": "tiny", "input": texts, "encoding_format": "base64"})
    assert status == 200 and check_embeddings(b64, 2) == 256 and isinstance(b64["data"][0]["embedding"], str)


def test_a_ladder_of_batches(llama_embed, tmp_path):
    profile = write_profile(tmp_path / "p.toml", '{dist = "uniform", min = 60, max = 120}', 1)
    s, records, output = run_llmload(llama_embed.url, tmp_path, "--api", "openai-embeddings", "--inputs-per-request", "4",
                                     "--profile", profile, "--ladder", "1,4", "--step-time", "5s", "--step-warmup", "1s",
                                     timeout=90)  # fmt: skip
    assert s["overall"]["errors"] == 0 and s["errors_by_kind"] == {}, output[-2000:]
    ok = [r for r in records if r["outcome"] == "ok"]
    assert ok and all(r["inputs"] == 4 and r["input_tokens_from_usage"] and r["output_tokens"] == 0 for r in ok)
    e = s["classes"]["req"]["inputs"]
    assert e["inputs"] == 4 * e["requests"] and e["input_tokens"] == sum(r["input_tokens"] for r in ok)
    v = s["verdict"]
    assert set(v["limits"]) == {"e2e_p50_ms", "error_rate"} and v["status"] in ("ok", "breach"), v
    if v["breach"]:
        assert v["breach"]["metric"] == "e2e_p50", v


@pytest.mark.parametrize(
    ("flags", "kind", "words"),
    [
        (["--extra-body", '{"input": ""}'], "http_400", "Input content cannot be empty"),
        (["--extra-body", json.dumps({"input": " ".join(f"word{i}" for i in range(400))})], "http_500",
         "is too large to process. increase the physical batch size (current batch size: 512)"),
    ],
    ids=["empty", "too-long"],
)  # fmt: skip
def test_bad_inputs_give_the_servers_message(llama_embed, tmp_path, flags, kind, words):
    profile = write_profile(tmp_path / "p.toml", 20, 1)
    s, _, output = run_llmload(llama_embed.url, tmp_path, "--api", "openai-embeddings", "--profile", profile,
                               "-u", "1", "-r", "1", "-t", "2s", *flags)  # fmt: skip
    c = s["classes"]["req"]
    assert c["ok"] == 0 and set(c["errors_by_kind"]) == {kind}, output[-2000:]
    assert words in c["errors_examples"][kind], c["errors_examples"]


@pytest.fixture(scope="module")
def llama_rerank(tmp_path_factory):
    """llama-server --reranking with the tiny model."""
    with llama_server(ensure_model("tiny"), alias="tiny", parallel=4, ctx_size=8192,
                      log_dir=tmp_path_factory.mktemp("llama-rerank"), extra=("--reranking",)) as srv:  # fmt: skip
        yield srv


def test_rerank_runs_and_counts_documents(llama_rerank, tmp_path):
    profile = write_profile(tmp_path / "p.toml", '{dist = "uniform", min = 60, max = 120}', 1)
    s, records, output = run_llmload(llama_rerank.url, tmp_path, "--api", "rerank", "--inputs-per-request", "4",
                                     "--profile", profile, "-u", "2", "-r", "2", "-t", "4s")  # fmt: skip
    c = s["classes"]["req"]
    assert c["errors"] == 0 and c["ok"] >= 5 and c["output_tokens"] == 0, output[-2000:]
    ok = [r for r in records if r["outcome"] == "ok"]
    assert all(r["inputs"] == 4 and r["input_tokens_from_usage"] for r in ok)
    assert c["inputs"]["inputs"] == 4 * c["ok"] and c["inputs"]["input_tokens"] == sum(r["input_tokens"] for r in ok)


def test_rerank_without_documents_gives_the_servers_message(llama_rerank, tmp_path):
    profile = write_profile(tmp_path / "p.toml", 20, 1)
    s, _, output = run_llmload(llama_rerank.url, tmp_path, "--api", "rerank", "--profile", profile, "-u", "1", "-r", "1",
                               "-t", "2s", "--extra-body", '{"documents": []}')  # fmt: skip
    c = s["classes"]["req"]
    assert c["ok"] == 0 and set(c["errors_by_kind"]) == {"http_400"}, output[-2000:]
    assert '"documents" must be a non-empty string array' in c["errors_examples"]["http_400"]
