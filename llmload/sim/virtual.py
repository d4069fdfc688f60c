"""The engine model on a virtual clock: replay an arrival sequence without waiting.

:class:`VirtualLoop` implements the few event-loop methods the engines use
(``time``, ``call_soon``, ``call_at``, ``call_exception_handler``) over a clock that
jumps from one timer to the next. :func:`replay` feeds a list of :class:`Arrival` to a
:class:`~llmload.sim.batching.BatchingEngine` on such a loop and returns every
request's token times: the same numbers the real-time server produces for the same
arrivals (minus the event loop's own lateness), in microseconds of CPU instead of
seconds of waiting. Used by the tests and to calibrate the presets
(``docs/simulator.md``); deterministic.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from llmload.sim.api import ApiError
from llmload.sim.batching import BatchingEngine
from llmload.sim.params import EngineParams

__all__ = ["Arrival", "Outcome", "VirtualHandle", "VirtualLoop", "replay"]


class VirtualHandle:
    """A scheduled callback (what ``call_at``/``call_soon`` return); :meth:`cancel` drops it."""

    __slots__ = ("_args", "_callback", "cancelled")

    def __init__(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self._callback, self._args = callback, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualLoop:
    """Callbacks ordered by (time, order of scheduling); time advances only between them."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._queue: list[tuple[float, int, VirtualHandle]] = []
        self._order = itertools.count()
        self.errors: list[dict[str, object]] = []  # asyncio exception-handler contexts (message, exception, ...)

    def time(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> VirtualHandle:
        h = VirtualHandle(callback, args)
        heapq.heappush(self._queue, (max(when, self._now), next(self._order), h))
        return h

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> VirtualHandle:
        return self.call_at(self._now + delay, callback, *args)

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> VirtualHandle:
        return self.call_at(self._now, callback, *args)

    def call_exception_handler(self, context: dict[str, object]) -> None:
        self.errors.append(context)

    def run_until(self, t: float) -> None:
        """Run every callback due at or before ``t``, then set the clock to ``t``."""
        q = self._queue
        while q and q[0][0] <= t:
            when, _, h = heapq.heappop(q)
            self._now = when
            if not h.cancelled:
                h._callback(*h._args)
        self._now = max(self._now, t)

    def run(self, limit: float = 1e9) -> None:
        """Run until nothing is scheduled (or the clock passes ``limit``)."""
        q = self._queue
        while q and q[0][0] <= limit:
            self.run_until(q[0][0])


@dataclass(frozen=True, slots=True)
class Arrival:
    """A request arriving at ``t`` (seconds) with ``prompt`` tokens, asking for ``max_tokens``.

    ``tokens`` (optional) are the prompt's tokens, for the prefix cache; without them the
    request never hits it.
    """

    t: float
    prompt: int
    max_tokens: int
    tag: str = ""
    tokens: tuple[Any, ...] = ()


@dataclass
class Outcome:
    """What happened to one request: token times, or the error that ended it."""

    arrival: Arrival
    token_times: list[float] = field(default_factory=list)
    error: str = ""
    status: int = 200
    seq: Any = None  # the engine's handle (``seq.cached_tokens``: the prefix-cache hit)

    @property
    def ttft(self) -> float:
        return self.token_times[0] - self.arrival.t

    @property
    def itls(self) -> list[float]:
        t = self.token_times
        return [b - a for a, b in itertools.pairwise(t)]

    @property
    def tpot(self) -> float:
        t = self.token_times
        return (t[-1] - t[0]) / (len(t) - 1) if len(t) > 1 else 0.0


class _RecordingSink:
    __slots__ = ("finished", "loop", "outcome")

    def __init__(self, loop: VirtualLoop, outcome: Outcome) -> None:
        self.loop, self.outcome, self.finished = loop, outcome, False

    def emit(self, n: int, finished: bool) -> None:
        self.outcome.token_times.extend([self.loop.time()] * n)
        self.finished = finished

    def fail(self, message: str) -> None:
        self.outcome.error = message
        self.outcome.status = 500 if not self.outcome.token_times else 200


def replay(
    params: EngineParams,
    arrivals: Iterable[Arrival],
    *,
    until: float = 1e9,
    on_tick: Callable[[BatchingEngine, float], None] | None = None,
    tick_s: float = 0.0,
) -> tuple[list[Outcome], BatchingEngine]:
    """Run ``arrivals`` through a fresh engine on a virtual clock; returns (outcomes, engine).

    ``on_tick(engine, t)`` is called every ``tick_s`` seconds of virtual time (a scrape).
    """
    loop = VirtualLoop()
    engine = BatchingEngine(params, loop)  # type: ignore[arg-type]
    outcomes: list[Outcome] = []
    for a in sorted(arrivals, key=lambda a: a.t):
        out = Outcome(a)
        outcomes.append(out)
        loop.call_at(a.t, _submit, engine, loop, out)
    if on_tick is not None and tick_s > 0:

        def tick() -> None:
            on_tick(engine, loop.time())
            if loop._queue and loop.time() + tick_s <= until:
                loop.call_later(tick_s, tick)

        loop.call_at(tick_s, tick)
    loop.run(until)
    return outcomes, engine


def _submit(engine: BatchingEngine, loop: VirtualLoop, out: Outcome) -> None:
    try:
        a = out.arrival
        out.seq = engine.submit(_RecordingSink(loop, out), a.max_tokens, a.prompt, a.tokens)
    except ApiError as e:
        out.error, out.status = e.message, e.status
