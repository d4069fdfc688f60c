"""Image inputs per class (metrics/parts/image_inputs.py): images and request bytes per second of successful
requests with images, through the merge, the summary (only where a class sent images) and the console."""

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


def _rec(cls: str, images: int, outcome: str = "ok") -> RequestRecord:
    r = RequestRecord(cls, input_tokens=50, max_tokens=4)
    r.images, r.request_bytes = images, 500_000 * images + 300
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + 30 * MS + i * MS for i in range(4)]
    r.end_ns = r.chunk_ns[-1]
    settle_token_counts(r, 50 + 361 * images, 4)
    r.outcome = outcome
    return r


def test_successful_image_requests_count_and_the_summary_reads_back():
    workers = [Recorder(), Recorder()]
    for i in range(6):
        workers[i % 2].add(_rec("vision", 2))
    workers[0].add(_rec("vision", 2, outcome="error"))  # a failed request is in no rate
    workers[1].add(_rec("chat", 0))
    master = MetricSet()
    for w in workers:
        master.merge(MetricSet.from_wire(w.drain()))
    s = to_summary(build_result(master, duration_s=10.0, users_max=2, weights={"vision": 1.0, "chat": 1.0}))
    assert s["classes"]["vision"]["images"] == {"requests": 6, "images": 12, "images_per_request": 2.0,
                                                "images_per_s": 1.2, "request_bytes": 6 * 1_000_300,
                                                "request_bytes_per_s": 600_180.0}  # fmt: skip
    assert "images" not in s["classes"]["chat"]  # a class without images keeps its keys
    assert to_summary(from_summary(s)) == s


def test_the_console_says_images_and_bytes_per_second():
    m = MetricSet()
    for _ in range(5):
        m.add(_rec("vision", 1))
    out = io.StringIO()
    render_summary(build_result(m, duration_s=10.0, users_max=1, weights={"vision": 1.0}), out)
    assert "images: 0.5 images/s (1 per request), 0.25 MB/s sent (0.50 MB per request)" in out.getvalue()
