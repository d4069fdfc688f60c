"""--per-request-timing: the simulator's true queue/prefill/decode in vLLM's or llama.cpp's format."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import orjson
import pytest

from llmload.adapters import AdapterConfig, OpenAIChatAdapter, OpenAICompletionsAdapter
from llmload.errors import ConfigError
from llmload.sim import SimConfig, run_in_thread
from llmload.sim.config import add_arguments, config_from_args, config_to_args
from llmload.sim.timing import server_times, timing_fields
from tests.helpers.sim_wire import post, replay, sse_events


def test_engine_model_times_split_at_scheduling_and_first_token():
    seq = SimpleNamespace(t_arrival=10.0, t_scheduled=10.5, t_first=10.625, t_last=11.125)
    assert server_times(seq) == (0.5, 0.125, 0.5)


def test_fixed_latency_requests_are_scheduled_on_arrival():
    seq = SimpleNamespace(t0=3.0, t_first=3.05, t_last=3.25)  # FixedLatencyEngine's Sequence
    assert server_times(seq) == pytest.approx((0.0, 0.05, 0.2))
    assert server_times(None) is None


def test_vllm_metrics_have_vllms_field_names_and_meaning():
    extra = timing_fields("vllm", (0.5, 0.125, 0.5), prompt=10, generated=5, cached=None)
    m = orjson.loads(b"{" + extra[1:] + b"}")["metrics"]
    assert m == {"time_to_first_token_ms": 125.0, "generation_time_ms": 500.0, "queue_time_ms": 500.0,
                 "mean_itl_ms": 125.0, "tokens_per_second": 8.0}  # fmt: skip
    one = orjson.loads(b"{" + timing_fields("vllm", (0, 0.1, 0), 10, 1, None)[1:] + b"}")["metrics"]
    assert "mean_itl_ms" not in one  # undefined for one token (vLLM leaves it out)


def test_llamacpp_timings_count_the_computed_prompt_and_no_queue():
    t = orjson.loads(b"{" + timing_fields("llamacpp", (0.5, 0.02, 0.04), 100, 5, 60)[1:] + b"}")["timings"]
    assert (t["cache_n"], t["prompt_n"], t["prompt_ms"], t["predicted_n"], t["predicted_ms"]) == (60, 40, 20.0, 5, 40.0)
    assert t["predicted_per_token_ms"] == 8.0 and "queue_time_ms" not in t
    assert timing_fields("off", (1, 1, 1), 1, 1, None) == b""


@pytest.fixture(scope="module", params=["vllm", "llamacpp", "off"])
def served(request):
    with run_in_thread(SimConfig(port=0, ttft_ms=20, itl_ms=1, per_request_timing=request.param)) as server:
        yield request.param, server.url


@pytest.mark.parametrize(("path", "adapter"), [("/v1/chat/completions", OpenAIChatAdapter),
                                          ("/v1/completions", OpenAICompletionsAdapter)])  # fmt: skip
def test_the_adapters_read_what_the_simulator_sends(served, path, adapter):
    fmt, url = served
    body = {"model": "m", "max_tokens": 4, "stream": True, "stream_options": {"include_usage": True},
            **({"messages": [{"role": "user", "content": "hi"}]} if "chat" in path else {"prompt": "hi"})}  # fmt: skip
    _, raw = post(url, path, body)
    state, events, tokens, done, error = replay(adapter(AdapterConfig()), raw)
    assert (events, done, error) == (4, True, None)
    if fmt == "off":
        assert state.server_timing is None
        return
    assert state.server_timing == fmt
    assert 15 < state.server_prefill_ms < 200  # the fixed TTFT, 20 ms, on a loaded machine
    assert state.server_queue_ms == (0.0 if fmt == "vllm" else None)  # fixed mode: no queue; llama.cpp: not said
    assert 0 <= state.server_decode_ms < 200
    last = json.loads(sse_events(raw)[-2][1])
    assert ("metrics" if fmt == "vllm" else "timings") in last and last["choices"] == []


def test_flag_round_trips_and_rejects_unknown_formats():
    p = argparse.ArgumentParser()
    add_arguments(p)
    cfg = config_from_args(p.parse_args(["--per-request-timing", "llamacpp"]))
    assert cfg.per_request_timing == "llamacpp"
    assert config_from_args(p.parse_args(config_to_args(cfg))).per_request_timing == "llamacpp"
    assert config_from_args(p.parse_args([])).per_request_timing == "vllm"
    with pytest.raises(ConfigError, match="per-request-timing"):
        SimConfig(per_request_timing="tgi")
