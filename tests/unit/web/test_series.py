"""The live charts' ring buffer and the columns it serves: bounded, stamped by an injectable clock,
values equal to the live window's, engine and GPU readings from the timeline, incremental reads."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from llmload.collect.engines import EngineReading
from llmload.collect.gpus import GpuReading
from llmload.collect.timeline import Timeline
from llmload.metrics.aggregation import Aggregator, WorkerGauges
from llmload.metrics.definitions import settle_reasoning, settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet
from llmload.web.series import CLASS_FIELDS, OVERALL, SCHEMA, SeriesBuffer, build_sample, series_payload
from tests.helpers.clock import FakeClock

MS = 1_000_000


def finished(cls, outcome="ok", n=5, ttft_ms=50, itl_ms=5):
    r = RequestRecord(cls, input_tokens=10, max_tokens=n)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + i * itl_ms) * MS for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS if n else r.start_ns + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind = outcome, "http_500" if outcome == "error" else None
    return r


def aggregated(clock, records, **gauges):
    """An aggregator whose run started 10 s before the one report of ``records``."""
    agg = Aggregator(clock=clock)
    agg.start_run()
    clock.t += 10.0
    m = MetricSet()
    for r in records:
        m.add(r)
    agg.merge_report("local", {"m": m.to_wire(), "g": WorkerGauges(**gauges).to_wire()})
    return agg


def values(sample, name):
    return dict(zip(CLASS_FIELDS, sample.classes[name], strict=True))


def test_a_sample_holds_the_live_windows_numbers_per_class_and_overall():
    clock = FakeClock()
    records = [finished("short", ttft_ms=50) for _ in range(8)] + [finished("long", ttft_ms=200, n=21, itl_ms=20)] * 2
    records += [finished("short", "error", n=0)] * 2
    agg = aggregated(clock, records, users=4, in_flight=3, in_flight_by_class={"short": 1, "long": 2})
    s = build_sample(clock.t, agg.snapshot(run=False), 4, ["short", "medium", "long"], None)
    assert s.t == clock.t and s.users == 4
    assert list(s.classes) == ["short", "medium", "long", OVERALL]
    short, long_, medium, overall = (values(s, n) for n in ("short", "long", "medium", OVERALL))
    assert short["ttft_p50_ms"] == pytest.approx(50, rel=0.01) and long_["ttft_p99_ms"] == pytest.approx(200, rel=0.01)
    assert short["tpot_p50_ms"] == pytest.approx(5, rel=0.01) and long_["tpot_p50_ms"] == pytest.approx(20, rel=0.01)
    assert overall["ttft_p50_ms"] == pytest.approx(50, rel=0.01)
    assert overall["ttft_p99_ms"] == pytest.approx(200, rel=0.01)
    # over the 10 s the window covers
    assert short["ok_per_s"] == pytest.approx(0.8) and short["errors_per_s"] == pytest.approx(0.2)
    assert short["error_rate"] == pytest.approx(0.2) and long_["error_rate"] == 0
    assert overall["output_tokens_per_s"] == pytest.approx((8 * 5 + 2 * 21) / 10, abs=0.01)
    assert (short["in_flight"], long_["in_flight"], medium["in_flight"], overall["in_flight"]) == (1, 2, 0, 3)
    assert medium["ttft_p50_ms"] is None and medium["error_rate"] is None and medium["ok_per_s"] == 0
    assert s.server == (None, None, None) and s.gpu == (None, None)  # no collection


def test_ttfo_only_where_some_request_reasoned():
    clock = FakeClock()
    thinking = []
    for _ in range(3):  # 10 events, the first 4 reasoning: TTFO = 50 + 4 x 5 ms
        r = finished("long", n=10)
        settle_reasoning(r, 4, 4, 0, None)
        thinking.append(r)
    plain = finished("short")
    settle_reasoning(plain, -1, 0, 0, None)
    agg = aggregated(clock, [*thinking, plain])
    s = build_sample(clock.t, agg.snapshot(run=False), 1, ["short", "long"], None)
    assert values(s, "long")["ttfo_p50_ms"] == pytest.approx(70, rel=0.01)
    assert values(s, OVERALL)["ttfo_p50_ms"] == pytest.approx(70, rel=0.01)
    assert values(s, "short")["ttfo_p50_ms"] is None  # nothing reasoned there: no line


def test_engine_and_gpu_values_are_the_timelines_latest():
    clock = FakeClock()
    agg = aggregated(clock, [finished("short")])
    tl = Timeline(0.0)
    s = build_sample(clock.t, agg.snapshot(run=False), 1, ["short"], tl)
    assert s.server == (None, None, None) and s.gpu == (None, None)  # collection on, no poll yet
    tl.add(1.0, {"e": EngineReading("vllm", {"waiting": 1, "running": 4, "kv_cache_usage": 0.1}, {}, {})}, {})
    tl.add(2.0, {"e": EngineReading("vllm", {"waiting": 7, "running": 4, "kv_cache_usage": 0.35}, {}, {})},
           {"g": GpuReading("g", "nvml", {}, {"utilization": 0.55, "memory_bandwidth_utilization": 0.3})})  # fmt: skip
    s = build_sample(clock.t, agg.snapshot(run=False), 1, ["short"], tl)
    assert s.server == (7, 4, 0.35) and s.gpu == (0.55, 0.3)


def test_the_buffer_is_bounded_and_stamped_by_its_clock():
    clock = FakeClock(500.0)
    agg = aggregated(FakeClock(), [finished("short")])
    buf = SeriesBuffer(capacity=3, clock=clock)
    for _ in range(5):
        clock.t += 2.0
        buf.record(agg.snapshot(run=False), 1, ["short"])
    assert len(buf) == 3
    assert [s.t for s in buf.since()] == [506.0, 508.0, 510.0]  # the two oldest went
    assert [s.t for s in buf.since(506.0)] == [508.0, 510.0] and buf.since(510.0) == []
    g = buf.generation
    buf.reset()
    assert len(buf) == 0 and buf.generation == g + 1
    with pytest.raises(ValueError, match="at least 1"):
        SeriesBuffer(capacity=0)


def test_payload_columns_for_one_class_and_incremental_reads():
    clock = FakeClock(100.0)
    agg = aggregated(FakeClock(), [finished("short", ttft_ms=50), finished("long", ttft_ms=200)])
    buf = SeriesBuffer(clock=clock)
    for users in (1, 2, 3):
        clock.t += 2.0
        buf.record(agg.snapshot(run=False), users, ["short", "long"])
    p = series_payload(buf, "long", classes=["short", "medium", "long"])
    assert p["schema"] == SCHEMA and p["full"] is True and p["generation"] == buf.generation
    assert p["classes"] == ["short", "medium", "long", OVERALL] and p["class"] == "long"
    assert p["t"] == [102.0, 104.0, 106.0] and p["columns"]["users"] == [1, 2, 3]
    assert p["columns"]["ttft_p50_ms"] == [pytest.approx(200, rel=0.01)] * 3
    assert set(p["columns"]) == {"users", *CLASS_FIELDS, "waiting", "running", "kv_cache_usage",
                                 "utilization", "memory_bandwidth_utilization"}  # fmt: skip
    assert series_payload(buf, "medium")["columns"]["ttft_p50_ms"] == [None] * 3  # a class with no data
    # a reader of this generation gets what is newer than its last point
    p = series_payload(buf, OVERALL, since=104.0, generation=buf.generation)
    assert p["full"] is False and p["t"] == [106.0] and p["columns"]["users"] == [3]
    # after a reset (a new test) the same reader gets everything again
    buf.reset()
    clock.t += 2.0
    buf.record(agg.snapshot(run=False), 9, ["short", "long"])
    p = series_payload(buf, OVERALL, since=104.0, generation=buf.generation - 1)
    assert p["full"] is True and p["t"] == [108.0] and p["columns"]["users"] == [9]


@dataclass
class Window:  # a ladder step's window, as the step tracker keeps it
    index: int
    users: int
    started_at: float
    steady_from: float | None = None
    ended_at: float | None = None


def test_payload_carries_steps_baseline_in_ms_and_the_limit_factor():
    buf = SeriesBuffer(clock=FakeClock())
    steps = [Window(0, 1, 10.0, 15.0, 30.0), Window(1, 20, 30.0, 35.0)]
    p = series_payload(buf, OVERALL, steps=steps, baseline={"ttft_p50": 0.18, "tpot_p50": 0.0351}, limit_factor=1.5,
                       state="running")  # fmt: skip
    assert p["steps"] == [
        {"index": 0, "users": 1, "started_at": 10.0, "steady_from": 15.0, "ended_at": 30.0},
        {"index": 1, "users": 20, "started_at": 30.0, "steady_from": 35.0, "ended_at": None},
    ]
    assert p["baseline"] == {"ttft_p50_ms": 180.0, "tpot_p50_ms": 35.1} and p["limit_factor"] == 1.5
    assert p["state"] == "running" and p["t"] == [] and p["classes"] == [OVERALL]
    assert series_payload(buf, OVERALL)["baseline"] is None  # before the baseline step has enough requests
