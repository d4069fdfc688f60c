"""The simulator's /v1/embeddings: parsing and refusals, deterministic vectors, over HTTP in both modes."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from llmload.errors import ConfigError
from llmload.sim import SimConfig, run_in_thread
from llmload.sim.api import ApiError
from llmload.sim.config import config_to_args
from llmload.sim.embeddings import answer, parse_embeddings, vector
from tests.unit.sim.test_http_server import RawClient


def _parse(obj: object, max_tokens: int = 8):
    return parse_embeddings(json.dumps(obj).encode(), "sim-model", max_tokens)


def test_inputs_in_every_shape():
    assert _parse({"input": "a b c"}).tokens == [3]
    req = _parse({"input": ["a b", "c"], "model": "e5", "encoding_format": "base64"})
    assert (req.texts, req.tokens, req.model, req.encoding) == (["a b", "c"], [2, 1], "e5", "base64")
    assert _parse({"input": [1, 2, 3]}).tokens == [3]  # one input of token ids
    assert _parse({"input": [[1, 2], [3]]}).tokens == [2, 1]
    assert _parse({"input": "x"}).model == "sim-model"


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        ({}, "'input' must be a non-empty"),
        ({"input": []}, "'input' must be a non-empty"),
        ({"input": ""}, "input 0 is empty"),
        ({"input": ["a", " "]}, "input 1 is empty"),
        ({"input": ["a", {"x": 1}]}, "input 1 must be a string"),
        ({"input": "a " * 9}, "input 0 has 9 tokens, over this model's maximum input length of 8 tokens"),
        ({"input": "a", "encoding_format": "int8"}, "'encoding_format' must be one of float, base64"),
    ],
)
def test_refusals(obj, words):
    with pytest.raises(ApiError, match=words) as info:
        _parse(obj)
    assert info.value.status == 400


def test_vectors_are_unit_deterministic_and_differ_by_text():
    a, b = vector("hello world", 16), vector("hello world", 16)
    assert a.dtype == np.float32 and a.shape == (16,)
    assert np.array_equal(a, b) and abs(float(np.linalg.norm(a)) - 1) < 1e-5
    assert not np.array_equal(a, vector("hello there", 16))


def test_answer_float_and_base64():
    doc = json.loads(answer(_parse({"input": ["a b", "c"]}), 6))
    assert [d["index"] for d in doc["data"]] == [0, 1] and len(doc["data"][1]["embedding"]) == 6
    assert doc["usage"] == {"prompt_tokens": 3, "total_tokens": 3}
    b64 = json.loads(answer(_parse({"input": ["a b"], "encoding_format": "base64"}), 6))["data"][0]["embedding"]
    floats = np.frombuffer(base64.b64decode(b64), dtype="<f4")
    assert np.allclose(floats, doc["data"][0]["embedding"])


def test_settings_are_checked_and_travel_to_a_child():
    with pytest.raises(ConfigError, match="--embedding-dim must be >= 1"):
        SimConfig(embedding_dim=0)
    args = config_to_args(SimConfig(embedding_dim=8, embedding_max_tokens=64))
    assert args[args.index("--embedding-dim") + 1] == "8" and args[args.index("--embedding-max-tokens") + 1] == "64"


@pytest.mark.parametrize("config", [SimConfig(port=0, ttft_ms=5, itl_ms=1, embedding_dim=12),
                                    SimConfig(port=0, preset="healthy", embedding_dim=12)], ids=["fixed", "engine"])  # fmt: skip
def test_over_http(config):
    with run_in_thread(config) as server:
        client = RawClient(server.url)
        try:
            status, headers, body = client.request("POST", "/v1/embeddings", {"input": ["one two", "three"]})
            assert status == 200 and headers["content-type"] == "application/json"
            doc = json.loads(body)
            assert len(doc["data"]) == 2 and len(doc["data"][0]["embedding"]) == 12
            assert doc["usage"]["prompt_tokens"] == 3
            status, _, body = client.request("POST", "/v1/embeddings", {"input": ""})  # same connection: kept alive
            assert status == 400 and json.loads(body)["error"]["message"] == "input 0 is empty: every input must hold " \
                "at least one token"
            status, _, _ = client.request("GET", "/v1/embeddings")
            assert status == 405
        finally:
            client.close()


def test_api_key_is_asked():
    with run_in_thread(SimConfig(port=0, ttft_ms=0, itl_ms=0, api_key="k")) as server:
        client = RawClient(server.url)
        try:
            assert client.request("POST", "/v1/embeddings", {"input": "a"})[0] == 401
            assert client.request("POST", "/v1/embeddings", {"input": "a"}, {"Authorization": "Bearer k"})[0] == 200
        finally:
            client.close()
