"""Classic Prometheus ``le`` bounds for llmload's latency histograms, exact over the fine ones.

llmload records latencies into fine log buckets, 1 % wide (:mod:`llmload.metrics.histogram`).
Prometheus wants a short list of cumulative ``le`` buckets. Each classic bound here starts
as a round number chosen for LLM latencies (:data:`NICE_BOUNDS`). It is then **snapped to the
nearest fine-bucket edge** (in log space, so it moves by at most 0.5 %), and that exact edge
value is what the ``le`` label shows: ``le="0.0998586..."`` stands for "100 ms".

Because every ``le`` is a fine edge, a classic bucket is an exact sum of fine buckets:
``_bucket{le=E}`` counts exactly the samples ``<= E``, the same count the fine histogram
(and so the run summary) holds. The only loss is resolution, which is why the bounds differ
per metric:

* ITL and TPOT (token pacing, usually 2–100 ms): fine steps at the low end, from 0.5 ms;
* TTFT (queueing plus prefill): 1 ms to 10 min, denser between 20 ms and 2 s; TTFO and
  reasoning time (TTFT plus thinking, thinking alone) use the same bounds;
* E2E (a whole answer): 10 ms to 10 min.

Samples above the last bound are counted in ``+Inf`` only; ``_sum`` and ``_count`` are exact.
"""

from __future__ import annotations

import math

import numpy as np

from llmload.metrics.histogram import EDGES, GROWTH, LOWEST

__all__ = ["BUCKETS", "NICE_BOUNDS", "ClassicBuckets", "snap_to_edge"]

#: Round bounds (seconds) before snapping, per metric of :data:`llmload.metrics.definitions.METRICS`
#: and the open loop's client wait.
NICE_BOUNDS: dict[str, tuple[float, ...]] = {
    "ttft": (
        0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
        1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0,
    ),
    "itl": (
        0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03,
        0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0,
    ),
    "tpot": (
        0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03,
        0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0,
    ),
    "e2e": (
        0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0,
        20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0,
    ),
    "client_wait": (  # open loop: actual - intended send (0 when a user was free)
        0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0,
        60.0, 120.0, 300.0, 600.0,
    ),
}  # fmt: skip
NICE_BOUNDS["ttfo"] = NICE_BOUNDS["reasoning"] = NICE_BOUNDS["ttft"]


def snap_to_edge(value: float) -> tuple[int, float]:
    """The fine edge nearest to ``value`` seconds (in log space): ``(edge index, edge value)``."""
    i = round((math.log(value) - math.log(LOWEST)) / math.log(GROWTH))
    i = min(max(i, 0), len(EDGES) - 1)
    return i, float(EDGES[i])


class ClassicBuckets:
    """The classic bounds of one metric: exact fine edges, their indices and ``le`` labels."""

    __slots__ = ("bounds", "indices", "labels")

    def __init__(self, nice: tuple[float, ...]) -> None:
        snapped = [snap_to_edge(v) for v in nice]
        indices = [i for i, _ in snapped]
        if any(b <= a for a, b in zip(indices, indices[1:], strict=False)):
            raise ValueError(f"classic bounds {nice} do not map to increasing fine edges")
        #: Fine-bucket index each bound closes: cumulative count = cumsum(counts)[index].
        self.indices = np.asarray(indices, dtype=np.int64)
        #: Exact bound values (seconds), each an element of ``EDGES``.
        self.bounds = np.asarray([e for _, e in snapped], dtype=np.float64)
        #: ``le`` label values: the shortest repr that reads back as the exact edge, then "+Inf".
        self.labels = (*(repr(float(e)) for e in self.bounds), "+Inf")

    def __len__(self) -> int:
        return len(self.bounds)


#: Metric name → its classic buckets.
BUCKETS: dict[str, ClassicBuckets] = {m: ClassicBuckets(nice) for m, nice in NICE_BOUNDS.items()}
