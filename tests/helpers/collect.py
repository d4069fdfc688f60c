"""Shared helpers of the collection tests: recorded /metrics texts and readings built from them."""

from __future__ import annotations

from pathlib import Path

from llmload.collect.engines import ENGINE_NAMES
from llmload.collect.exposition import Samples, parse_exposition
from llmload.collect.gpus import GPU_NAMES

__all__ = ["FIXTURES", "fixture", "samples", "text"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "metrics"


def fixture(name: str) -> Path:
    return FIXTURES / name


def text(name: str) -> str:
    return fixture(name).read_text()


def samples(name: str) -> Samples:
    """A fixture parsed as the collector parses it (the engine and GPU names kept)."""
    return parse_exposition(text(name), ENGINE_NAMES | GPU_NAMES)
