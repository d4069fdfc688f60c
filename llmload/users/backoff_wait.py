"""Error backoff: after a failed request, a user waits before its next one.

Without it a failing server turns every user into a hot loop: 5 users against HTTP 500
sent 31 504 requests in 15 s, 2 users against a closed port 17 037 in 5 s. The client then
saturates, and what it reports (a saturated load generator) hides what happened (the
server answers nothing but errors). With backoff, a user's wait after its ``k``-th error
in a row is drawn from ``[d/2, d]`` with ``d = min(MIN · 2^(k-1), MAX)`` ("equal jitter":
users that failed together do not come back together); a success resets ``k``.

``Retry-After`` (on 429 and 503) is honoured: the wait is at least what the server asked
for, up to :data:`RETRY_AFTER_MAX_S` (a server asking for an hour would otherwise stop the
test without saying so). The header is seconds or an HTTP date.

Open-loop users do not back off: their arrivals come from the schedule, and a request
that could not be sent on time shows up as client wait. The policy (``--error-backoff``) is
:class:`~llmload.config.backoff.BackoffSpec`, part of the run's configuration. Pure: the RNG
and the wall clock (for HTTP dates) are passed in; the user does the sleeping and accounts for it.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from llmload.config.backoff import DEFAULT_MAX_S, DEFAULT_MIN_S, BackoffSpec

__all__ = ["DEFAULT_MAX_S", "DEFAULT_MIN_S", "RETRY_AFTER_MAX_S", "Backoff", "BackoffSpec", "retry_after_s"]

#: The longest ``Retry-After`` honoured, seconds.
RETRY_AFTER_MAX_S = 60.0
#: Statuses whose ``Retry-After`` is honoured.
RETRY_AFTER_STATUSES = frozenset({429, 503})


def retry_after_s(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """A ``Retry-After`` header in seconds from now (``None`` if absent or unreadable)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - now()
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


class Backoff:
    """One user's backoff state: :meth:`after_error` gives the wait, :meth:`after_success` resets."""

    __slots__ = ("_rng", "errors_in_a_row", "spec")

    def __init__(self, spec: BackoffSpec, rng: random.Random) -> None:
        self.spec = spec
        self._rng = rng
        self.errors_in_a_row = 0

    def after_error(self, retry_after: float | None = None) -> float:
        """Seconds to wait before the next request (0 when backoff is off)."""
        spec = self.spec
        if spec.min_s is None or spec.max_s is None:
            return 0.0
        self.errors_in_a_row += 1
        ceiling = min(spec.min_s * 2 ** min(self.errors_in_a_row - 1, 60), spec.max_s)
        delay = self._rng.uniform(ceiling / 2, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, RETRY_AFTER_MAX_S))
        return delay

    def after_success(self) -> None:
        self.errors_in_a_row = 0
