"""Requests stopped at the output-token limit (metrics/parts/token_limit.py): counted per class from the
server's finish reason, successful requests only, through the merge, the summary and the console."""

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


def _rec(cls: str, reason: str | None, outcome: str = "ok") -> RequestRecord:
    r = RequestRecord(cls, input_tokens=10, max_tokens=4)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (20 + k) * MS for k in range(4)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.finish_reason, r.outcome = reason, outcome
    return r


def test_each_apis_limit_reason_counts_and_nothing_else_does():
    rec = Recorder()
    for reason in ("length", "max_tokens", "max_output_tokens", "stop", "end_turn", "completed", None):
        rec.add(_rec("a", reason))
    rec.add(_rec("a", "length", outcome="error"))  # a failed request is no output that reached its limit
    rec.add(_rec("b", "length", outcome="interrupted"))
    snap = rec.snapshot()
    assert snap.classes["a"].counters["ok"] == 7 and snap.classes["a"].parts["token_limit"].n == 3
    assert snap.classes["b"].parts["token_limit"].empty


def test_workers_merge_into_the_summary_per_class_and_it_reads_back():
    workers = [Recorder(), Recorder()]
    for i, reason in enumerate(("length", "stop", "length", "length")):
        workers[i % 2].add(_rec("short" if i < 3 else "long", reason))
    master = MetricSet()
    for w in workers:
        master.merge(MetricSet.from_wire(w.drain()))
    s = to_summary(build_result(master, duration_s=10.0, users_max=2, weights={"short": 1.0, "long": 1.0}))
    assert (s["overall"]["stopped_at_limit"], s["classes"]["short"]["stopped_at_limit"],
            s["classes"]["long"]["stopped_at_limit"]) == (3, 2, 1)  # fmt: skip
    assert to_summary(from_summary(s)) == s


def test_the_console_stays_quiet_about_them_every_answer_at_its_max_tokens_is_what_llmload_asks_for():
    m = MetricSet()
    for _ in range(3):
        m.add(_rec("a", "length"))
    out = io.StringIO()
    render_summary(build_result(m, duration_s=10.0, users_max=1, weights={"a": 1.0}), out)
    assert "token limit" not in out.getvalue() and "stopped" not in out.getvalue()
