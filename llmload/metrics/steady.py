"""Steady state: did the measured window settle, or were TTFT, TPOT or the in-flight count still moving?

**Record.** Per wall-clock second (slice ``int(t)``) a :class:`SteadySlices` keeps the count and
sum of TTFT and of TPOT of the requests reported in that second, and the sum and number of
samples of the in-flight gauge. The master (or a standalone process) records it as each
worker's ~1 s report is merged (:meth:`SteadySlices.add`: the report's delta and the live
processes' in-flight total), so the slices of all workers merge by slice index, by addition
(:meth:`SteadySlices.merge`, and over a wire as ``{slice: [ttft_n, ttft_sum, tpot_n, tpot_sum,
inflight_sum, inflight_samples]}``). A request counts in the second its result was reported.

**Test.** :func:`judge` over a window ``[t0, t1)`` (the run's measured part, or a ladder step's
steady window): the whole seconds in it are cut into ``B = min(10, seconds // 2)`` batches
(at least :data:`MIN_BATCHES`, so at least 10 s); each batch's mean TTFT, mean TPOT and mean
in-flight count; per series the **Mann-Kendall** trend test (two-sided, normal approximation,
p < 0.05) and **Sen's slope** (the median of the pairwise slopes). A series is moving when the
trend is significant and its drift over the window (slope x window) exceeds 20 % of its mean
for TTFT and TPOT (a busy client box moves them ~10 %), 10 % and at least one request for the
in-flight count; TTFT and TPOT either way (a falling TTFT is a cold start
still wearing off), the in-flight count when it climbs (it falls at every run's end: the drain).
``steady`` is False with the reasons (``ttft rising 18 %/min``, ``in-flight still climbing
(+3.0/min)``), True when nothing moves, None when the window is too short to tell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmload.jsonvalue import Json
from llmload.metrics.warmup_window import RunNotes

__all__ = ["MIN_BATCHES", "SteadySlices", "judge", "mann_kendall", "steady_into"]

MIN_BATCHES = 5
MAX_BATCHES = 10
P_TREND = 0.05
DRIFT = {"ttft": 0.20, "tpot": 0.20, "in_flight": 0.10}  # of the series' mean, over the window


@dataclass(slots=True)
class _Slice:
    ttft_n: int = 0
    ttft_sum: float = 0.0
    tpot_n: int = 0
    tpot_sum: float = 0.0
    inflight_sum: float = 0.0
    inflight_samples: int = 0

    def to_list(self) -> list[float]:
        return [self.ttft_n, self.ttft_sum, self.tpot_n, self.tpot_sum, self.inflight_sum, self.inflight_samples]

    def merge(self, o: _Slice) -> None:
        self.ttft_n += o.ttft_n
        self.ttft_sum += o.ttft_sum
        self.tpot_n += o.tpot_n
        self.tpot_sum += o.tpot_sum
        self.inflight_sum += o.inflight_sum
        self.inflight_samples += o.inflight_samples


class SteadySlices:
    """Per-second count/sum of TTFT and TPOT and the in-flight samples of one run (module docstring)."""

    __slots__ = ("slices",)

    def __init__(self) -> None:
        self.slices: dict[int, _Slice] = {}

    def _at(self, t: float) -> _Slice:
        k = int(math.floor(t))
        s = self.slices.get(k)
        if s is None:
            s = self.slices[k] = _Slice()
        return s

    def add(self, t: float, ttft: tuple[int, float] = (0, 0.0), tpot: tuple[int, float] = (0, 0.0),
            in_flight: float | None = None) -> None:  # fmt: skip
        """At wall time ``t``: ``(count, sum)`` of TTFT and TPOT (seconds) reported, the in-flight total now."""
        s = self._at(t)
        s.ttft_n += ttft[0]
        s.ttft_sum += ttft[1]
        s.tpot_n += tpot[0]
        s.tpot_sum += tpot[1]
        if in_flight is not None:
            s.inflight_sum += in_flight
            s.inflight_samples += 1

    def merge(self, other: SteadySlices) -> None:
        for k, s in other.slices.items():
            mine = self.slices.get(k)
            if mine is None:
                self.slices[k] = mine = _Slice()
            mine.merge(s)

    def to_wire(self) -> dict[str, list[float]]:
        return {str(k): s.to_list() for k, s in self.slices.items()}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Sequence[float]] | None) -> SteadySlices:
        out = cls()
        for k, v in (wire or {}).items():
            out.slices[int(k)] = _Slice(int(v[0]), float(v[1]), int(v[2]), float(v[3]), float(v[4]), int(v[5]))
        return out

    def into(self, load: RunNotes, windows: Any, stop_wall: float) -> None:
        """:func:`steady_into` of these slices."""
        steady_into(load, self, windows, stop_wall)

    def first_measured(self) -> int | None:
        """The first second with a TTFT reported (None: none)."""
        return min((k for k, s in self.slices.items() if s.ttft_n), default=None)


def mann_kendall(y: np.ndarray) -> tuple[float, float]:
    """(two-sided p-value, Sen's slope per index) of ``y``'s monotonic trend (ties ignored in the variance)."""
    n = len(y)
    if n < 3:
        return 1.0, 0.0
    i, j = np.triu_indices(n, k=1)
    d = y[j] - y[i]
    s = float(np.sign(d).sum())
    var = n * (n - 1) * (2 * n + 5) / 18.0
    z = (s - math.copysign(1.0, s)) / math.sqrt(var) if s else 0.0
    p = math.erfc(abs(z) / math.sqrt(2.0))
    return p, float(np.median(d / (j - i)))


def _series(batches: list[list[_Slice]], n_key: str, sum_key: str) -> tuple[np.ndarray, np.ndarray]:
    """(batch index, batch mean) of the batches that have samples."""
    xs, ys = [], []
    for b, group in enumerate(batches):
        n = sum(getattr(s, n_key) for s in group)
        if n:
            xs.append(b)
            ys.append(sum(getattr(s, sum_key) for s in group) / n)
    return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


@dataclass(frozen=True, slots=True)
class _Trend:
    """One series' trend over the batches: Mann-Kendall's p, Sen's slope per minute, the mean, the drift."""

    p: float
    slope_per_min: float
    mean: float
    drift: float
    pct_per_min: float | None


def _trend(xs: np.ndarray, ys: np.ndarray, batch_s: float) -> _Trend | None:
    if len(ys) < MIN_BATCHES:
        return None
    p, slope = mann_kendall(ys)  # per batch index step: a gap where a batch had no sample is ignored
    mean = float(ys.mean())
    per_min = slope / batch_s * 60.0
    drift = slope * (xs[-1] - xs[0]) if len(xs) > 1 else 0.0
    return _Trend(round(p, 4), per_min, mean, drift, per_min / mean * 100 if mean else None)


def judge(slices: SteadySlices, t0: float, t1: float) -> dict[str, Json]:
    """The steady-state verdict of the window ``[t0, t1)`` (module docstring)::

    {"steady": bool | None, "reason": str, "window_s", "batches", "method",
     "ttft" | "tpot" | "in_flight": {"p", "slope_per_min", "mean", "pct_per_min"} | None}
    """
    seconds = [k for k in range(int(math.ceil(t0)), int(math.floor(t1))) if k in slices.slices]
    span = int(math.floor(t1)) - int(math.ceil(t0))
    out: dict[str, Json] = {"steady": None, "reason": "", "window_s": max(span, 0), "batches": 0,
                           "method": "Mann-Kendall (p < 0.05) on batch means, Sen's slope; moving: drift > 20 % (in-flight 10 %) of the mean",
                           "ttft": None, "tpot": None, "in_flight": None}  # fmt: skip
    n_batches = min(MAX_BATCHES, span // 2) if span > 0 else 0
    if n_batches < MIN_BATCHES or not seconds:
        out["reason"] = f"window too short to tell ({max(span, 0)} s; a trend test needs >= {2 * MIN_BATCHES} s)"
        return out
    start = int(math.ceil(t0))
    batch_s = span / n_batches
    batches: list[list[_Slice]] = [[] for _ in range(n_batches)]
    for k in seconds:
        batches[min(int((k - start) / batch_s), n_batches - 1)].append(slices.slices[k])
    out["batches"] = n_batches
    reasons = []
    for name, n_key, sum_key in (("ttft", "ttft_n", "ttft_sum"), ("tpot", "tpot_n", "tpot_sum"),
                                 ("in_flight", "inflight_samples", "inflight_sum")):  # fmt: skip
        xs, ys = _series(batches, n_key, sum_key)
        t = _trend(xs, ys, batch_s)
        if t is None:
            continue
        moving = t.p < P_TREND and abs(t.drift) > DRIFT[name] * abs(t.mean)
        if name == "in_flight":
            if moving and t.drift >= 1.0:
                reasons.append(f"in-flight still climbing ({t.slope_per_min:+.1f}/min, mean {t.mean:.1f})")
        elif moving and t.pct_per_min is not None:  # moving: the mean is not 0, so its percentage is known
            reasons.append(f"{name} {'rising' if t.drift > 0 else 'falling'} {abs(t.pct_per_min):.0f} %/min")
        out[name] = {"p": t.p, "slope_per_min": round(t.slope_per_min, 4), "mean": round(t.mean, 6),
                     "pct_per_min": round(t.pct_per_min, 2) if t.pct_per_min is not None else None}  # fmt: skip
    if out["ttft"] is None and out["in_flight"] is None:
        out["reason"] = "too few reports in the window to tell"
        return out
    out["steady"] = not reasons
    out["reason"] = "; ".join(reasons) if reasons else "no trend in TTFT, TPOT or in-flight"
    return out


def steady_into(load: RunNotes, slices: SteadySlices, windows: Any, stop_wall: float) -> None:
    """The coordinator's end of run: the summary's ``steady`` block (``load["extra"]``) and a warning per window
    that was not steady (``load["warnings"]``). ``windows``: a ladder's steps (each judged over its steady
    window; the run as a whole climbs by design), else the run from its first reported TTFT to ``stop_wall``."""
    warnings: list[str] = []
    steps: list[Json] = []
    run: dict[str, Json] | None = None
    if windows:
        for w in windows:
            if w.steady_from is None or w.ended_at is None or w.index < 0:
                continue
            j = {"index": w.index, "users": w.users, **judge(slices, w.steady_from, w.ended_at)}
            steps.append(j)
            if j["steady"] is False:
                warnings.append(f"ladder step {w.index} ({w.users} users) was not steady over its {j['window_s']} s "
                                f"window: {j['reason']}; its figures may not hold: lengthen --step-time")  # fmt: skip
    else:
        t0 = slices.first_measured()
        run = judge(slices, t0 if t0 is not None else stop_wall, stop_wall)
        if run["steady"] is False:
            warnings.append(f"not steady: over the measured {run['window_s']} s {run['reason']}; the figures describe "
                            "a moving state: run longer, or leave the start out with --warmup")  # fmt: skip
    load["extra"] = {**load.get("extra", {}), "steady": {"run": run, "steps": steps}}
    if warnings:
        load["warnings"] = (*load.get("warnings", ()), *warnings)
