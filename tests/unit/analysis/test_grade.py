"""The TTFT grade table: each bound belongs to the grade above it."""

from __future__ import annotations

import pytest

from llmload.analysis.grade import TTFT_GRADES, grade_ttft


@pytest.mark.parametrize(
    ("p50_ms", "grade"),
    [(0.0, "excellent"), (299.99, "excellent"), (300.0, "good"), (799.9, "good"), (800.0, "pass"),
     (1499.0, "pass"), (1500.0, "poor"), (1999.9, "poor"), (2000.0, "bad"), (60_000.0, "bad")],
)  # fmt: skip
def test_grades_follow_the_table(p50_ms, grade):
    assert grade_ttft(p50_ms) == grade


def test_no_ttft_no_grade_and_the_table_is_ordered():
    assert grade_ttft(None) is None and grade_ttft(float("nan")) is None
    bounds = [b for _, b in TTFT_GRADES]
    assert bounds == sorted(bounds) and [g for g, _ in TTFT_GRADES] == ["excellent", "good", "pass", "poor", "bad"]
