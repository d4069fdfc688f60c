"""A cold start in the measured run: the TTFT of its first requests against the rest's, mergeable.

Which requests are "the first 10 %" is only known at the end, after every process's reports
are merged, and no per-request data travels. So each process keeps one TTFT
:class:`~llmload.metrics.histogram.Histogram` per *slice* of the run, keyed by the request's
start time relative to the test's start (:class:`StartSlices`); slices merge by addition.
Slices grow geometrically (``SLICE0_S`` wide, each ``GROWTH`` times the last): ~40 slices
cover an hour, and the slice holding the 10 % mark is at most ``GROWTH - 1`` of the run's
time so far wide. At the end (:meth:`StartSlices.split`) the earliest slices that hold at least
``share`` of the TTFTs form the "first" part (so slightly more than the share, never less),
the others the rest; :func:`cold_start_warning` compares their p99s.

Wire form: ``{slice: HistogramWire}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from llmload.metrics.histogram import Histogram, HistogramWire

__all__ = ["COLD_RATIO", "FIRST_SHARE", "GROWTH", "SLICE0_S", "StartSlices", "StartSlicesWire", "cold_start_warning",
           "slice_of"]

#: :meth:`StartSlices.to_wire`: ``{slice index: histogram wire}`` (the keys as strings, as JSON has them)
StartSlicesWire = dict[str, HistogramWire]

SLICE0_S = 0.5  # the first slice: requests that started in the first half second
GROWTH = 1.25
FIRST_SHARE = 0.10  # "the first 10 %" of the requests
COLD_RATIO = 3.0  # warn when the first part's TTFT p99 is above this many times the rest's
_MIN_REST = 20  # fewer measured requests after the first part: nothing to compare


def slice_of(start_s: float) -> int:
    """Slice 0 holds ``[0, SLICE0_S)``; slice ``k`` ends at ``SLICE0_S * (GROWTH**(k+1) - 1) / (GROWTH - 1)``."""
    if start_s < SLICE0_S:
        return 0
    return int(math.log(start_s * (GROWTH - 1) / SLICE0_S + 1) / math.log(GROWTH))


class StartSlices:
    """TTFT histograms per start-time slice of one run (see the module docstring)."""

    __slots__ = ("slices",)

    def __init__(self) -> None:
        self.slices: dict[int, Histogram] = {}

    def add(self, start_s: float, ttft_s: float) -> None:
        k = slice_of(max(start_s, 0.0))
        h = self.slices.get(k)
        if h is None:
            h = self.slices[k] = Histogram()
        h.record(ttft_s)

    def merge(self, other: StartSlices) -> None:
        for k, h in other.slices.items():
            mine = self.slices.get(k)
            if mine is None:
                self.slices[k] = h.copy()
            else:
                mine.merge(h)

    @property
    def empty(self) -> bool:
        return not any(h.count for h in self.slices.values())

    def split(self, share: float = FIRST_SHARE) -> tuple[Histogram, Histogram]:
        """(the earliest slices holding at least ``share`` of the TTFTs, the later ones), merged."""
        first, rest = Histogram(), Histogram()
        total = sum(h.count for h in self.slices.values())
        need = share * total
        for k in sorted(self.slices):
            h = self.slices[k]
            (first if first.count < need else rest).merge(h)
        return first, rest

    def to_wire(self) -> StartSlicesWire:
        return {str(k): h.to_wire() for k, h in self.slices.items() if h.count}

    @classmethod
    def from_wire(cls, wire: Mapping[str, HistogramWire] | None) -> StartSlices:
        s = cls()
        for k, hw in (wire or {}).items():
            s.slices[int(k)] = Histogram.from_wire(hw)
        return s


def cold_start_warning(slices: StartSlices) -> str | None:
    """The warning for a run measured without warm-up whose first ~10 % of requests were much slower to first token."""
    first, rest = slices.split()
    if not first.count or rest.count < _MIN_REST:
        return None
    p_first, p_rest = first.percentile(0.99), rest.percentile(0.99)
    if not p_rest > 0 or p_first <= COLD_RATIO * p_rest:
        return None
    return (
        f"cold start: the first {first.count} of {first.count + rest.count} requests had TTFT p99 {p_first * 1000:.0f} ms, "
        f"{p_first / p_rest:.1f}x the rest's {p_rest * 1000:.0f} ms; their wait is in the run's percentiles. "
        "Leave it out with --warmup DURATION (e.g. --warmup 30s) or --warmup-requests N"
    )
