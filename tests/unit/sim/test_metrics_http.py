"""The engine model over real HTTP: /metrics in vLLM's names, the GPU port, 429, 500 and error events."""

from __future__ import annotations

import argparse
import json
import re
import threading
import urllib.request

import pytest

from llmload.errors import ConfigError
from llmload.sim import SimConfig, preset_params, run_in_thread
from llmload.sim.config import add_arguments, config_from_args, config_to_args
from llmload.sim.metrics import ITL_BUCKETS, REQUEST_LATENCY_BUCKETS, TTFT_BUCKETS
from llmload.sim.sinks import SseSink
from tests.unit.sim.test_http_server import CHAT, RawClient, sse_payloads

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")


def scrape(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """name -> [(labels, value)] of a Prometheus text page."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def value(page, name: str, **labels: str) -> float:
    (v,) = [v for lab, v in page[name] if all(lab.get(k) == x for k, x in labels.items())]
    return v


def stream(url: str, body: dict) -> tuple[int, list]:
    c = RawClient(url)
    try:
        status, _, chunks = c.request("POST", "/v1/chat/completions", body)
    finally:
        c.close()
    return status, chunks


@pytest.fixture(scope="module")
def engine_sim():
    cfg = SimConfig(port=0, engine=preset_params("healthy", time_scale=0.02))
    with run_in_thread(cfg) as server:
        yield server


def test_engine_mode_keeps_the_vllm_wire_format(engine_sim):
    body = {**CHAT, "stream": True, "max_tokens": 5, "stream_options": {"include_usage": True}}
    status, chunks = stream(engine_sim.url, body)
    assert status == 200
    payloads = sse_payloads(chunks)
    assert payloads[-1] == b"[DONE]"
    events = [json.loads(p) for p in payloads[:-1]]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [e["choices"][0]["finish_reason"] for e in events[1:-1]] == [None] * 4 + ["length"]
    assert events[-1]["usage"] == {
        "prompt_tokens": 4,
        "completion_tokens": 5,
        "total_tokens": 9,
        "prompt_tokens_details": {"cached_tokens": 0},  # a 4-token prompt fills no block
    }


def test_metrics_use_vllm_names_labels_and_buckets(engine_sim):
    for _ in range(2):
        assert stream(engine_sim.url, {**CHAT, "stream": True, "max_tokens": 6})[0] == 200
    page = scrape(engine_sim.url)
    labels = {"model_name": "llmload-sim", "engine": "0"}
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"):
        assert value(page, name, **labels) == 0
    assert value(page, "vllm:generation_tokens_total", **labels) >= 12
    assert value(page, "vllm:prompt_tokens_total", **labels) >= 8
    assert value(page, "vllm:num_preemptions_total", **labels) == 0
    assert value(page, "vllm:request_success_total", finished_reason="length") >= 2
    for name, bounds in (
        ("vllm:time_to_first_token_seconds", TTFT_BUCKETS),
        ("vllm:inter_token_latency_seconds", ITL_BUCKETS),
        ("vllm:request_queue_time_seconds", REQUEST_LATENCY_BUCKETS),
        ("vllm:request_prefill_time_seconds", REQUEST_LATENCY_BUCKETS),
        ("vllm:request_decode_time_seconds", REQUEST_LATENCY_BUCKETS),
        ("vllm:e2e_request_latency_seconds", REQUEST_LATENCY_BUCKETS),
    ):
        buckets = page[name + "_bucket"]
        assert [float(lab["le"]) for lab, _ in buckets[:-1]] == list(bounds)
        assert buckets[-1][0]["le"] == "+Inf"
        counts = [v for _, v in buckets]
        assert counts == sorted(counts)  # cumulative
        assert counts[-1] == value(page, name + "_count", **labels) >= 2
    assert value(page, "vllm:inter_token_latency_seconds_count", **labels) >= 10
    info = page["vllm:cache_config_info"][0][0]
    assert info["num_gpu_blocks"] == str(preset_params("healthy").num_kv_blocks)
    gpu = {lab["UUID"]: lab for lab, _ in page["llmload_gpu_utilization_ratio"]}
    ((uuid_, lab),) = gpu.items()
    assert uuid_.startswith("GPU-") and lab["gpu"] == "0" and lab["modelName"] == "NVIDIA A10" and lab["hostname"]
    for name in (
        "llmload_gpu_utilization_ratio",
        "llmload_gpu_memory_bandwidth_utilization_ratio",
        "llmload_gpu_memory_used_bytes",
        "llmload_gpu_memory_total_bytes",
        "llmload_gpu_power_watts",
    ):
        assert len(page[name]) == 1
    assert value(page, "llmload_gpu_memory_used_bytes") == pytest.approx(
        0.9 * value(page, "llmload_gpu_memory_total_bytes"), rel=0.01
    )


def test_gpu_metrics_port_serves_the_gpu_names_alone():
    cfg = SimConfig(port=0, gpu_metrics_port=0, engine=preset_params("healthy", time_scale=0.02))
    with run_in_thread(cfg) as server:
        gpu_url = server.server.gpu_url
        assert gpu_url and gpu_url != server.url
        main, gpu = scrape(server.url), scrape(gpu_url)
        assert "vllm:num_requests_running" in main and not any(n.startswith("llmload_gpu") for n in main)
        assert set(gpu) == {
            "llmload_gpu_utilization_ratio",
            "llmload_gpu_memory_bandwidth_utilization_ratio",
            "llmload_gpu_memory_used_bytes",
            "llmload_gpu_memory_total_bytes",
            "llmload_gpu_power_watts",
        }
        c = RawClient(gpu_url)
        try:
            assert c.request("POST", "/v1/chat/completions", CHAT)[0] == 404
        finally:
            c.close()


def test_fixed_mode_serves_engine_metrics_too():
    with run_in_thread(SimConfig(port=0, ttft_ms=20, itl_ms=1)) as server:
        assert stream(server.url, {**CHAT, "stream": True, "max_tokens": 4})[0] == 200
        page = scrape(server.url)
    assert value(page, "vllm:generation_tokens_total") == 4
    assert value(page, "vllm:time_to_first_token_seconds_count") == 1
    assert 0.015 < value(page, "vllm:time_to_first_token_seconds_sum") < 0.2
    assert value(page, "vllm:inter_token_latency_seconds_count") == 3
    assert "llmload_gpu_utilization_ratio" not in page


def test_full_admission_queue_answers_429_with_the_openai_error():
    p = preset_params("healthy", time_scale=0.01, max_num_seqs=1, max_waiting=1)
    with run_in_thread(SimConfig(port=0, engine=p)) as server:
        results: list[int] = []
        first = threading.Thread(target=lambda: results.append(stream(server.url, {**CHAT, "max_tokens": 300})[0]))
        first.start()
        while value(scrape(server.url), "vllm:num_requests_running") < 1:
            pass
        second = threading.Thread(target=lambda: results.append(stream(server.url, {**CHAT, "max_tokens": 5})[0]))
        second.start()
        while value(scrape(server.url), "vllm:num_requests_waiting") < 1:
            pass
        c = RawClient(server.url)
        try:
            status, headers, raw = c.request("POST", "/v1/chat/completions", {**CHAT, "stream": True})
        finally:
            c.close()
        first.join()
        second.join()
    assert status == 429
    assert headers["content-type"] == "application/json"
    err = json.loads(raw)["error"]
    assert err["code"] == 429 and "waiting" in err["message"] and err["type"] == "rate_limit_exceeded"
    assert results == [200, 200]


def test_too_long_request_answers_400():
    p = preset_params("healthy", time_scale=0.01, max_model_len=10)
    with run_in_thread(SimConfig(port=0, engine=p)) as server:
        status, chunks = stream(server.url, {**CHAT, "stream": True, "max_tokens": 10})
    assert status == 400


@pytest.mark.parametrize("streaming", [True, False])
def test_fragmentation_failure_is_an_error_event_mid_stream_or_a_500(streaming):
    # 3 blocks of 8 tokens, contiguous per sequence. A (prompt 4, 8 tokens) needs a second block
    # at its 5th token; B (prompt 1, 7 tokens: one block all its life), admitted with A or one
    # step later, holds the block after A's while A still runs: 2 blocks are free but not adjacent.
    p = preset_params("kv-fragmented", time_scale=0.05, kv_blocks=3, block_size=8)
    with run_in_thread(SimConfig(port=0, engine=p)) as server:
        a = RawClient(server.url)
        b = RawClient(server.url)
        try:
            a.send("POST", "/v1/chat/completions", {**CHAT, "stream": streaming, "max_tokens": 8})
            b.send("POST", "/v1/completions", {"prompt": "x", "stream": True, "max_tokens": 7})
            status, headers, body = a.response()
            b.response()
        finally:
            a.close()
            b.close()
        page = scrape(server.url)
    assert value(page, "llmload_sim_kv_allocation_failures_total") >= 1
    if not streaming:
        assert status == 500
        assert "contiguous" in json.loads(body)["error"]["message"]
        return
    assert status == 200
    payloads = sse_payloads(body)
    assert payloads[-1] == b"[DONE]"
    err = json.loads(payloads[-2])["error"]
    assert err["code"] == 500 and "fragmented" in err["message"]
    assert any(b'"content":"' in x and b'"role"' not in x for x in payloads)  # tokens came before the error


class _FakeTransport:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data


class _FakeConn:
    def __init__(self) -> None:
        self.transport = _FakeTransport()
        self.finished: list[bool] = []

    def finish(self, keep_alive: bool) -> None:
        self.finished.append(keep_alive)


def test_a_failure_before_the_first_token_is_a_500_even_when_streaming():
    from llmload.sim.api import Encoder, GenRequest

    conn = _FakeConn()
    enc = Encoder(GenRequest("chat", "m", True, 5, False, 3), 0, 0)
    sink = SseSink(conn, enc, True, b"HTTP/1.1 200 OK\r\n\r\n")
    sink.fail("CUDA out of memory")
    assert conn.transport.data.startswith(b"HTTP/1.1 500 ")
    assert b"200 OK" not in conn.transport.data
    assert conn.finished == [True]


def test_mode_rules_on_the_command_line():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    parse = lambda *a: config_from_args(parser.parse_args(["--port", "0", *a]))  # noqa: E731
    assert parse().mode == "fixed" and parse().ttft_ms == 180
    assert parse("--ttft-ms", "50", "--itl-ms", "5").mode == "fixed"
    cfg = parse("--preset", "kv-pressure")
    assert cfg.mode == "engine" and cfg.engine == preset_params("kv-pressure")
    cfg = parse("--max-num-seqs", "8")  # an engine flag alone selects the engine model, healthy
    assert cfg.mode == "engine" and cfg.preset == "healthy" and cfg.engine.max_num_seqs == 8
    assert parse("--mode", "engine").engine == preset_params("healthy")
    cfg = parse("--preset", "prefill-interference", "--chunked-prefill", "--max-num-batched-tokens", "256")
    assert cfg.engine.chunked_prefill and cfg.engine.max_batched_tokens == 256
    with pytest.raises(ConfigError, match="fixed-latency"):
        parse("--preset", "healthy", "--ttft-ms", "50")
    with pytest.raises(ConfigError, match="--max-num-seqs"):
        parse("--mode", "fixed", "--max-num-seqs", "4")
    with pytest.raises(ConfigError, match="kv-blocks"):
        parse("--preset", "healthy", "--kv-blocks", "100000")
    for args in (
        ["--preset", "kv-fragmented", "--time-scale", "0.1", "--no-chunked-prefill", "--gpu-metrics-port", "0"],
        ["--ttft-ms", "5", "--itl-ms", "2", "--stamp-chunks"],
    ):
        cfg = parse(*args)
        assert config_from_args(parser.parse_args(config_to_args(cfg))) == cfg
    assert SimConfig(preset="bandwidth-bound").engine == preset_params("bandwidth-bound")
    assert "preset kv-fragmented" in parse("--preset", "kv-fragmented").describe()


def test_pipelined_requests_are_answered_in_order_by_the_engine_model(engine_sim):
    c = RawClient(engine_sim.url)
    try:
        for n in (3, 4, 5):
            c.send("POST", "/v1/completions", {"prompt": "a b", "stream": True, "max_tokens": n})
        counts = []
        for _ in range(3):
            status, _, chunks = c.response()
            assert status == 200
            counts.append(len(sse_payloads(chunks)) - 1)
    finally:
        c.close()
    assert counts == [3, 4, 5]


def test_stamp_chunks_works_with_the_engine_model():
    cfg = SimConfig(port=0, stamp_chunks=True, engine=preset_params("healthy", time_scale=0.02))
    with run_in_thread(cfg) as server:
        status, chunks = stream(server.url, {**CHAT, "stream": True, "max_tokens": 4})
    events = [json.loads(p) for p in sse_payloads(chunks)[:-1]]
    assert status == 200 and "llmload_sent_ns" not in events[0]  # the role chunk
    sent = [e["llmload_sent_ns"] for e in events[1:]]
    assert len(sent) == 4 and sent == sorted(sent)


def _usage(url: str, content: str, max_tokens: int = 3) -> dict:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": content}],
        "stream": True,
        "max_tokens": max_tokens,
        "stream_options": {"include_usage": True},
    }
    status, chunks = stream(url, body)
    assert status == 200
    return json.loads(sse_payloads(chunks)[-2])["usage"]


def test_a_repeated_prefix_is_served_from_the_cache_and_counted_in_vllm_names():
    cfg = SimConfig(port=0, engine=preset_params("healthy", time_scale=0.02))
    with run_in_thread(cfg) as server:
        shared = " ".join(f"w{i}" for i in range(200))
        first = _usage(server.url, shared + " one two three")
        second = _usage(server.url, shared + " four five six")
        page = scrape(server.url)
    assert first["prompt_tokens_details"] == {"cached_tokens": 0}
    assert second["prompt_tokens"] == 203 and second["prompt_tokens_details"] == {"cached_tokens": 192}
    assert value(page, "vllm:prefix_cache_queries_total", engine="0") == 406
    assert value(page, "vllm:prefix_cache_hits_total", engine="0") == 192
    assert page["vllm:cache_config_info"][0][0]["enable_prefix_caching"] == "True"


def test_no_prefix_caching_reports_zero_cached_tokens_and_fixed_mode_reports_none():
    cfg = SimConfig(port=0, engine=preset_params("healthy", time_scale=0.02, prefix_caching=False))
    shared = " ".join(f"w{i}" for i in range(100))
    with run_in_thread(cfg) as server:
        usages = [_usage(server.url, shared + f" q{i}") for i in range(2)]
        page = scrape(server.url)
    assert [u["prompt_tokens_details"] for u in usages] == [{"cached_tokens": 0}] * 2
    assert value(page, "vllm:prefix_cache_queries_total", engine="0") == 0
    assert page["vllm:cache_config_info"][0][0]["enable_prefix_caching"] == "False"
    with run_in_thread(SimConfig(port=0, ttft_ms=1, itl_ms=1)) as server:
        usage = _usage(server.url, shared)
        page = scrape(server.url)
    assert "prompt_tokens_details" not in usage
    assert value(page, "vllm:prefix_cache_hits_total", engine="0") == 0


def test_non_streaming_body_carries_the_cached_tokens():
    cfg = SimConfig(port=0, engine=preset_params("healthy", time_scale=0.02))
    prompt = " ".join(f"w{i}" for i in range(40))
    with run_in_thread(cfg) as server:
        c = RawClient(server.url)
        try:
            bodies = [
                json.loads(c.request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 2})[2])
                for _ in range(2)
            ]
        finally:
            c.close()
    assert [b["usage"]["prompt_tokens_details"]["cached_tokens"] for b in bodies] == [0, 32]


def test_prefix_caching_flags():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    parse = lambda *a: config_from_args(parser.parse_args(["--port", "0", *a]))  # noqa: E731
    assert parse("--preset", "healthy").engine.prefix_caching is True
    assert parse("--preset", "healthy", "--no-prefix-caching").engine.prefix_caching is False
    assert parse("--preset", "healthy", "--no-enable-prefix-caching").engine.prefix_caching is False  # vLLM's spelling
    assert parse("--preset", "kv-fragmented").engine.prefix_caching is False
    cfg = parse("--preset", "healthy", "--kv-fragmentation")
    assert cfg.engine.prefix_caching is False
    assert config_from_args(parser.parse_args(config_to_args(cfg))) == cfg
    with pytest.raises(ConfigError, match="add --no-prefix-caching"):
        parse("--preset", "kv-fragmented", "--enable-prefix-caching")
    assert "prefix caching on" in parse("--preset", "healthy").describe()
