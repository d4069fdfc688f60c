"""The timeline's latest readings (what the live charts sample) equal the last value of its full columns."""

from __future__ import annotations

import pytest

from llmload.collect.engines import EngineReading
from llmload.collect.gpus import GpuReading
from llmload.collect.timeline import Series, Timeline

A, B = "http://a/metrics", "http://b/metrics"


def engine(**gauges):
    return EngineReading("vllm", gauges, {}, {})


def gpu(key, **values):
    return GpuReading(key, "nvml", {}, values)


def test_series_at_reads_one_poll_missing_as_none():
    s = Series()
    s.put(0, 1.0)
    s.put(2, 3.0)  # poll 1 missing
    assert [s.at(i) for i in range(4)] == [1.0, None, 3.0, None]
    assert s.at(-1) is None


def test_latest_gauge_combines_endpoints_like_the_column():
    tl = Timeline(0.0)
    assert tl.latest("waiting") is None and tl.latest_gpu("utilization") is None  # no poll yet
    tl.add(1.0, {A: engine(waiting=2, kv_cache_usage=0.5), B: engine(waiting=3, kv_cache_usage=0.25)}, {})
    tl.add(2.0, {A: engine(waiting=4, kv_cache_usage=0.5), B: None}, {})  # B down at the last poll
    assert tl.latest("waiting") == tl.gauge("waiting")[-1] == 4  # sum of what answered
    tl.add(3.0, {A: engine(waiting=1, kv_cache_usage=0.2), B: engine(waiting=5, kv_cache_usage=0.4)}, {})
    assert tl.latest("waiting") == tl.gauge("waiting")[-1] == 6
    assert tl.latest("kv_cache_usage") == pytest.approx(tl.gauge("kv_cache_usage")[-1]) == pytest.approx(0.3)  # mean
    assert tl.latest("running") is None  # never reported


def test_latest_gpu_combines_devices_like_the_column():
    tl = Timeline(0.0)
    tl.add(1.0, {}, {"g0": gpu("g0", utilization=0.9), "g1": gpu("g1", utilization=0.5)})
    tl.add(2.0, {}, {"g0": gpu("g0", utilization=0.7, memory_used_bytes=10.0), "g1": gpu("g1", utilization=0.3)})
    assert tl.latest_gpu("utilization") == pytest.approx(tl.gpu("utilization")[-1]) == pytest.approx(0.5)
    assert tl.latest_gpu("memory_used_bytes") == 10.0
    tl.add(3.0, {}, {"g1": gpu("g1", utilization=0.1)})  # g0 gave nothing at the last poll
    assert tl.latest_gpu("utilization") == pytest.approx(tl.gpu("utilization")[-1]) == pytest.approx(0.1)
