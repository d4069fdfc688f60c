"""The collector over real MetricSets: exposition text parsed back, checked against raw samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from llmload.errors import ERROR_KINDS
from llmload.exporter import BUCKETS, ExportContext, LlmloadCollector, new_registry
from llmload.exporter.buckets import NICE_BOUNDS, snap_to_edge
from llmload.metrics.aggregation import Aggregator, WorkerGauges
from llmload.metrics.definitions import (
    METRICS,
    e2e_s,
    hidden_reasoning,
    itl_s,
    reasoning_s,
    settle_reasoning,
    settle_token_counts,
    tpot_s,
    ttfo_s,
    ttft_s,
)
from llmload.metrics.histogram import EDGES, Histogram, bucket_index
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from tests.helpers.clock import FakeClock

NS = 1_000_000_000
CLASSES = ("short", "medium", "long")
CTX = ExportContext(api="openai-chat", model="m-7b", profile="default", classes=(*CLASSES, "unused"))


def make_record(rng: np.random.Generator, cls: str) -> RequestRecord:
    """A request with log-normal TTFT and ITL gaps; now and then an error or an interruption.

    A third reason first (streamed, its count from usage or counted), a few reason hidden
    (usage only), a few carry a buffered multi-token event.
    """
    n = int(rng.integers(1, 40))
    rec = RequestRecord(cls, input_tokens=int(rng.integers(10, 3000)), max_tokens=n)
    rec.start_ns = int(rng.integers(0, 10**12))
    t = rec.start_ns + int(rng.lognormal(math.log(0.08), 1.0) * NS)
    for _ in range(n):
        rec.chunk_ns.append(t)
        t += int(rng.lognormal(math.log(0.015), 0.8) * NS)
    if rng.random() < 0.1:
        rec.add_counted_chunk(t, int(rng.integers(2, 17)))  # a buffered jump: k tokens at one stamp
        t += 1000
    rec.end_ns = t
    settle_token_counts(rec, None, None)
    kind = rng.random()
    if kind < 0.33 and n > 1:  # streamed reasoning: the first r events are reasoning
        r = int(rng.integers(1, n))
        settle_reasoning(rec, r, r, 0, r + 3 if rng.random() < 0.5 else None)
    elif kind < 0.4:  # hidden: usage says 50 reasoning tokens, none streamed
        settle_reasoning(rec, 0, 0, 0, 50)
    else:
        settle_reasoning(rec, -1, 0, 0, None)
    u = rng.random()
    rec.outcome = "ok" if u < 0.9 else ("error" if u < 0.97 else "interrupted")
    if rec.outcome == "error":
        rec.error_kind = str(rng.choice(["http_429", "stall_timeout", "connection", "stream_disconnected"]))
    rec.reconnects = int(rng.random() < 0.05)
    if rng.random() < 0.7:  # the answer stated its cached prompt tokens
        rec.cached_prompt_tokens = int(rng.integers(0, rec.input_tokens + 1))
    return rec


def raw_values(records: list[RequestRecord], cls: str, metric: str) -> np.ndarray:
    out: list[float] = []
    for r in records:
        if r.class_name != cls or r.outcome == "error" or (r.outcome == "interrupted" and metric != "ttft"):
            continue  # latencies of successful requests; TTFT also of interrupted ones
        if metric == "itl":
            out.extend(itl_s(r).tolist())
        else:
            v = {"ttft": ttft_s, "tpot": tpot_s, "e2e": e2e_s, "ttfo": ttfo_s, "reasoning": reasoning_s}[metric](r)
            if v is not None:
                out.append(v)
    return np.asarray(out)


def report(records: list[RequestRecord], **gauges) -> dict:
    rec = Recorder()
    for r in records:
        rec.add(r)
    return {"m": rec.drain(), "g": WorkerGauges(**gauges).to_wire()}


def scrape(collector: LlmloadCollector) -> dict:
    """Exposition text of a fresh registry, parsed: {(sample name, frozen labels): value}."""
    text = generate_latest(new_registry(collector)).decode()
    samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def series(samples: dict, name: str, **labels) -> dict[frozenset, float]:
    want = set(labels.items())
    return {k[1]: v for k, v in samples.items() if k[0] == name and want <= k[1]}


@pytest.fixture
def world():
    """Two workers' worth of records merged in an Aggregator, and a collector over it."""
    rng = np.random.default_rng(7)
    records = [make_record(rng, CLASSES[i % 3]) for i in range(900)]
    agg = Aggregator(FakeClock())
    agg.merge_report("w1", report(records[:500], users=4, in_flight=3, in_flight_by_class={"short": 1, "long": 2}))
    agg.merge_report("w2", report(records[500:], users=6, in_flight=1, in_flight_by_class={"medium": 1}, cpu_ratio=0.9))
    agg.users = 10
    collector = LlmloadCollector(agg.snapshot, lambda: CTX)
    return records, agg, collector


def test_bounds_are_fine_edges_near_round_values():
    for metric in METRICS:
        b = BUCKETS[metric]
        nice = NICE_BOUNDS[metric]
        assert 20 <= len(b) <= 30
        assert np.all(np.diff(b.bounds) > 0)
        assert set(b.bounds.tolist()) <= set(EDGES.tolist())
        assert np.all(np.abs(b.bounds / np.asarray(nice) - 1) <= 0.005 + 1e-12)  # half a fine bucket
        assert [bucket_index(e) for e in b.bounds] == b.indices.tolist()
        assert [float(x) for x in b.labels[:-1]] == b.bounds.tolist() and b.labels[-1] == "+Inf"
    assert snap_to_edge(0.1)[1] == pytest.approx(0.1, rel=0.005)


def test_histograms_are_exact_sums_of_the_fine_buckets(world):
    records, agg, collector = world
    samples = scrape(collector)
    total = agg.snapshot().total
    for cls in CLASSES:
        for metric in METRICS:
            name = f"llmload_{metric}_seconds"
            base = {"class": cls, "api": "openai-chat", "model": "m-7b"}
            buckets = {dict(k)["le"]: v for k, v in series(samples, f"{name}_bucket", **base).items()}
            b = BUCKETS[metric]
            assert set(buckets) == set(b.labels)
            cum = [buckets[le] for le in b.labels]
            assert cum == sorted(cum), f"{name} {cls}: buckets not cumulative"
            values = raw_values(records, cls, metric)
            h: Histogram = total.classes[cls].hist[metric]
            # Exact: each le counts precisely the raw samples <= that edge, as the fine histogram does.
            expected = [int(np.count_nonzero(values <= e)) for e in b.bounds] + [len(values)]
            assert cum == expected
            assert cum[:-1] == h.cumulative_at(b.bounds).tolist()
            count = series(samples, f"{name}_count", **base)
            total_sum = series(samples, f"{name}_sum", **base)
            assert list(count.values()) == [len(values)] == [h.count]
            assert list(total_sum.values())[0] == pytest.approx(values.sum(), rel=1e-9)


def test_counters_and_labels(world):
    records, _, collector = world
    samples = scrape(collector)
    for cls in CLASSES:
        mine = [r for r in records if r.class_name == cls]
        base = {"class": cls, "api": "openai-chat", "model": "m-7b"}
        for outcome in ("ok", "error", "interrupted"):
            got = series(samples, "llmload_requests_total", outcome=outcome, **base)
            assert list(got.values()) == [sum(r.outcome == outcome for r in mine)]
        ok = [r for r in mine if r.outcome == "ok"]
        assert series(samples, "llmload_output_tokens_total", **base) == {
            frozenset(base.items()): sum(r.output_tokens for r in ok)
        }
        assert list(series(samples, "llmload_input_tokens_total", **base).values()) == [sum(r.input_tokens for r in ok)]
        assert list(series(samples, "llmload_reconnects_total", **base).values()) == [sum(r.reconnects for r in mine)]
        assert list(series(samples, "llmload_reasoning_tokens_total", **base).values()) == [
            sum(r.reasoning_tokens for r in ok)
        ] and sum(r.reasoning_tokens for r in ok) > 0
        hidden = sum(hidden_reasoning(r) for r in ok)
        assert list(series(samples, "llmload_hidden_reasoning_requests_total", **base).values()) == [hidden] != [0]
        jumps = sum(r.buffered_token_jumps for r in mine)  # any outcome
        assert list(series(samples, "llmload_buffered_token_jumps_total", **base).values()) == [jumps] != [0]
        stated = [r for r in ok if r.cached_prompt_tokens is not None]
        assert list(series(samples, "llmload_cached_prompt_tokens_total", **base).values()) == [
            sum(r.cached_prompt_tokens for r in stated)
        ]
        assert list(series(samples, "llmload_cache_stated_prompt_tokens_total", **base).values()) == [
            sum(r.input_tokens for r in stated)
        ]
        errors = {dict(k)["kind"]: v for k, v in series(samples, "llmload_errors_total", **base).items()}
        for kind in {*ERROR_KINDS, "http_429"}:
            assert errors[kind] == sum(r.error_kind == kind for r in mine), kind
    # A profile class that sent nothing is there from the start, at zero.
    unused = {"class": "unused", "api": "openai-chat", "model": "m-7b"}
    assert list(series(samples, "llmload_requests_total", outcome="ok", **unused).values()) == [0]
    assert list(series(samples, "llmload_ttft_seconds_count", **unused).values()) == [0]
    # Every series of a request metric carries exactly class/api/model (+ its own label).
    for (name, labels), _ in samples.items():
        keys = {k for k, _ in labels} - {"le", "outcome", "kind"}
        if name.startswith(tuple(f"llmload_{m}_seconds" for m in METRICS) + ("llmload_in_flight",)) or (
            name.endswith("_total")
        ):
            assert keys == {"class", "api", "model"}, name


def test_gauges(world):
    _, _, collector = world
    samples = scrape(collector)
    flying = {dict(k)["class"]: v for k, v in series(samples, "llmload_in_flight_requests").items()}
    assert flying == {"short": 1, "medium": 1, "long": 2, "unused": 0}
    assert samples[("llmload_users", frozenset())] == 10
    assert samples[("llmload_workers", frozenset())] == 2
    assert samples[("llmload_workers_lost", frozenset())] == 0
    assert samples[("llmload_worker_cpu_ratio", frozenset({("worker", "w2")}))] == 0.9
    assert ("llmload_worker_loop_lag_seconds", frozenset({("worker", "w1")})) in samples
    assert samples[("llmload_client_saturated", frozenset())] == 1
    info = series(samples, "llmload_info")
    assert len(info) == 1
    labels = dict(next(iter(info)))
    assert (labels["api"], labels["model"], labels["profile"]) == ("openai-chat", "m-7b", "default")
    assert labels["version"]


def monotonic_series(samples: dict) -> dict:
    return {k: v for k, v in samples.items() if k[0].endswith(("_total", "_bucket", "_count", "_sum"))}


def test_counters_never_go_backwards_across_tests_and_lost_workers(world):
    records, agg, collector = world
    before = monotonic_series(scrape(collector))
    agg.start_run()  # a second test started from the web UI in the same process
    assert monotonic_series(scrape(collector)) == before
    agg.mark_lost("w1")  # and a worker goes away
    middle = scrape(collector)
    assert monotonic_series(middle) == before
    assert middle[("llmload_workers", frozenset())] == 1
    assert middle[("llmload_workers_lost", frozenset())] == 1
    assert ("llmload_worker_cpu_ratio", frozenset({("worker", "w1")})) not in middle
    rng = np.random.default_rng(11)
    agg.merge_report("w2", report([make_record(rng, "short") for _ in range(50)]))
    after = monotonic_series(scrape(collector))
    assert set(before) <= set(after)
    for key, value in before.items():
        assert after[key] >= value, key
    short_ok = (
        "llmload_requests_total",
        frozenset({"class": "short", "api": "openai-chat", "model": "m-7b", "outcome": "ok"}.items()),
    )
    assert after[short_ok] > before[short_ok]


def test_openmetrics_exposition_parses_too():
    """Prometheus asks for OpenMetrics first; the same families must come out of it."""
    from prometheus_client.openmetrics.exposition import generate_latest as om_generate
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse

    agg = Aggregator(FakeClock())
    agg.merge_report("w1", report([make_record(np.random.default_rng(3), "short") for _ in range(20)]))
    text = om_generate(new_registry(LlmloadCollector(agg.snapshot, lambda: CTX))).decode()
    families = {f.name: f.type for f in om_parse(text)}
    assert families["llmload_ttft_seconds"] == "histogram"
    assert families["llmload_requests"] == "counter"
    assert families["llmload"] == "info"
    assert families["llmload_in_flight_requests"] == "gauge"


def test_empty_aggregator_exports_zero_series_for_the_profile():
    agg = Aggregator(FakeClock())
    samples = scrape(LlmloadCollector(agg.snapshot, lambda: CTX))
    assert {dict(k)["class"] for k in series(samples, "llmload_e2e_seconds_count")} == {*CLASSES, "unused"}
    assert all(v == 0 for v in series(samples, "llmload_ttft_seconds_bucket").values())
    assert samples[("llmload_workers", frozenset())] == 0
    assert samples[("llmload_client_saturated", frozenset())] == 0


def test_ladder_step_and_baseline_gauges():
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from llmload.exporter.collector import ExportContext, LlmloadCollector, new_registry
    from llmload.metrics.aggregation import Aggregator

    ctx = ExportContext(
        "openai-chat", "m", "default", ("short",), step=(2, 10, True),
        baseline={"ttft_p50": 0.18, "ttft_p99": 0.25, "tpot_p50": 0.035, "tpot_p99": 0.04},
    )  # fmt: skip
    text = generate_latest(new_registry(LlmloadCollector(Aggregator().snapshot, lambda: ctx))).decode()
    values = {
        (s.name, s.labels.get("quantile")): s.value for f in text_string_to_metric_families(text) for s in f.samples
    }
    assert values[("llmload_ladder_step", None)] == 2
    assert values[("llmload_ladder_step_users", None)] == 10
    assert values[("llmload_ladder_step_steady", None)] == 1
    assert values[("llmload_baseline_ttft_seconds", "0.5")] == 0.18
    assert values[("llmload_baseline_tpot_seconds", "0.99")] == 0.04
    plain = ExportContext("openai-chat", "m", "default", ("short",))
    text = generate_latest(new_registry(LlmloadCollector(Aggregator().snapshot, lambda: plain))).decode()
    assert "llmload_ladder_step" not in text and "llmload_baseline" not in text  # absent, not 0


def test_good_requests_counter_in_runs_with_slos_only():
    from dataclasses import replace

    from llmload.metrics.definitions import slo_missed
    from llmload.metrics.slo import SLO

    rng = np.random.default_rng(11)
    records = [make_record(rng, CLASSES[i % 3]) for i in range(300)]
    slo = SLO(ttft_ms=100.0, tpot_ms=20.0)
    rec = Recorder()
    rec.set_slos({c: slo for c in CLASSES})
    for r in records:
        rec.add(r)
    agg = Aggregator(FakeClock())
    agg.merge_report("w1", {"m": rec.drain(), "g": WorkerGauges().to_wire()})
    ctx = replace(CTX, slo_target=0.95)
    samples = scrape(LlmloadCollector(agg.snapshot, lambda: ctx))
    for cls in CLASSES:
        want = sum(1 for r in records if r.class_name == cls and r.outcome == "ok" and not slo_missed(r, slo))
        (got,) = series(samples, "llmload_good_requests_total", **{"class": cls}).values()
        assert got == want and 0 < want < sum(1 for r in records if r.class_name == cls and r.outcome == "ok")
    assert series(samples, "llmload_good_requests_total", **{"class": "unused"}) == {frozenset(
        {("class", "unused"), ("api", "openai-chat"), ("model", "m-7b")}): 0.0}  # fmt: skip
    assert samples[("llmload_slo_attainment_target", frozenset())] == 0.95
    plain = scrape(LlmloadCollector(agg.snapshot, lambda: CTX))
    assert not series(plain, "llmload_good_requests_total") and not series(plain, "llmload_slo_attainment_target")
def test_open_loop_series_offered_achieved_rate_and_client_wait():
    clock = FakeClock()
    agg = Aggregator(clock)
    rng = np.random.default_rng(3)
    records = [make_record(rng, "short") for _ in range(60)]
    for i, r in enumerate(records):
        r.intended_ns = r.start_ns - (i % 4) * NS // 2  # waits of 0, 0.5, 1, 1.5 s
    clock.t += 30.0  # a full window of test time
    agg.merge_report("local", report(records))
    ctx = ExportContext(api="a", model="m", profile="p", classes=("short",), offered_rate=2.5)
    samples = scrape(LlmloadCollector(agg.snapshot, lambda: ctx))
    assert samples[("llmload_offered_rate_per_second", frozenset())] == 2.5
    assert samples[("llmload_achieved_rate_per_second", frozenset())] == pytest.approx(60 / 30.0)
    count = series(samples, "llmload_client_wait_seconds_count", **{"class": "short"})
    assert list(count.values()) == [60.0]
    buckets = {float(dict(k)["le"]): v for k, v in series(samples, "llmload_client_wait_seconds_bucket").items()}
    near = lambda x: next(v for le, v in buckets.items() if abs(le / x - 1) < 0.01)  # noqa: E731 (snapped bounds)
    assert near(0.25) == 15.0 and near(2.0) == 60.0  # waits 0 / 0.5 / 1 / 1.5 s, 15 each
    closed = scrape(LlmloadCollector(agg.snapshot, lambda: CTX))  # a closed loop: no offered rate
    assert not series(closed, "llmload_offered_rate_per_second")
