"""The continuous-batching engine in real time: one loop timer per engine step.

The :class:`~.scheduler.Scheduler` plans a step, the :class:`~.cost.CostModel` says how
long it takes, the engine arms one timer for the step's end and then, on waking,
hands every sequence that got a token that token, records metrics and plans the
next step at once. Requests arriving meanwhile wait for the next step (as in vLLM).
Steps follow each other back to back on an absolute schedule (step k+1 starts where
step k was due to end), so a late wake-up delays one step without shifting the rest;
after falling behind by more than ``MAX_LAG_S`` the schedule restarts from now.

Same contract with the HTTP layer as :class:`~.engine.FixedLatencyEngine`:
``submit(sink, max_tokens, prompt_tokens, tokens)`` (raises :class:`~.api.ApiError`: 400 when
prompt + max_tokens exceeds the model length or the KV cache, 429 when the admission
queue is full), then ``sink.emit(n, finished)`` as tokens come, or once
``sink.fail(message)`` when the KV cache cannot place the request (fragmentation);
``cancel(seq)`` when the client went away.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from llmload.sim.api import ApiError
from llmload.sim.cost import CostModel
from llmload.sim.engine import TokenSink
from llmload.sim.gpu import SimulatedGpu
from llmload.sim.metrics import EngineStats
from llmload.sim.params import EngineParams
from llmload.sim.prefix import block_hashes
from llmload.sim.scheduler import RUNNING, WAITING, Scheduler, Seq, Step

__all__ = ["MAX_LAG_S", "BatchingEngine"]

#: A step that would start more than this far in the past starts now instead.
MAX_LAG_S = 0.05


class BatchingEngine:
    """Scheduler + step cost + metrics, driven by the event loop's clock."""

    def __init__(
        self,
        params: EngineParams,
        loop: asyncio.AbstractEventLoop,
        stats: EngineStats | None = None,
        gpu: SimulatedGpu | None = None,
    ) -> None:
        self.params = params
        self.sched = Scheduler(params)
        self.cost = CostModel(params)
        self.stats = stats if stats is not None else EngineStats()
        self.gpu = gpu
        self._loop = loop
        self._max_len = params.max_request_tokens()
        self._timer: asyncio.TimerHandle | asyncio.Handle | None = None
        self._active = False  # a step is planned, running, or about to be planned
        self._step: Step | None = None
        self._step_end = -math.inf
        self.steps = 0
        self.running = 0  # requests submitted and not yet finished, failed or cancelled

    # -- HTTP side ---------------------------------------------------------------------------

    def submit(self, sink: TokenSink, max_tokens: int, prompt_tokens: int = 0, tokens: Sequence[Any] = ()) -> Seq:
        """Queue a request arriving now; raises :class:`ApiError` (400, 429) when it is refused.

        ``tokens`` (the prompt's tokens, see :mod:`llmload.sim.api`) are hashed into blocks
        for the prefix cache when it is on; without them the request cannot hit.
        """
        prompt = max(1, prompt_tokens)
        if prompt + max_tokens > self._max_len:
            raise ApiError(
                f"This model's maximum context length is {self._max_len} tokens. However, you requested "
                f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the completion). "
                "Please reduce the length of the messages or completion.",
                400,
            )
        limit = self.params.max_waiting
        if limit and len(self.sched.waiting) >= limit:
            raise ApiError(
                f"The server is overloaded: {limit} requests are already waiting to be scheduled; retry later.",
                429,
                "rate_limit_exceeded",
            )
        hashes = block_hashes(tokens, self.params.block_size) if self.params.prefix_caching else ()
        seq = Seq(prompt, max_tokens, sink, self._loop.time(), hashes)
        self.sched.add(seq)
        self.running += 1
        if not self._active:  # idle: start a step as soon as this loop iteration's arrivals are in
            self._active = True
            self._timer = self._loop.call_soon(self._start_step)
        return seq

    def cancel(self, seq: Seq) -> None:
        """Forget ``seq``: no more calls to its sink."""
        if seq.state in (WAITING, RUNNING):
            self.sched.cancel(seq)
            self.running -= 1
        seq.sink = None

    def close(self) -> None:
        """Stop the step timer and forget every request."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._step, self._active = None, None, False
        for seq in [*self.sched.waiting, *self.sched.running]:
            seq.sink = None
        self.sched.waiting.clear()
        self.sched.running.clear()
        self.running = 0

    def gauges(self) -> tuple[int, int, float]:
        """(running, waiting, KV-cache usage 0..1) right now."""
        s = self.sched
        return len(s.running), len(s.waiting), s.kv_usage

    # -- steps -------------------------------------------------------------------------------

    def _start_step(self) -> None:
        """Plan the next step and arm its timer, or go idle when nothing is left to run."""
        self._timer = None
        for _ in range(1000):
            now = self._loop.time()
            start = self._step_end if now - self._step_end < MAX_LAG_S else now
            step = self.sched.schedule()
            self._account_plan(step, start)  # failure replies may bring new requests in (pipelining)
            if step.items:
                break
            if not self.sched.waiting:
                self._step, self._step_end, self._active = None, -math.inf, False
                return
        else:  # pragma: no cover - the scheduler always admits into an empty batch
            raise RuntimeError("llmload sim: requests wait but none can be scheduled")
        host, gpu, moved = self.cost.step(step.decode_seqs, step.context_tokens, step.prefill_tokens)
        if self.gpu is not None:
            self.gpu.step(start, gpu, moved)
        self.stats.iteration_tokens.observe(step.tokens)
        self.steps += 1
        self._step = step
        self._step_end = start + host + gpu
        self._timer = self._loop.call_at(self._step_end, self._finish_step)

    def _account_plan(self, step: Step, start: float) -> None:
        stats, sched = self.stats, self.sched
        stats.preemptions = sched.preemptions
        stats.prefix_cache_queries = sched.prefix_queries
        stats.prefix_cache_hits = sched.prefix_hits
        for seq in step.admitted:
            seq.t_scheduled = start
        for seq in step.failed:
            stats.allocation_failures += 1
            self.running -= 1
            sink, seq.sink = seq.sink, None
            if sink is not None:
                try:
                    sink.fail(seq.error)
                except Exception as e:  # a failing writer must not stop the engine
                    self._sink_failed(e)

    def _finish_step(self) -> None:
        self._timer = None
        step, self._step = self._step, None
        if step is None:  # pragma: no cover - closed meanwhile
            return
        now = self._loop.time()
        stats = self.stats
        try:
            out = self.sched.complete(step)
            stats.generation_tokens += len(out)
            itl = stats.itl
            for seq, finished in out:
                if seq.t_first is None:
                    seq.t_first = now
                    stats.ttft.observe(now - seq.t_arrival)
                    stats.prompt_tokens += seq.prompt
                else:
                    itl.observe(now - seq.t_last)  # type: ignore[operator]
                seq.t_last = now
                if finished:
                    self.running -= 1
                    stats.request_done(seq.t_arrival, seq.t_scheduled, seq.t_first, now)  # type: ignore[arg-type]
                sink = seq.sink
                if sink is not None:
                    if finished:
                        seq.sink = None
                    try:
                        sink.emit(1, finished)
                    except Exception as e:  # a failing writer must not stop the other streams
                        self._sink_failed(e)
        finally:
            self._start_step()

    def idle(self) -> bool:
        """No step planned or running."""
        return not self._active

    def _sink_failed(self, exc: Exception) -> None:
        self._loop.call_exception_handler({"message": "llmload sim: a response writer failed", "exception": exc})
