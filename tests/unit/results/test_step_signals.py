from __future__ import annotations

import pytest

from llmload.collect.poller import Collection
from llmload.config import CollectConfig
from llmload.ladder import StepWindow
from llmload.results.build import build_steps
from llmload.results.step_signals import series_from_timeseries, window_stats


def test_window_stats_over_points_inside_the_window_only():
    series = {"running": [(0.0, 1.0), (10.0, 4.0), (12.0, 4.0), (14.0, 5.0), (20.0, 9.0)], "gone": [(30.0, 1.0)]}
    w = window_stats(series, 10.0, 14.0)  # bounds included
    assert w == {"running": {"mean": 4.3333, "min": 4.0, "max": 5.0, "last": 5.0, "samples": 3}}
    assert window_stats(series, 100.0, 200.0) == {}


def test_series_from_timeseries_drops_nulls_and_cumulative_columns():
    ts = {
        "schema": "llmload.timeseries/1",
        "t": [100.0, 102.0, 104.0],
        "server": {"signals": {"waiting": [0.0, None, 3.0], "preemptions_increase": [0.0, 2.0, 6.0],
                               "preemptions_rate_per_s": [None, 1.0, 2.0], "ttft_mean_ms": [None, None, None]}},
        "gpu": {"signals": {"utilization": [0.5, 0.6, 0.7]}, "devices": {}},
    }  # fmt: skip
    server, gpu = series_from_timeseries(ts)
    assert server == {"waiting": [(100.0, 0.0), (104.0, 3.0)], "preemptions_rate_per_s": [(102.0, 1.0), (104.0, 2.0)]}
    assert gpu == {"utilization": [(100.0, 0.5), (102.0, 0.6), (104.0, 0.7)]}
    assert series_from_timeseries(None) == ({}, {})
    assert series_from_timeseries({"t": [1.0]}) == ({}, {})


def test_steps_get_window_means_only_with_a_steady_window_and_points_inside():
    windows = [
        StepWindow(0, 1, 5.0, steady_from=10.0, ended_at=20.0),
        StepWindow(1, 2, 20.0, steady_from=None, ended_at=40.0),  # never steady
        StepWindow(2, 4, 40.0, steady_from=50.0, ended_at=60.0),  # no points inside
    ]
    steps = build_steps(windows, {}, (), {"running": [(12.0, 2.0), (18.0, 4.0)]}, {"utilization": [(15.0, 0.5)]})
    assert steps[0].server["running"]["mean"] == 3.0 and steps[0].gpu["utilization"]["mean"] == 0.5
    assert steps[1].server == {} and steps[2].server == {} and steps[2].gpu == {}
    assert all(st.server == {} and st.gpu == {} for st in build_steps(windows, {}, ()))  # nothing collected


ENGINE = "http://engine:8000/metrics"
_PAGE = """# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{model_name="m",engine="0"}} {running}
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{model_name="m",engine="0"}} {waiting}
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{{model_name="m",engine="0"}} {kv}
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{{model_name="m",engine="0"}} {pre}
# TYPE llmload_gpu_utilization_ratio gauge
llmload_gpu_utilization_ratio{{gpu="0",UUID="GPU-1",modelName="Sim",hostname="h"}} {util}
# TYPE llmload_gpu_memory_bandwidth_utilization_ratio gauge
llmload_gpu_memory_bandwidth_utilization_ratio{{gpu="0",UUID="GPU-1",modelName="Sim",hostname="h"}} {bw}
"""


def test_adapter_reads_the_collectors_own_series():
    """Contract with llmload.collect: its stored series, through the adapter, give the per-step window means."""
    pages = iter([
        dict(running=1, waiting=0, kv=0.1, pre=0, util=0.5, bw=0.3),
        dict(running=4, waiting=2, kv=0.5, pre=4, util=0.6, bw=0.4),
        dict(running=4, waiting=6, kv=0.6, pre=10, util=0.7, bw=0.5),
    ])  # fmt: skip
    clock = [1000.0]
    c = Collection(
        CollectConfig(engine_urls=(ENGINE,), gpu_urls=(ENGINE,)),
        1000.0,
        request=lambda url, timeout, body=None: _PAGE.format(**next(pages)).encode(),
        clock=lambda: clock[0],
    )
    for _ in range(3):
        c.poll()
        clock[0] += 2.0
    server, gpu = series_from_timeseries(c.timeseries())
    w = window_stats(server, 1001.0, 1004.0)  # the 2nd and 3rd polls
    assert w["running"]["mean"] == 4.0 and w["waiting"]["mean"] == 4.0 and w["waiting"]["last"] == 6.0
    assert w["kv_cache_usage"]["max"] == 0.6
    assert w["preemptions_rate_per_s"]["mean"] == pytest.approx(2.5)  # +4 then +6 over 2 s each
    g = window_stats(gpu, 1001.0, 1004.0)
    assert g["utilization"]["mean"] == pytest.approx(0.65) and g["memory_bandwidth_utilization"]["last"] == 0.5
