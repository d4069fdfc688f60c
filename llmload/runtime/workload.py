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
from llmload.errors import ProfileError
from llmload.workload import Profile, load_profile
from llmload.workload.traces import Trace, load_trace, trace_profile

__all__ = ["RunWorkload", "run_workload"]

#: The APIs whose requests carry image parts and tool definitions (the others send text only).
MESSAGE_APIS = ("openai-chat", "openai-responses", "anthropic-messages")


class RunWorkload(NamedTuple):
    profile: Profile
    trace: Trace | None = None  # --trace: the entries to replay (their first --trace-limit)


def run_workload(config: RunConfig) -> RunWorkload:
    """The workload ``config`` names (:class:`~llmload.errors.ProfileError` on a bad profile or trace)."""
    source = config.arrival.trace
    if source is None:
        profile = load_profile(config.profile)
        check_api(profile, config.api, config.profile)
        return RunWorkload(profile)
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


def check_api(profile: Profile, api: str, where: str) -> None:
    """A class with images or tools on an API that cannot send them is a :class:`ProfileError` (before any load),
    not a run that silently sends its text only."""
    if api in MESSAGE_APIS:
        return
    for c in profile.classes:
        what = "images" if c.images is not None else "tools (an agent class)" if c.agent is not None else None
        if what is not None:
            raise ProfileError(f"profile {where}: class {c.name!r} sends {what}, which --api {api} cannot carry: "
                               f"use --api {', '.join(MESSAGE_APIS[:-1])} or {MESSAGE_APIS[-1]}, or drop them from the class")
