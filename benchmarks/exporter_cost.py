"""What the Prometheus exporter and the worker reports cost: µs per call and bytes.

Run: ``.venv/bin/python benchmarks/exporter_cost.py [--workers N] [--requests-per-report N]``.

* **worker report** — every ``report_to_master`` interval (3 s) a worker drains its
  recorder and Locust packs the report with msgpack: ``Recorder.drain()`` + ``msgpack.packb``
  of ``{"m": delta, "g": gauges}``, for a delta of three classes (the default profile's
  200 / 500 / 800 output tokens, log-normal TTFT and inter-token gaps);
* **master merge** — the master unpacks it and folds it in (``Aggregator.merge_report``);
* **scrape** — one ``/metrics`` answer as the exporter takes it:
  ``Aggregator.snapshot(window=False, run=False)`` (a copy of the total view only) plus
  collect and exposition text, 3 classes × 4 histograms, after a long run's worth of
  requests from ``--workers`` workers; then collect + text alone from a snapshot taken once.

Numbers are medians over many calls on this machine (one core, no gevent loop contention).
"""

from __future__ import annotations

import argparse
import gzip
import math
import statistics
import time

import msgpack
import numpy as np
from prometheus_client import generate_latest

from llmload.exporter import ExportContext, LlmloadCollector, new_registry
from llmload.metrics.aggregation import WINDOW_S, Aggregator, WorkerGauges
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder

NS = 1_000_000_000
CLASSES = {"short": 200, "medium": 500, "long": 800}  # output tokens, as in the default profile
REPORT_INTERVAL_S = 3.0


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def make_records(rng: np.random.Generator, n: int) -> list[RequestRecord]:
    names = list(CLASSES)
    out = []
    for i in range(n):
        cls = names[i % 3]
        tokens = CLASSES[cls]
        rec = RequestRecord(cls, input_tokens=500, max_tokens=tokens)
        rec.start_ns = 0
        first = int(rng.lognormal(math.log(0.2), 0.6) * NS)
        gaps = (rng.lognormal(math.log(0.02), 0.5, tokens - 1) * NS).astype(np.int64)
        rec.chunk_ns = np.concatenate(([first], first + np.cumsum(gaps))).tolist()
        rec.end_ns = rec.chunk_ns[-1] + 1000
        settle_token_counts(rec, 500, tokens)
        rec.outcome = "ok" if i % 50 else "error"
        rec.error_kind = None if i % 50 else "http_429"
        out.append(rec)
    return out


def gauges(i: int) -> WorkerGauges:
    return WorkerGauges(
        users=50, in_flight=48, in_flight_by_class={"short": 14, "medium": 20, "long": 14}, cpu_ratio=0.4 + i / 100
    )


def median_us(samples_ns: list[int]) -> float:
    return statistics.median(samples_ns) / 1000


def bench_report(records: list[RequestRecord], per_report: int, repeats: int) -> tuple[float, float, int, list[bytes]]:
    """(drain+pack µs, unpack+merge µs, packed bytes, the packed reports)."""
    pack_ns, packed = [], []
    for k in range(repeats):
        rec = Recorder()
        for r in records[(k * per_report) % len(records) :][:per_report]:
            rec.add(r)
        t0 = time.perf_counter_ns()
        payload = msgpack.packb(
            {"llmload": {"m": rec.drain(), "g": gauges(0).to_wire(), "final": False}}, use_bin_type=True
        )
        pack_ns.append(time.perf_counter_ns() - t0)
        packed.append(payload)
    agg = Aggregator(Clock())
    merge_ns = []
    for payload in packed:
        t0 = time.perf_counter_ns()
        agg.merge_report("w0", msgpack.unpackb(payload, raw=False)["llmload"])
        merge_ns.append(time.perf_counter_ns() - t0)
    return median_us(pack_ns), median_us(merge_ns), int(statistics.median(len(p) for p in packed)), packed


def loaded_aggregator(packed: list[bytes], workers: int, reports_total: int) -> Aggregator:
    """Many reports folded in (a long run), the last 30 s of them still in the window."""
    clock = Clock()
    agg = Aggregator(clock)
    wire = [msgpack.unpackb(p, raw=False)["llmload"] for p in packed]
    for k in range(reports_total):
        clock.t = (k // workers) * REPORT_INTERVAL_S
        agg.merge_report(f"worker-{k % workers}", {**wire[k % len(wire)], "g": gauges(k % workers).to_wire()})
    agg.users = 50 * workers
    return agg


def bench_scrape(agg: Aggregator, repeats: int) -> tuple[float, float, int, int]:
    """(snapshot+collect+text µs, collect+text µs from one snapshot, text bytes, gzip bytes)."""
    ctx = ExportContext("openai-chat", "meta-llama/Llama-3.1-8B-Instruct", "default", tuple(CLASSES))
    live = new_registry(LlmloadCollector(lambda: agg.snapshot(window=False, run=False), lambda: ctx))
    snap = agg.snapshot()
    frozen = new_registry(LlmloadCollector(lambda: snap, lambda: ctx))
    full_ns, collect_ns = [], []
    text = b""
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        text = generate_latest(live)
        full_ns.append(time.perf_counter_ns() - t0)
        t0 = time.perf_counter_ns()
        generate_latest(frozen)
        collect_ns.append(time.perf_counter_ns() - t0)
    return median_us(full_ns), median_us(collect_ns), len(text), len(gzip.compress(text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--requests-per-report", type=int, default=150, help="requests a worker finishes in 3 s (all classes)"
    )
    ap.add_argument("--workers", type=int, default=10, help="workers reporting to the master for the scrape case")
    ap.add_argument("--repeats", type=int, default=200, help="timed calls per case")
    args = ap.parse_args()

    rng = np.random.default_rng(1)
    records = make_records(rng, max(3 * args.requests_per_report, 600))
    pack_us, merge_us, size, packed = bench_report(records, args.requests_per_report, args.repeats)
    tokens = sum(r.output_tokens for r in records[: args.requests_per_report])
    print(f"worker report: {args.requests_per_report} requests (3 classes, {tokens} tokens, 4 histograms each)")
    print(f"  Recorder.drain + msgpack.packb    {pack_us:9.1f} µs   {size} bytes")
    print(f"  master: unpackb + merge_report    {merge_us:9.1f} µs")

    in_window = int(WINDOW_S / REPORT_INTERVAL_S)
    for workers in sorted({1, args.workers}):
        reports_total = max(600, workers * in_window)  # 600 reports: a 30-minute standalone run
        agg = loaded_aggregator(packed, workers, reports_total)
        requests = agg.total.overall().counters["requests"]
        full_us, collect_us, text_bytes, gz_bytes = bench_scrape(agg, max(20, args.repeats // 4))
        print(f"scrape: {workers} worker(s), {requests} requests in total, {in_window * workers} reports in the window")
        print(f"  snapshot + collect + text         {full_us:9.1f} µs   {text_bytes} bytes ({gz_bytes} gzipped)")
        print(f"  collect + text (snapshot given)   {collect_us:9.1f} µs")


if __name__ == "__main__":
    main()
