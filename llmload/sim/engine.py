"""The engine: one timer that emits the due tokens of every live request.

Instead of one timer per stream per token, the engine keeps all live requests in a
heap ordered by the due time of their next token (from the latency model), sleeps
until the earliest one, and on waking hands every request whose token is due its
tokens in one call. A request that fell behind (a busy loop) gets all its overdue
tokens at once, then resumes the absolute schedule.

Contract with the HTTP layer, shared with the continuous-batching engine
(:class:`~llmload.sim.batching.BatchingEngine`):

* ``seq = engine.submit(sink, max_tokens, prompt_tokens, tokens)`` when a request arrives
  (``tokens``: the prompt's tokens, for the batching engine's prefix cache; the batching
  engine may refuse it with :class:`~llmload.sim.api.ApiError`; this one never does);
  ``seq.cached_tokens`` is the prompt tokens served from the prefix cache once it is known
  (``None`` here: no KV cache);
* the engine calls ``sink.emit(n, finished)`` with ``n >= 1`` new tokens, in order,
  ``max_tokens`` in total; ``finished`` is true on the call that completes the request;
  or (batching engine only) once ``sink.fail(message)`` when the request cannot go on;
* ``engine.cancel(seq)`` when the client went away (no more ``emit`` calls follow);
* ``engine.gauges()`` = (running, waiting, KV-cache usage) for ``/metrics``, and
  ``engine.stats`` (:class:`~llmload.sim.metrics.EngineStats`) its counters and histograms.

Here a request is "scheduled" on arrival and its prefill lasts the TTFT, so the queue
time is 0 and the KV usage 0. Histograms are fed per tick: the ITL of ``n`` tokens
emitted together is the time since the previous emission, then 0 for the rest.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from typing import Protocol

from llmload.sim.latency_model import LatencyModel
from llmload.sim.metrics import EngineStats

__all__ = ["FixedLatencyEngine", "Sequence", "TokenSink"]


class TokenSink(Protocol):
    """Receives the tokens of one request (an HTTP response writer)."""

    def emit(self, n: int, finished: bool) -> None: ...

    def fail(self, message: str) -> None: ...


class Sequence:
    """One request being generated: arrival time, tokens emitted so far."""

    __slots__ = ("cancelled", "emitted", "max_tokens", "prompt_tokens", "sink", "t0", "t_first", "t_last")

    #: No KV cache here, so no prefix cache: the usage carries no ``cached_tokens``.
    cached_tokens: int | None = None

    def __init__(self, sink: TokenSink, t0: float, max_tokens: int, prompt_tokens: int) -> None:
        self.sink = sink
        self.t0 = t0
        self.t_first = self.t_last = t0
        self.max_tokens = max_tokens
        self.prompt_tokens = prompt_tokens
        self.emitted = 0
        self.cancelled = False


class FixedLatencyEngine:
    """Emits tokens on the :class:`FixedLatencyModel` schedule, driven by one loop timer."""

    def __init__(
        self, model: LatencyModel, loop: asyncio.AbstractEventLoop, stats: EngineStats | None = None
    ) -> None:
        self._model = model
        self._loop = loop
        self.stats = stats if stats is not None else EngineStats()
        self._heap: list[tuple[float, int, Sequence]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self.running = 0  # requests submitted and neither finished nor cancelled

    def submit(self, sink: TokenSink, max_tokens: int, prompt_tokens: int = 0, tokens: object = ()) -> Sequence:
        """Start generating ``max_tokens`` (>= 1) tokens for ``sink``, arriving now (``tokens`` unused)."""
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

    def gauges(self) -> tuple[int, int, float]:
        """(running, waiting, KV-cache usage): nothing ever waits here."""
        return self.running, 0, 0.0

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
        heap, model, order, clock, stats = self._heap, self._model, self._order, self._loop.time, self.stats
        now = clock()
        try:
            while heap and heap[0][0] <= now:
                seq = heapq.heappop(heap)[2]
                if seq.cancelled:
                    continue
                n = max(1, model.tokens_due(seq.t0, now, seq.max_tokens) - seq.emitted)
                first = seq.emitted == 0
                seq.emitted += n
                finished = seq.emitted >= seq.max_tokens
                _record(stats, seq, n, first, finished, now)
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


def _record(stats: EngineStats, seq: Sequence, n: int, first: bool, finished: bool, now: float) -> None:
    stats.generation_tokens += n
    if first:
        seq.t_first = now
        stats.ttft.observe(now - seq.t0)
        stats.prompt_tokens += seq.prompt_tokens
    else:
        stats.itl.observe(now - seq.t_last)
    if n > 1:
        stats.itl.observe(0.0, n - 1)
    seq.t_last = now
    if finished:
        stats.request_done(seq.t0, seq.t0, seq.t_first, now)
