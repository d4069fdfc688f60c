"""The live charts' data: one sample every few seconds in a bounded ring buffer, served as columns.

Each :class:`Sample` is what the LLM tab's live table shows at that moment (the aggregator's
last :data:`~llmload.metrics.aggregation.WINDOW_S` seconds, as last reported), per request
class and ``Overall``, plus the user count and, when collection is on
(:mod:`llmload.collect`), the engine's and GPUs' latest readings. Pure: the caller passes
the snapshot, the timeline and the time (:meth:`SeriesBuffer.record` stamps with its
injectable clock, wall-clock seconds by default so that samples line up with the ladder's
step windows).

Per class (``CLASS_FIELDS``, all over the window; ``None`` where the window has nothing):

=====================  ================================================================
``ttft_p50_ms`` ...    TTFT and TPOT p50/p99 (ms), as in the LLM tab
``ttfo_p50_ms``        TTFO p50 (ms; first answer or tool-call token), ``None`` unless a request reasoned
``ok_per_s``           successful requests / window time ("OK req/s")
``errors_per_s``       failed requests / window time ("Err/s")
``error_rate``         failed / finished requests (0..1)
``output_tokens_per_s``  output tokens of successful requests / window time
``in_flight``          requests in flight now (all classes for ``Overall``)
=====================  ================================================================

Engine (``SERVER_FIELDS``): ``waiting``, ``running`` (requests), ``kv_cache_usage`` (0..1);
GPU (``GPU_FIELDS``): ``utilization``, ``memory_bandwidth_utilization`` (0..1), all GPUs
combined by :mod:`llmload.collect.signal_table`' rules. The buffer holds :data:`CAPACITY`
samples (one hour at :data:`SAMPLE_INTERVAL_S`); the oldest go first.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llmload.collect.timeline import Timeline
from llmload.jsonvalue import Json
from llmload.metrics.aggregation import WINDOW_S, Snapshot
from llmload.metrics.recorder import ClassStats

__all__ = [
    "CAPACITY",
    "CLASS_FIELDS",
    "GPU_FIELDS",
    "OVERALL",
    "SAMPLE_INTERVAL_S",
    "SCHEMA",
    "SERVER_FIELDS",
    "Sample",
    "SeriesBuffer",
    "build_sample",
    "series_payload",
]

SCHEMA = "llmload.series/1"
SAMPLE_INTERVAL_S = 2.0
CAPACITY = 1800
OVERALL = "Overall"
CLASS_FIELDS = (
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "tpot_p99_ms",
    "ttfo_p50_ms",
    "ok_per_s",
    "errors_per_s",
    "error_rate",
    "output_tokens_per_s",
    "in_flight",
)
SERVER_FIELDS = ("waiting", "running", "kv_cache_usage")
GPU_FIELDS = ("utilization", "memory_bandwidth_utilization")

Values = tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class Sample:
    """One point of every series: wall time, users, per-class values, engine and GPU values."""

    t: float
    users: int
    classes: dict[str, Values]  # class name (and OVERALL) -> CLASS_FIELDS
    server: Values  # SERVER_FIELDS, None where not collected
    gpu: Values  # GPU_FIELDS


def _round(v: float | None, digits: int = 2) -> float | None:
    return None if v is None or not math.isfinite(v) else round(v, digits)


def _class_values(s: ClassStats, window_s: float, in_flight: int) -> Values:
    c = s.counters
    ttft = [v * 1000.0 for v in s.hist["ttft"].percentiles((0.5, 0.99))]
    tpot = [v * 1000.0 for v in s.hist["tpot"].percentiles((0.5, 0.99))]
    finished = c["ok"] + c["errors"]
    reasoned = c["reasoning_from_usage"] or c["reasoning_counted"]
    ttfo = s.hist["ttfo"].percentile(0.5) * 1000.0 if reasoned else None

    def per_s(n: int) -> float | None:
        return _round(n / window_s) if window_s > 0 else None

    return (
        *(_round(v) for v in (*ttft, *tpot)),
        _round(ttfo),
        per_s(c["ok"]),
        per_s(c["errors"]),
        _round(c["errors"] / finished, 4) if finished else None,
        per_s(c["output_tokens"]),
        in_flight,
    )


def build_sample(t: float, snap: Snapshot, users: int, classes: Iterable[str], timeline: Timeline | None) -> Sample:
    """The sample at wall time ``t``: ``classes`` (profile order) plus any other class seen, and Overall."""
    window, by_class = snap.window, snap.in_flight_by_class()
    names = list(dict.fromkeys([*classes, *window.classes, *by_class]))
    values = {name: _class_values(window.classes.get(name) or ClassStats(), snap.window_s, by_class.get(name, 0))
              for name in names}  # fmt: skip
    values[OVERALL] = _class_values(window.overall(), snap.window_s, snap.in_flight)
    if timeline is not None and len(timeline):
        server = tuple(_round(timeline.latest(f), 4) for f in SERVER_FIELDS)
        gpu = tuple(_round(timeline.latest_gpu(f), 4) for f in GPU_FIELDS)
    else:
        server, gpu = (None,) * len(SERVER_FIELDS), (None,) * len(GPU_FIELDS)
    return Sample(t, users, values, server, gpu)


class SeriesBuffer:
    """The last ``capacity`` samples of the current run; :meth:`reset` starts a new run."""

    def __init__(self, capacity: int = CAPACITY, clock: Callable[[], float] = time.time) -> None:
        if capacity < 1:
            raise ValueError(f"SeriesBuffer capacity {capacity}: must be at least 1")
        self.capacity = capacity
        self._clock = clock
        self._samples: deque[Sample] = deque(maxlen=capacity)
        self.generation = 0  # changes at every reset: a reader holding older samples starts again

    def __len__(self) -> int:
        return len(self._samples)

    def reset(self) -> None:
        self._samples.clear()
        self.generation += 1

    def record(self, snap: Snapshot, users: int, classes: Iterable[str], timeline: Timeline | None = None) -> Sample:
        """Sample now (the clock's time) and keep it; the oldest sample goes when the buffer is full."""
        sample = build_sample(self._clock(), snap, users, classes, timeline)
        self._samples.append(sample)
        return sample

    def since(self, t: float | None = None) -> list[Sample]:
        """Samples newer than ``t`` (all of them for None), oldest first."""
        if t is None:
            return list(self._samples)
        out = []
        for s in reversed(self._samples):
            if s.t <= t:
                break
            out.append(s)
        return out[::-1]

    def class_names(self, first: Iterable[str] = ()) -> list[str]:
        """``first``, then every other class a kept sample has (first seen first), Overall last."""
        names = dict.fromkeys(n for n in first if n != OVERALL)
        names.update(dict.fromkeys(n for s in self._samples for n in s.classes if n != OVERALL))
        return [*names, OVERALL]


def _step(w: Any) -> dict[str, Json]:
    return {
        "index": w.index,
        "users": w.users,
        "started_at": w.started_at,
        "steady_from": w.steady_from,
        "ended_at": w.ended_at,
    }


def _baseline_ms(baseline: dict[str, float] | None) -> dict[str, float | None] | None:
    if not baseline:
        return None
    return {f"{k}_ms": _round(v * 1000.0) for k, v in baseline.items()}


def series_payload(
    buffer: SeriesBuffer,
    class_name: str,
    *,
    classes: Iterable[str] = (),
    since: float | None = None,
    generation: int | None = None,
    steps: Sequence[Any] = (),
    baseline: dict[str, float] | None = None,
    limit_factor: float | None = None,
    state: str | None = None,
    ladder: dict[str, Json] | None = None,
) -> dict[str, Json]:
    """What ``/llmload/series`` serves: the samples newer than ``since`` as columns, for one class.

    ``since`` counts only for a reader of the buffer's current ``generation``: one that
    holds samples of an earlier run gets them all again. ``steps`` are the ladder's step
    windows (``index``, ``users``, ``started_at``, ``steady_from``, ``ended_at``, wall
    clock); ``baseline`` is the live baseline in seconds (``ttft_p50`` ...), served in ms
    with ``limit_factor`` (1 + ``--degradation``), the verdict's limit over it. ``classes``
    (profile order) lead the list of classes a reader can choose from; ``ladder`` is the running
    ladder's status (:func:`llmload.ladder.status.ladder_status`: step, time left, verdict so far).
    """
    full = generation != buffer.generation
    samples = buffer.since(None if full else since)
    empty: Values = (None,) * len(CLASS_FIELDS)
    rows = [s.classes.get(class_name, empty) for s in samples]
    columns: dict[str, list[Any]] = {"users": [s.users for s in samples]}
    for i, name in enumerate(CLASS_FIELDS):
        columns[name] = [r[i] for r in rows]
    for i, name in enumerate(SERVER_FIELDS):
        columns[name] = [s.server[i] for s in samples]
    for i, name in enumerate(GPU_FIELDS):
        columns[name] = [s.gpu[i] for s in samples]
    return {
        "schema": SCHEMA,
        "generation": buffer.generation,
        "full": full,
        "state": state,
        "class": class_name,
        "classes": buffer.class_names(classes),
        "interval_s": SAMPLE_INTERVAL_S,
        "window_s": WINDOW_S,
        "capacity": buffer.capacity,
        "t": [round(s.t, 3) for s in samples],
        "columns": columns,
        "steps": [_step(w) for w in steps],
        "baseline": _baseline_ms(baseline),
        "limit_factor": limit_factor,
        "ladder": ladder,
    }
