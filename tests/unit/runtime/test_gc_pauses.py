from __future__ import annotations

import gc

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
