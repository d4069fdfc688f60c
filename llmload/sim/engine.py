"""The engine: one timer that emits the due tokens of every live request.

Instead of one timer per stream per token, the engine keeps all live requests in a
heap ordered by the due time of their next token (from the latency model), sleeps
until the earliest one, and on waking hands every request whose token is due its
tokens in one call. A request that fell behind (a busy loop) gets all its overdue
tokens at once, then resumes the absolute schedule.

Contract with the HTTP layer, kept by the continuous-batching engine that will
replace this one:

* ``seq = engine.submit(sink, max_tokens, prompt_tokens)`` when a request arrives;
* the engine calls ``sink.emit(n, finished)`` with ``n >= 1`` new tokens, in order,
  ``max_tokens`` in total; ``finished`` is true on the call that completes the request;
* ``engine.cancel(seq)`` when the client went away (no more ``emit`` calls follow).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from typing import Protocol

from llmload.sim.model import FixedLatencyModel

__all__ = ["FixedLatencyEngine", "Sequence", "TokenSink"]


class TokenSink(Protocol):
    """Receives the tokens of one request (an HTTP response writer)."""

    def emit(self, n: int, finished: bool) -> None: ...


class Sequence:
    """One request being generated: arrival time, tokens emitted so far."""

    __slots__ = ("cancelled", "emitted", "max_tokens", "prompt_tokens", "sink", "t0")

    def __init__(self, sink: TokenSink, t0: float, max_tokens: int, prompt_tokens: int) -> None:
        self.sink = sink
        self.t0 = t0
        self.max_tokens = max_tokens
        self.prompt_tokens = prompt_tokens
        self.emitted = 0
        self.cancelled = False


class FixedLatencyEngine:
    """Emits tokens on the :class:`FixedLatencyModel` schedule, driven by one loop timer."""

    def __init__(self, model: FixedLatencyModel, loop: asyncio.AbstractEventLoop) -> None:
        self._model = model
        self._loop = loop
        self._heap: list[tuple[float, int, Sequence]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self.running = 0  # requests submitted and neither finished nor cancelled

    def submit(self, sink: TokenSink, max_tokens: int, prompt_tokens: int = 0) -> Sequence:
        """Start generating ``max_tokens`` (>= 1) tokens for ``sink``, arriving now."""
        seq = Sequence(sink, self._loop.time(), max_tokens, prompt_tokens)
        self.running += 1
        due = self._model.due(seq.t0, 0)
        heapq.heappush(self._heap, (due, next(self._order), seq))
        if due < self._timer_at:
            self._arm(due)
        return seq

    def cancel(self, seq: Sequence) -> None:
        """Stop generating for ``seq``; its heap entry is dropped when it comes due."""
        if not seq.cancelled and seq.emitted < seq.max_tokens:
            self.running -= 1
        seq.cancelled = True

    def close(self) -> None:
        """Cancel the timer and forget every request (no more ``emit`` calls)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
        for _, _, seq in self._heap:
            seq.cancelled = True
        self._heap.clear()
        self.running = 0

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self._loop.call_at(when, self._tick)

    def _tick(self) -> None:
        self._timer, self._timer_at = None, math.inf
        heap, model, order, clock = self._heap, self._model, self._order, self._loop.time
        now = clock()
        try:
            while heap and heap[0][0] <= now:
                seq = heapq.heappop(heap)[2]
                if seq.cancelled:
                    continue
                n = max(1, model.tokens_due(seq.t0, now, seq.max_tokens) - seq.emitted)
                seq.emitted += n
                finished = seq.emitted >= seq.max_tokens
                if finished:
                    self.running -= 1
                else:
                    heapq.heappush(heap, (model.due(seq.t0, seq.emitted), next(order), seq))
                seq.sink.emit(n, finished)
                if heap and heap[0][0] > now:
                    now = clock()  # writing took time: pick up tokens that came due meanwhile
        finally:  # a failing sink must not stop the other streams
            if heap:
                self._arm(heap[0][0])
