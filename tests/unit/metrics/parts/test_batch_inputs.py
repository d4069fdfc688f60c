"""Embeddings per class (metrics/parts/batch_inputs.py): texts and input tokens per second of successful batched
requests, through the merge, the summary (only where a class sent them) and the console."""

from __future__ import annotations

import io

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder
from llmload.report.console import render_summary
from llmload.results.build import build_result
from llmload.results.summary import to_summary
from llmload.results.summary_reader import from_summary

MS = 1_000_000


def _rec(cls: str, inputs: int, outcome: str = "ok") -> RequestRecord:
    r = RequestRecord(cls, input_tokens=50, max_tokens=0)
    r.batched(inputs)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + 30 * MS]  # the whole JSON answer: one content event
    r.end_ns = r.chunk_ns[0]
    settle_token_counts(r, 60 * inputs if inputs else None, 0)
    r.outcome = outcome
    return r


def test_successful_batches_count_and_the_summary_reads_back():
    workers = [Recorder(), Recorder()]
    for i in range(6):
        workers[i % 2].add(_rec("docs", 4))
    workers[0].add(_rec("docs", 4, outcome="error"))  # a failed batch embedded nothing
    workers[1].add(_rec("chat", 0))
    master = MetricSet()
    for w in workers:
        master.merge(MetricSet.from_wire(w.drain()))
    s = to_summary(build_result(master, duration_s=10.0, users_max=2, weights={"docs": 1.0, "chat": 1.0}))
    assert s["classes"]["docs"]["inputs"] == {"requests": 6, "inputs": 24, "inputs_per_request": 4.0,
                                                  "inputs_per_s": 2.4, "input_tokens": 1440, "input_tokens_per_s": 144.0}
    assert "inputs" not in s["classes"]["chat"]  # a class without embeddings keeps its keys
    d = s["classes"]["docs"]
    assert d["tpot_ms"]["p50"] is None and d["output_tokens"] == 0 and d["e2e_ms"]["p50"] == d["ttft_ms"]["p50"]
    assert to_summary(from_summary(s)) == s


def test_the_console_says_the_rates_and_that_latency_is_e2e():
    m = MetricSet()
    for _ in range(5):
        m.add(_rec("docs", 8))
    out = io.StringIO()
    render_summary(build_result(m, duration_s=10.0, users_max=1, weights={"docs": 1.0}), out)
    assert "inputs: 4.0 inputs/s (8 per request), 240 input tokens/s; latency = E2E" in out.getvalue()
