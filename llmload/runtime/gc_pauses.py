"""The cyclic garbage collector's pauses, which grow with the number of sessions a process holds.

CPython 3.11 runs a full (generation 2) collection whenever the objects that survived the
younger generations since the last one reach a quarter of those already in generation 2; each
visits every tracked object. A Locust user holds ~60 of them (its greenlet, HTTP session,
cookie jar, connection pool, socket, sampler, conversation), so a process holding thousands
of idle sessions stops its event loop for the whole visit: 150-390 ms at 5 000 sessions, up to
~1 s at 10 000 (``benchmarks/sessions_scale.py``, one process, this project's 2-core machine),
during which no chunk is read and every request in flight is stamped late (TTFT error p99
1.4 s at 10 000 sessions), and the conversation turns, new sessions and records that survive
keep triggering such collections.

:func:`freeze_users` (``spawning_complete``: the users of this spawn exist) moves every object
alive then to the permanent generation (``gc.freeze()``), which collections skip: they visit
what was created since. Objects are still freed when their reference count drops; only cyclic
garbage among the frozen ones waits, bounded by what existed at that moment (the users, their
connections). :func:`thaw` (``test_stop``: the users are gone) gives them back to the collector,
so a stopped test's users are collected before the next test (web UI) starts its own.

Locust fires ``spawning_complete`` once it has *started* the last users' greenlets, before they
ran: their task set, sampler, cookie jar, HTTP client and first connection are made when each
greenlet first runs. Freezing only then left them all to the collector: at 4 000 sessions
spawned at 500/s on a loaded box, 1 798 users' objects (82 k tracked in all) and a 44 ms full
collection. So :func:`freeze_users`, given the environment, freezes again once every user
greenlet has run (each is suspended in its first request, or done): checked every 0.2 s, for
30 s at most, and never after :func:`thaw`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from typing import Any

import gevent

__all__ = ["freeze_users", "thaw"]

_pending: list[Any] = []  # the greenlet waiting to freeze the users once they have run (one at most)


def _has_run(g: Any) -> bool:
    """A greenlet that ran: suspended somewhere (it has a frame), or finished."""
    return g.dead or g.gr_frame is not None


def _freeze_once_run(greenlets: Iterable[Any], poll_s: float, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and not all(_has_run(g) for g in list(greenlets)):
        gevent.sleep(poll_s)
    _pending.clear()
    gc.freeze()


def freeze_users(environment: Any = None, *, poll_s: float = 0.2, limit_s: float = 30.0) -> None:
    """Every object alive now out of the collector's visits (cheap: no collection runs).

    With the Locust ``environment``: again once every user greenlet of its runner has run
    (module docstring), from a greenlet of this process.
    """
    gc.freeze()
    greenlets = getattr(getattr(environment, "runner", None), "user_greenlets", None)
    if not greenlets or all(_has_run(g) for g in list(greenlets)):
        return
    for g in _pending:
        g.kill(block=False)
    _pending[:] = [gevent.spawn(_freeze_once_run, greenlets, poll_s, limit_s)]


def thaw() -> None:
    """Everything frozen back into the oldest generation (the next full collection sees it)."""
    for g in _pending:
        g.kill(block=False)
    _pending.clear()
    gc.unfreeze()
