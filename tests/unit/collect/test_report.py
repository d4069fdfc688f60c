"""A run's timeline -> the summary's "server" and "gpu" parts and the stored series."""

from __future__ import annotations

import pytest

from llmload.collect.endpoint_health import EndpointStatus
from llmload.collect.engines import read_engine
from llmload.collect.exposition import parse_exposition
from llmload.collect.gpus import read_gpus
from llmload.collect.report import TIMESERIES_SCHEMA, gpu_summary, server_summary, timeseries
from llmload.collect.timeline import Timeline
from tests.helpers.collect import samples

URL = "http://vllm:8000/metrics"
T0 = 1_700_000_000.0


def vllm(running: int, waiting: int, prompt: int) -> str:
    return (
        f"vllm:num_requests_running {running}\nvllm:num_requests_waiting {waiting}\n"
        f"vllm:prompt_tokens_total {prompt}\nvllm:kv_cache_usage_perc 0.5\n"
    )


def recorded_run() -> Timeline:
    """Three polls of the recorded vLLM server (t0, a mid reading, t1) and the fake sidecar."""
    tl = Timeline(T0)
    gpus = read_gpus(samples("llmload-gpu-sidecar_fake-h200x2.txt"))
    first = read_engine(samples("vllm-0.10-v1_llama-3.1-8b_t0.txt"))
    last = read_engine(samples("vllm-0.10-v1_llama-3.1-8b_t1.txt"))
    tl.add(T0 + 0.01, {URL: first}, gpus)
    tl.add(T0 + 2.01, {URL: None}, {})  # nothing answered at this poll
    tl.add(T0 + 4.01, {URL: last}, gpus)
    return tl


def test_server_summary_of_a_recorded_run():
    tl = recorded_run()
    status = EndpointStatus(URL)
    status.answered(T0 + 0.01)
    status.engine = "vllm"
    s = server_summary(tl, [status], 2.0)
    assert (s["source"], s["interval_s"], s["polls"], s["engines"]) == ("scrape", 2.0, 3, ["vllm"])
    assert s["endpoints"][0]["status"] == "ok" and s["endpoints"][0]["first_seen_s"] == pytest.approx(0.01)
    sig = s["signals"]
    assert sig["running"] == {
        "unit": "requests",
        "samples": 2,
        "mean": 12.0,
        "min": 0.0,
        "max": 24.0,
        "p50": 12.0,
        "p95": 22.8,
        "first": 0.0,
        "last": 24.0,
    }
    assert sig["preemptions"] == {"unit": "requests", "increase": 2.0, "rate_per_s": 0.5, "rate_max_per_s": 0.5}
    assert sig["prompt_tokens"]["increase"] == 126050 - 96900
    assert sig["requests_finished"]["increase"] == 40
    assert sig["ttft_ms"]["count"] == 40
    assert sig["itl_ms"]["count"] == 78340 - 59280
    assert 10 < sig["itl_ms"]["mean"] < 30  # the recorded ITLs are ~18-30 ms
    assert sig["prefix_cache_hit_rate"]["from"] == "counters"
    assert sig["prefix_cache_hit_rate"]["value"] == pytest.approx((29872 - 23008) / (126050 - 96900), rel=1e-5)
    assert s["unavailable"] == []


def test_signals_an_engine_lacks_are_listed_as_unavailable():
    tl = Timeline(T0)
    for i in range(2):
        tl.add(T0 + i, {URL: read_engine(samples("tgi-3.3_llama-3.1-8b.txt"))}, {})
    s = server_summary(tl, [EndpointStatus(URL)], 1.0)
    assert {"kv_cache_usage", "ttft", "preemptions", "prefix_cache_hit_rate"} <= set(s["unavailable"])
    assert "ttft_ms" not in s["signals"] and s["signals"]["e2e_ms"]["count"] == 0  # no request in between


def test_several_endpoints_add_up_and_a_silent_one_adds_nothing():
    tl = Timeline(T0)
    a, b = "http://a:8000/metrics", "http://b:8000/metrics"
    tl.add(
        T0, {a: read_engine(parse_exposition(vllm(2, 0, 100))), b: read_engine(parse_exposition(vllm(3, 1, 10)))}, {}
    )
    tl.add(T0 + 1, {a: read_engine(parse_exposition(vllm(4, 0, 300))), b: None}, {})
    tl.add(
        T0 + 2,
        {a: read_engine(parse_exposition(vllm(6, 0, 500))), b: read_engine(parse_exposition(vllm(5, 2, 60)))},
        {},
    )
    assert tl.gauge("running") == [5.0, 4.0, 11.0]
    assert tl.gauge("kv_cache_usage") == [0.5, 0.5, 0.5]  # mean, not sum
    incs, rates = tl.counter("prompt_tokens")
    assert incs == [None, 200.0, 250.0]  # b's 50 since its last reading (2 s) joins a's 200
    assert rates == [None, 200.0, 225.0]
    assert server_summary(tl, [], 1.0)["signals"]["prompt_tokens"]["increase"] == 450.0
    series = timeseries(tl, 1.0, server=True, gpu=False)
    assert series["server"]["signals"]["prompt_tokens_increase"] == [0.0, 200.0, 450.0]
    assert set(series["server"]["endpoints"]) == {a, b}
    assert series["server"]["endpoints"][b]["signals"]["running"] == [3.0, None, 5.0]


def test_gpu_summary_per_device_and_combined():
    tl = recorded_run()
    status = EndpointStatus("http://gpu:9401/metrics")
    status.answered(T0)
    status.gpus = 2
    g = gpu_summary(tl, [status], 2.0)
    assert g["endpoints"][0]["status"] == "ok" and g["endpoints"][0]["gpus"] == 2
    assert len(g["devices"]) == 2
    d = g["devices"][0]
    assert (d["model"], d["exporter"], d["hostname"]) == ("NVIDIA H200", "llmload", "gpu-node-1")
    assert d["signals"]["utilization"]["mean"] == 1.0 and d["signals"]["utilization"]["samples"] == 2
    assert g["signals"]["power_watts"]["mean"] == pytest.approx(2 * 627.4)  # summed over GPUs
    assert g["signals"]["utilization"]["mean"] == 1.0  # averaged over GPUs
    assert g["signals"]["memory_total_bytes"]["max"] == 2 * 150_754_820_096


def test_a_lost_gpu_is_reported_with_when():
    tl = Timeline(T0)
    up = 'llmload_gpu_up{gpu="0",UUID="GPU-a"} %d\nllmload_gpu_utilization_ratio{gpu="0",UUID="GPU-a"} 0.5\n'
    tl.add(T0, {}, read_gpus(parse_exposition(up % 1)))
    tl.add(T0 + 2, {}, read_gpus(parse_exposition('llmload_gpu_up{gpu="0",UUID="GPU-a"} 0\n')))
    (d,) = gpu_summary(tl, [], 2.0)["devices"]
    assert d["lost_at_s"] == 2.0
    assert d["signals"]["utilization"]["samples"] == 1


def test_stored_series_are_columns_aligned_with_the_polls():
    tl = recorded_run()
    s = timeseries(tl, 2.0, server=True, gpu=True)
    assert s["schema"] == TIMESERIES_SCHEMA and s["started_at"] == T0
    assert s["t_s"] == [0.01, 2.01, 4.01]
    sig = s["server"]["signals"]
    assert sig["running"] == [0.0, None, 24.0]
    assert sig["preemptions_increase"] == [0.0, 0.0, 2.0]
    assert sig["preemptions_rate_per_s"] == [None, None, 0.5]
    assert sig["ttft_mean_ms"][0] is None and sig["ttft_mean_ms"][2] > 0
    assert "endpoints" not in s["server"]  # one endpoint: the combined columns are its own
    assert s["gpu"]["signals"]["utilization"] == [1.0, None, 1.0]
    assert len(s["gpu"]["devices"]) == 2
    (dev,) = [d for k, d in s["gpu"]["devices"].items() if k.startswith("GPU-3d38")]
    assert dev["info"]["gpu"] == "0" and dev["signals"]["power_watts"] == [627.4, None, 627.4]


def test_the_run_summary_keeps_the_engine_histograms_buckets():
    tl = Timeline(T0)
    for i, (run, prompt) in enumerate(((1, 0), (1, 100), (8, 300), (8, 700), (8, 1100), (2, 1200))):
        h = f'vllm:e2e_request_latency_seconds_bucket{{le="1.0"}} {i}\nvllm:e2e_request_latency_seconds_bucket{{le="+Inf"}} {i}\nvllm:e2e_request_latency_seconds_sum {0.5 * i * (i + 1) / 2}\nvllm:e2e_request_latency_seconds_count {i}\n'
        gpu = f'llmload_gpu_utilization_ratio{{gpu="0",UUID="GPU-a"}} {0.1 * run}\n'
        tl.add(
            T0 + 2 * i, {URL: read_engine(parse_exposition(vllm(run, 0, prompt) + h))}, read_gpus(parse_exposition(gpu))
        )
    full = server_summary(tl, [], 2.0)["signals"]
    assert full["e2e_ms"]["count"] == 5  # the run summary keeps the histogram's buckets

