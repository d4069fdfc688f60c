"""Per-step statistics from real records, for the ladder's judge and driver tests."""

from __future__ import annotations

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet

MS = 1_000_000


def records(ttft_ms: float, n: int = 6, outcome: str = "ok", turn: int = 0) -> MetricSet:
    """``n`` finished requests of class ``a`` with TTFT ``ttft_ms`` and 4 tokens 10 ms apart (``turn`` > 0: each a
    conversation's turn of that number)."""
    m = MetricSet()
    for _ in range(n):
        r = RequestRecord("a", input_tokens=10, max_tokens=4)
        r.start_ns, r.turn = 0, turn
        r.chunk_ns = [int((ttft_ms + 10 * i) * MS) for i in range(4)]
        r.end_ns = r.chunk_ns[-1] + MS
        settle_token_counts(r, None, None)
        r.outcome = outcome
        if outcome == "error":
            r.error_kind = "http_503"
        m.add(r)
    return m
