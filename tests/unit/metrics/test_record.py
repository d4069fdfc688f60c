"""The per-request record: what a batched (embeddings) request changes on it."""

from __future__ import annotations

from llmload.metrics.record import RequestRecord


def test_a_batch_multiplies_the_asked_input_tokens():
    rec = RequestRecord("short", input_tokens=10, max_tokens=0)
    rec.batched(0)  # not a batching API: unchanged
    assert (rec.inputs, rec.input_tokens, rec.asked_input_tokens) == (0, 10, 10)
    rec.batched(8)
    assert (rec.inputs, rec.input_tokens, rec.asked_input_tokens) == (8, 80, 80)
    assert rec.to_dict()["inputs"] == 8
