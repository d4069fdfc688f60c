"""ArrivalStats: merge by addition, and the wire form a worker's report carries."""

from __future__ import annotations

import msgpack

from llmload.metrics.arrival_stats import ArrivalStats


def _stats(n, waited, lags):
    s = ArrivalStats()
    s.arrivals, s.waited = n, waited
    for x in lags:
        s.lag.record(x)
    return s


def test_merge_is_addition_and_the_wire_form_round_trips_through_msgpack():
    a, b = _stats(3, 1, [0.001, 0.002, 0.003]), _stats(2, 2, [0.010, 0.020])
    wire = msgpack.unpackb(msgpack.packb(b.to_wire()))
    merged = a.copy()
    merged.merge(ArrivalStats.from_wire(wire))
    assert (merged.arrivals, merged.waited, merged.lag.count) == (5, 3, 5)
    assert merged.lag.max == 0.020 and merged.lag.min == 0.001
    assert (a.arrivals, a.lag.count) == (3, 3)  # copy() left a alone


def test_empty_and_missing_wire():
    assert ArrivalStats.from_wire(None).empty
    assert ArrivalStats.from_wire({"n": 0, "w": 0, "lag": ArrivalStats().lag.to_wire()}).empty
