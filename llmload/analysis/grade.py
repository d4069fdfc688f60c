"""The TTFT grade of a request class: how its median wait for the first token feels to a user.

One table (:data:`TTFT_GRADES`), read by the console and the report; each grade holds
TTFT p50 values *below* its upper bound (ms) and at or above the previous one's::

    grade       TTFT p50
    excellent   < 300 ms
    good        300 ms - < 800 ms
    pass        800 ms - < 1.5 s
    poor        1.5 s - < 2 s
    bad         >= 2 s

A class without a TTFT (no successful request) has no grade. It grades the client's TTFT,
what a user of the service waits for, not the server's own figure.
"""

from __future__ import annotations

import math

__all__ = ["TTFT_GRADES", "grade_ttft"]

#: (grade, upper bound in ms, exclusive), best first; the last bound is infinite.
TTFT_GRADES: tuple[tuple[str, float], ...] = (
    ("excellent", 300.0),
    ("good", 800.0),
    ("pass", 1500.0),
    ("poor", 2000.0),
    ("bad", math.inf),
)


def grade_ttft(p50_ms: float | None) -> str | None:
    """The grade of a TTFT p50 in ms (module docstring); None without one."""
    if p50_ms is None or math.isnan(p50_ms):
        return None
    return next(name for name, bound in TTFT_GRADES if p50_ms < bound)
