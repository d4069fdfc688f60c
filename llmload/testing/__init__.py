"""Test helpers for llmload and for authors of third-party adapters (the conformance kit).

* :mod:`~llmload.testing.conformance` — the adapter conformance kit: recorded stream transcripts
  replayed through an adapter (:func:`~llmload.testing.conformance.run_transcript`), and
  :func:`~llmload.testing.conformance.assert_adapter_conforms`, one call for a third-party adapter's tests.
"""

from __future__ import annotations

from llmload.testing.conformance import (
    TranscriptOutcome,
    assert_adapter_conforms,
    check_build_request,
    iter_transcript_events,
    run_transcript,
)

__all__ = [
    "TranscriptOutcome",
    "assert_adapter_conforms",
    "check_build_request",
    "iter_transcript_events",
    "run_transcript",
]
