"""The cold-start check: TTFT histograms per start-time slice, merged across processes, split at the end."""

from __future__ import annotations

import pytest

from llmload.metrics.coldstart import GROWTH, SLICE0_S, StartSlices, cold_start_warning, slice_of


def test_slices_grow_geometrically_from_the_first_half_second():
    assert slice_of(0.0) == 0 and slice_of(SLICE0_S - 1e-9) == 0
    assert slice_of(SLICE0_S) == 1
    end1 = SLICE0_S * (1 + GROWTH)
    assert slice_of(end1 - 1e-6) == 1 and slice_of(end1 + 1e-6) == 2
    assert slice_of(3600.0) < 45  # an hour: a few dozen histograms


def test_split_takes_the_earliest_slices_holding_at_least_the_share():
    s = StartSlices()
    for i in range(100):
        s.add(i * 0.1, 0.05 if i >= 10 else 1.0)
    first, rest = s.split(0.10)
    assert first.count >= 10 and first.count + rest.count == 100
    assert first.percentile(0.99) > 0.9


def _run(first_ttft: float, rest_ttft: float, n_first: int = 20, n_rest: int = 200) -> StartSlices:
    s = StartSlices()
    for i in range(n_first):
        s.add(i * 0.1, first_ttft)
    for i in range(n_rest):
        s.add(n_first * 0.1 + i * 0.05, rest_ttft)
    return s


@pytest.mark.parametrize(("first", "warns"), [(1.0, True), (0.16, True), (0.14, False), (0.05, False)])
def test_it_warns_above_three_times_the_rest(first, warns):
    assert (cold_start_warning(_run(first, 0.05)) is not None) is warns


def test_merged_over_the_wire_from_two_processes_it_decides_as_one():
    a, b = _run(1.0, 0.05, n_first=10, n_rest=100), _run(1.0, 0.05, n_first=10, n_rest=100)
    merged = StartSlices.from_wire(a.to_wire())
    merged.merge(StartSlices.from_wire(b.to_wire()))
    assert sum(h.count for h in merged.slices.values()) == 220
    warning = cold_start_warning(merged)
    assert warning is not None and "--warmup" in warning


def test_too_few_requests_after_the_first_part_decide_nothing():
    assert cold_start_warning(_run(1.0, 0.05, n_first=5, n_rest=10)) is None
    assert cold_start_warning(StartSlices()) is None
