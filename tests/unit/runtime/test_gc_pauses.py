from __future__ import annotations

import gc

import gevent
import gevent.event

from llmload.runtime import gc_pauses
from llmload.runtime.gc_pauses import freeze_users, thaw


def test_objects_alive_at_the_spawn_leave_the_collections_until_the_test_stops():
    thaw()
    kept = [[i] for i in range(1000)]  # tracked containers, as a user's objects are
    try:
        freeze_users()
        assert gc.get_freeze_count() >= len(kept)
        tracked_now = sum(len(gc.get_objects(g)) for g in range(3))
        assert tracked_now < gc.get_freeze_count()  # a full collection visits only what came after
    finally:
        thaw()
    assert gc.get_freeze_count() == 0


class _Runner:
    def __init__(self, greenlets):
        self.user_greenlets = greenlets


class _Env:
    def __init__(self, greenlets):
        self.runner = _Runner(greenlets)


def _user(made: list, go: gevent.event.Event) -> None:
    mine = [[i] for i in range(200)]  # made as the greenlet first runs, as a user's task set and client are
    made.append(mine)
    go.wait()


def _unfrozen(objs: list) -> int:
    ids = {id(o) for g in range(3) for o in gc.get_objects(g)}
    return sum(id(o) in ids for o in objs)


def test_users_started_but_not_yet_run_at_the_spawn_are_frozen_once_they_ran():
    thaw()
    made: list = []
    go = gevent.event.Event()
    users = [gevent.spawn(_user, made, go) for _ in range(5)]  # started, not run: as at spawning_complete
    try:
        freeze_users(_Env(users), poll_s=0.01)
        assert len(gc_pauses._pending) == 1
        gevent.joinall(list(gc_pauses._pending), timeout=10)  # the users run (and wait); then it freezes
        assert len(made) == 5 and not gc_pauses._pending
        assert _unfrozen([x for m in made for x in m]) == 0  # out of the collections
    finally:
        go.set()
        gevent.joinall(users)
        thaw()
    assert gc.get_freeze_count() == 0


def test_thaw_cancels_a_pending_freeze():
    thaw()
    go = gevent.event.Event()
    made: list = []
    users = [gevent.spawn(_user, made, go) for _ in range(3)]
    freeze_users(_Env(users), poll_s=0.01)
    pending = list(gc_pauses._pending)
    thaw()  # the test stopped before the users ran
    gevent.joinall(pending, timeout=10)
    assert all(g.dead for g in pending) and gc.get_freeze_count() == 0
    go.set()
    gevent.joinall(users)


def test_users_that_all_ran_need_no_second_freeze():
    thaw()
    go = gevent.event.Event()
    made: list = []
    users = [gevent.spawn(_user, made, go) for _ in range(3)]
    gevent.sleep(0)  # they run to their wait
    try:
        freeze_users(_Env(users))
        assert not gc_pauses._pending
        assert _unfrozen([x for m in made for x in m]) == 0
    finally:
        go.set()
        gevent.joinall(users)
        thaw()
