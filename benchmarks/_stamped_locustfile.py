"""Benchmark-only locustfile: llmload's user, plus the simulator's send stamps, for timing-error runs.

Used by ``benchmarks/client_overhead.py`` for its *timing-error* runs, never for its CPU
runs (those use the packaged locustfile, so their figure is the product's cost). Run it
against ``python -m llmload.sim --stamp-chunks``, which puts the server's send time
(``"llmload_sent_ns"``, ``perf_counter_ns()`` = CLOCK_MONOTONIC, same clock as the
client's on one Linux host) into every content chunk.

How it plugs in (no change to llmload):

* :class:`StampedChatAdapter` subclasses the ``openai-chat`` adapter and is registered in
  the built-in registry (``BUILTIN_ADAPTERS``) under ``openai-chat-stamped``, made the
  default ``--api`` of this locustfile. Its ``feed`` parses exactly like the product's,
  then, for each content event, appends the event's server stamp to a list owned by the
  current greenlet (one user = one greenlet = one request at a time).
* A listener on ``environment.events.llmload_request`` (fired in the user's greenlet when
  the request ends) pops that list and pairs it with ``record.chunk_ns`` (one client
  stamp per content event, so the two lists line up one to one).

Per successful request it keeps: client gap − server gap for every consecutive pair of
content events (ITL error), client − server stamp of every content event (lateness),
the first event's lateness and the client TTFT. At ``quitting`` it writes them, with the
client time of each gap relative to ``test_start`` (so the reader can drop a warm-up),
as JSON to ``$LLMLOAD_BENCH_STAMPS``.
"""

from __future__ import annotations

import os
import time
from typing import Any

import gevent
import numpy as np
import orjson
from locust import events

from llmload.adapters import BUILTIN_ADAPTERS, OpenAIChatAdapter
from llmload.adapters.base import StreamState
from llmload.plugin import activate
from llmload.users import LLMUser

__all__ = ["OUTPUT_ENV", "StampedChatAdapter", "StampedStreamUser"]

#: Environment variable naming the JSON file written at ``quitting``.
OUTPUT_ENV = "LLMLOAD_BENCH_STAMPS"
_KEY = b'"llmload_sent_ns":'
_MISSING = -1

# Server stamps of the request each user greenlet is streaming now.
_stamps: dict[Any, list[int]] = {}


class StampedChatAdapter(OpenAIChatAdapter):
    """``openai-chat`` that also collects each content chunk's ``llmload_sent_ns``."""

    name = "openai-chat-stamped"

    def feed(self, state: StreamState, data: bytes, event: str = "") -> int:
        n = super().feed(state, data, event)
        if n > 0:
            i = data.rfind(_KEY)
            if i >= 0:
                start = i + len(_KEY)
                stamp = int(data[start : data.index(b"}", start)])
            else:
                stamp = _MISSING
            me = gevent.getcurrent()
            got = _stamps.get(me)
            if got is None:
                got = _stamps[me] = []
            got.append(stamp)
        return n


class _Collector:
    """Pairs client and server stamps per finished request; writes them all at the end."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.t0_ns = time.perf_counter_ns()
        self.gap_err: list[np.ndarray] = []
        self.gap_at_ms: list[np.ndarray] = []
        self.late: list[np.ndarray] = []
        self.first_late: list[int] = []
        self.first_at_ms: list[int] = []
        self.ttft: list[int] = []
        self.turn: list[int] = []
        self.counts = {"paired": 0, "not_ok": 0, "unstamped": 0, "mismatched": 0}

    def on_test_start(self, **_: Any) -> None:
        self.reset()

    def on_request(self, record: Any, **_: Any) -> None:
        server = _stamps.pop(gevent.getcurrent(), None)
        if record.outcome != "ok" or not record.chunk_ns:
            self.counts["not_ok"] += 1
            return
        if not server or _MISSING in server:
            self.counts["unstamped"] += 1
            return
        if len(server) != len(record.chunk_ns):
            self.counts["mismatched"] += 1
            return
        c = np.asarray(record.chunk_ns, dtype=np.int64)
        s = np.asarray(server, dtype=np.int64)
        self.counts["paired"] += 1
        self.late.append(c - s)
        self.first_late.append(int(c[0] - s[0]))
        self.first_at_ms.append((int(c[0]) - self.t0_ns) // 1_000_000)
        self.ttft.append(int(c[0] - record.start_ns))
        self.turn.append(record.turn)
        if len(c) > 1:
            self.gap_err.append(np.diff(c) - np.diff(s))
            self.gap_at_ms.append((c[1:] - self.t0_ns) // 1_000_000)

    def write(self, **_: Any) -> None:
        path = os.environ.get(OUTPUT_ENV)
        if not path:
            return
        if os.environ.get(OUTPUT_ENV + "_PER_PROCESS"):  # --processes N: each process writes its own file
            path = f"{path}.{os.getpid()}"
        cat = lambda parts: np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)  # noqa: E731
        out = {
            "counts": self.counts,
            "gap_err_ns": cat(self.gap_err),
            "gap_at_ms": cat(self.gap_at_ms),
            "late_ns": cat(self.late),
            "first_late_ns": np.asarray(self.first_late, dtype=np.int64),
            "first_at_ms": np.asarray(self.first_at_ms, dtype=np.int64),
            "ttft_ns": np.asarray(self.ttft, dtype=np.int64),
            "turn": np.asarray(self.turn, dtype=np.int64),
        }
        with open(path, "wb") as f:
            f.write(orjson.dumps(out, option=orjson.OPT_SERIALIZE_NUMPY))


BUILTIN_ADAPTERS[StampedChatAdapter.name] = StampedChatAdapter
activate(events, api=StampedChatAdapter.name)
_collector = _Collector()


@events.init.add_listener
def _install(environment: Any, **_: Any) -> None:
    # Registered after activate(): llmload's own init listener has created llmload_request.
    environment.events.llmload_request.add_listener(_collector.on_request)
    environment.events.test_start.add_listener(_collector.on_test_start)
    environment.events.quitting.add_listener(_collector.write)


class StampedStreamUser(LLMUser):
    """llmload's closed-loop user; the adapter above does the extra bookkeeping."""
