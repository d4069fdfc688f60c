"""Workarounds for Locust internals that distort what a worker measures.

Each one is small, keeps Locust's behaviour, and is installed once per process by
:func:`llmload.plugin.install` (idempotent). Each says which Locust version it was measured on;
remove it when Locust no longer needs it.

**A worker blocks its event loop for each spawn message** (Locust 2.47.0,
``WorkerRunner.handle_message``, the ``spawn`` branch): the custom options to copy from the
master are picked by ``k not in argument_parser.default_args_dict()`` for each option ``k`` of
the message, and ``default_args_dict()`` builds a whole argument parser on every call. With
llmload's 106 options that blocked a worker 143-148 ms per spawn message on this project's
machine (``benchmarks/spawn_block.py``), during which no stream chunk is read: in-flight
requests' timestamps move, the open-loop dispatcher sends late, and the loop-lag probe flags
the worker as saturated. A ramp sends one spawn message per second, a ladder one per step.
``default_args_dict()`` depends only on Locust's own arguments (no custom flags, no config
files), so its first result is kept and a copy handed out (:func:`cache_default_args`):
0.7-1.9 ms per message.

**A stopped worker is not ready again for ``stop_timeout`` seconds** (Locust 2.47.0,
``WorkerRunner.handle_message``, the ``stop`` branch): after ``stop()`` has already waited for
its users (up to ``stop_timeout``) the worker sleeps ``stop_timeout`` *again* before it sends
``client_ready``, and the master has dropped it from its clients meanwhile. A ladder sets the
stop timeout to the request timeout (default 10 min), so after a ladder stopped from the web UI
the master had no worker for ten minutes: the next test from the form "started" with none
(Locust: "You can't start a distributed test before at least one worker processes has
connected") and llmload marked every worker lost. :func:`ready_after_stop`, called on a worker's
``test_stop`` (after its users have stopped), sets the worker's stop timeout to 0, so Locust's
sleep ends at once; the next spawn message brings the master's stop timeout back.

**A stop blocks the event loop for 20-100 ms** (Locust 2.47.0, ``Runner.stop``, which a local
runner's and a worker's stop run): for one debug line naming its caller it calls
``inspect.getframeinfo(inspect.stack()[1][0])``, and ``inspect.stack()`` reads the source of every
frame of the stack (``inspect.getmodule`` walks ``sys.modules``): a 1 ms loop probe read the
longest gap of a running llmload process's stop as 31-43 ms on this project's 2-core machine, 4-6 ms
with this workaround (three runs each). Every run ends with a stop while requests are in
flight (``-t``, a ladder's end, Ctrl-C), so their chunks arriving meanwhile were read, and stamped,
late: one inflated inter-token gap, then zero gaps that were not on the wire. :data:`CALLER_ONLY`
is the ``inspect`` that ``locust.runners`` sees: its ``stack()`` is the frames themselves (the
caller's file and line are all the debug line reads) and nothing else changes.

**Two stops at once stop each user twice** (Locust 2.47.0, ``Runner.stop`` and ``stop_users``): a
stop while another is under way (its runner's state is ``cleanup``) starts its own: both ask every
user to stop gracefully before either request is handled, and the second one raises "Tried to stop
User in an unexpected state: stopping" (a traceback in the output). A worker that gets a Ctrl-C or
SIGTERM stops itself, and its master, which got the same signal (``--processes``, a terminal's
Ctrl-C, a process group's SIGTERM), sends it ``stop`` a few milliseconds later.
:func:`one_stop_at_a_time`: a stop while one is under way waits for that one to end.

**Every user's greenlet keeps the stack that spawned it** (gevent 26.9.0, ``track_greenlet_tree``,
on by default): six frames and a tree of locals per Locust user, ~0.9 KB of each idle session's
memory (``benchmarks/sessions_scale.py``), read only by gevent's debugging helpers
(``gevent.util.GreenletTree``), never by Locust or llmload. Switched off for the process.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import gevent
from gevent.event import Event
from locust import argument_parser
from locust import runners as locust_runners

__all__ = ["CALLER_ONLY", "cache_default_args", "install_locust_workarounds", "one_stop_at_a_time", "ready_after_stop"]


def cache_default_args(build: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """``build``, called once; every call returns a copy of its result (a caller may change its dict)."""
    cached: dict[str, Any] | None = None

    def default_args_dict() -> dict[str, Any]:
        nonlocal cached
        if cached is None:
            cached = build()
        return dict(cached)

    default_args_dict.llmload_cached = True  # type: ignore[attr-defined]
    default_args_dict.__wrapped__ = build  # type: ignore[attr-defined]
    return default_args_dict


class _CallerOnly:
    """:mod:`inspect` for ``locust.runners``, whose ``stack()`` reads no source (see the module docstring)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    @staticmethod
    def stack(context: int = 1) -> list[tuple[FrameType]]:
        """The frames from the caller of ``stack()`` up, each as a 1-tuple (``[i][0]`` is a frame), without this
        module's (:func:`one_stop_at_a_time`'s wrapper is not who called the stop)."""
        frames: list[tuple[FrameType]] = []
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_globals.get("__name__") != __name__:
                frames.append((frame,))
            frame = frame.f_back
        return frames

    @staticmethod
    def getframeinfo(frame: FrameType, context: int = 1) -> inspect.Traceback:
        """File, line and function of ``frame``, without its source lines."""
        return inspect.Traceback(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, None, None)


CALLER_ONLY = _CallerOnly()


def one_stop_at_a_time(stop: Callable[..., Any]) -> Callable[..., Any]:
    """``Runner.stop``, but a call while another call's stop is under way waits for that one to end (and a call
    from inside it, a listener of its events, returns at once)."""

    @functools.wraps(stop)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        under_way: tuple[Any, Event] | None = getattr(self, "_llmload_stop", None)
        if under_way is not None:
            if under_way[0] is not gevent.getcurrent():
                under_way[1].wait()
            return None
        done = Event()
        self._llmload_stop = (gevent.getcurrent(), done)
        try:
            return stop(self, *args, **kwargs)
        finally:
            self._llmload_stop = None
            done.set()

    wrapped.llmload_one_stop = True  # type: ignore[attr-defined]
    return wrapped


def install_locust_workarounds() -> None:
    """Install every workaround of this module in this process (once)."""
    current = getattr(argument_parser, "default_args_dict", None)
    if current is not None and not getattr(current, "llmload_cached", False):
        argument_parser.default_args_dict = cache_default_args(current)
    locust_runners.inspect = CALLER_ONLY  # type: ignore[assignment]  # a stand-in for the inspect module
    if not getattr(locust_runners.Runner.stop, "llmload_one_stop", False):
        locust_runners.Runner.stop = one_stop_at_a_time(locust_runners.Runner.stop)  # type: ignore[method-assign]
    gevent.config.track_greenlet_tree = False


def ready_after_stop(environment: Any) -> None:
    """A worker whose test has stopped (its users are gone): no second ``stop_timeout`` before ``client_ready``."""
    environment.stop_timeout = 0.0
