"""Each engine's recorded /metrics -> the common server signals; detection; aliases; label sets."""

from __future__ import annotations

import pytest

from llmload.collect.engines import ENGINES, detect_engine, read_engine
from llmload.collect.exposition import Samples, parse_exposition
from tests.helpers.collect import samples


def test_vllm_v1_every_signal():
    r = read_engine(samples("vllm-0.10-v1_llama-3.1-8b_t1.txt"))
    assert r.engine == "vllm"
    assert r.gauges == {"waiting": 3.0, "running": 24.0, "kv_cache_usage": 0.41}
    assert r.counters == {
        "preemptions": 2.0,
        "prompt_tokens": 126050.0,
        "generation_tokens": 78500.0,
        "requests_finished": 160.0,
        "prefix_cache_queries": 126050.0,
        "prefix_cache_hits": 29872.0,
    }
    assert set(r.histograms) == {"ttft", "itl", "queue_time", "e2e", "prefill_time", "decode_time"}
    assert r.histograms["itl"].count == 78340  # inter_token_latency, not the deprecated per-request TPOT
    assert r.histograms["e2e"].bounds[0] == 0.3


def test_vllm_renamed_metrics_are_read_once_under_either_name():
    both = "vllm:kv_cache_usage_perc 0.5\nvllm:gpu_cache_usage_perc 0.5\n"  # 0.9/0.10 emit both
    old = 'vllm:gpu_cache_usage_perc 0.25\nvllm:gpu_prefix_cache_hits_total 7\nvllm:time_per_output_token_seconds_bucket{le="+Inf"} 3\n'
    assert read_engine(parse_exposition(both)).gauges["kv_cache_usage"] == 0.5
    r = read_engine(parse_exposition(old))
    assert r.gauges["kv_cache_usage"] == 0.25
    assert r.counters["prefix_cache_hits"] == 7.0
    assert r.histograms["itl"].count == 3


def test_vllm_data_parallel_engines_add_up_and_kv_usage_is_their_mean():
    t = "".join(
        f'vllm:num_requests_running{{engine="{e}",model_name="m"}} {run}\n'
        f'vllm:kv_cache_usage_perc{{engine="{e}",model_name="m"}} {kv}\n'
        f'vllm:prompt_tokens_total{{engine="{e}",model_name="m"}} {p}\n'
        for e, run, kv, p in (("0", 10, 0.2, 100), ("1", 6, 0.6, 50))
    )
    r = read_engine(parse_exposition(t))
    assert r.gauges["running"] == 16.0
    assert r.gauges["kv_cache_usage"] == pytest.approx(0.4)
    assert r.counters["prompt_tokens"] == 150.0


def test_sglang_every_signal():
    r = read_engine(samples("sglang-0.5_qwen2.5-7b.txt"))
    assert r.engine == "sglang"
    assert r.gauges == {"waiting": 5.0, "running": 31.0, "kv_cache_usage": 0.58, "prefix_cache_hit_rate": 0.2418}
    assert r.counters["preemptions"] == 3.0  # num_retracted_requests_total, not the per-step gauge
    assert r.counters["prefix_cache_hits"] == 43417.0
    assert r.counters["prefix_cache_queries"] == r.counters["prompt_tokens"] == 173800.0
    assert set(r.histograms) == {"ttft", "itl", "queue_time", "e2e"}
    assert r.histograms["queue_time"].bounds[0] == 0.0


def test_tgi_every_signal_it_has():
    r = read_engine(samples("tgi-3.3_llama-3.1-8b.txt"))
    assert r.engine == "tgi"
    assert r.gauges == {"waiting": 2.0, "running": 27.0}  # no KV gauge in TGI
    assert r.counters == {"prompt_tokens": 230850.0, "generation_tokens": 130500.0, "requests_finished": 246.0}
    assert set(r.histograms) == {"itl", "queue_time", "e2e"}  # no TTFT histogram in TGI
    assert r.histograms["e2e"].count == 246
    assert len(r.histograms["e2e"].bounds) == 35


def test_llamacpp_current_and_older_builds():
    new = read_engine(samples("llamacpp-b6500_server--metrics.txt"))
    old = read_engine(samples("llamacpp-b3800_server--metrics_with-kv-cache.txt"))
    assert new.engine == old.engine == "llamacpp"
    assert new.gauges == {"waiting": 2.0, "running": 4.0}
    assert new.counters == {"prompt_tokens": 33065.0, "generation_tokens": 7801.0}
    assert new.histograms == {}
    assert old.gauges["kv_cache_usage"] == pytest.approx(0.221191)


def test_llamacpp_prompt_cache_counters_give_the_prefix_cache_signals():
    r = read_engine(samples("llamacpp-b11434_server--metrics_prompt-cache.txt"))
    assert r.engine == "llamacpp"
    # two requests of 47 prompt tokens, the second with 46 reused: processed 47 + 1, cached 46
    assert r.counters["prompt_tokens"] == 48.0 and r.counters["prefix_cache_hits"] == 46.0
    assert r.counters["prefix_cache_queries"] == 94.0  # looked up = processed + cached


def test_simulator_is_read_as_vllm():
    r = read_engine(samples("llmload-sim_healthy_8-users.txt"))
    assert r.engine == "vllm"
    assert r.gauges["running"] == 8.0
    assert r.counters["generation_tokens"] == 3852.0
    assert r.histograms["ttft"].count == 70


def test_detection_picks_the_engine_with_most_series_and_none_without_any():
    assert detect_engine(samples("dcgm-exporter-4.1_h200x2_Hostname-label.txt")) is None
    assert read_engine(samples("dcgm-exporter-4.1_h200x2_Hostname-label.txt")) is None
    mixed = Samples(
        [("vllm:num_requests_running", {}, 1), ("tgi_queue_size", {}, 1), ("tgi_batch_current_size", {}, 1)]
    )
    assert detect_engine(mixed).name == "tgi"
    assert read_engine(mixed, "vllm").gauges == {"running": 1.0}


def test_every_engine_lists_its_names_for_a_prometheus_query():
    names = {n for e in ENGINES for n in e.metric_names()}
    assert {"vllm:num_preemptions", "vllm:num_preemptions_total", "tgi_request_success"} <= names
    assert "vllm:time_to_first_token_seconds_bucket" in names and "sglang:queue_time_seconds_sum" in names
