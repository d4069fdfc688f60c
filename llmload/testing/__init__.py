"""Test helpers for llmload and for authors of third-party adapters (the conformance kit)."""

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
