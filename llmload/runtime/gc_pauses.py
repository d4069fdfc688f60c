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
"""

from __future__ import annotations

import gc

__all__ = ["freeze_users", "thaw"]


def freeze_users() -> None:
    """Every object alive now out of the collector's visits (cheap: no collection runs)."""
    gc.freeze()


def thaw() -> None:
    """Everything frozen back into the oldest generation (the next full collection sees it)."""
    gc.unfreeze()
