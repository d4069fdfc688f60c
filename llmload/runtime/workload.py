"""The run's workload, one door for every role: the profile, or the trace being replayed and its profile.

``--trace FILE`` replaces the profile (:func:`llmload.workload.traces.trace_profile`); the
coordinator, each load process and the pre-flight all ask :func:`run_workload`, so they
agree on the class names and the entries. A trace file is read once per process for a given
(path, limit, size, modification time): a test start from the web UI re-reads it only when the
file changed.
"""

from __future__ import annotations

import functools
import os
from typing import NamedTuple

from llmload.config import RunConfig
from llmload.workload import Profile, load_profile
from llmload.workload.traces import Trace, load_trace, trace_profile

__all__ = ["RunWorkload", "run_workload"]


class RunWorkload(NamedTuple):
    profile: Profile
    trace: Trace | None = None  # --trace: the entries to replay (their first --trace-limit)


def run_workload(config: RunConfig) -> RunWorkload:
    """The workload ``config`` names (:class:`~llmload.errors.ProfileError` on a bad profile or trace)."""
    source = config.arrival.trace
    if source is None:
        return RunWorkload(load_profile(config.profile))
    try:
        st = os.stat(source.path)
    except OSError:  # load_trace says what is wrong, in one line
        return _replay(source.path, source.limit, None)
    return _replay(source.path, source.limit, (st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _replay(path: str, limit: int | None, identity: tuple[int, int] | None) -> RunWorkload:
    """``identity`` (size, mtime) keys the cache: a changed file is read again."""
    trace = load_trace(path, limit)
    return RunWorkload(trace_profile(trace), trace)
