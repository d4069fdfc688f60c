"""The scheduler of a continuous-batching engine: which tokens of which requests run in the next step.

A :class:`Seq` feeds ``need = prompt + generated - computed`` tokens before the engine
samples its next output token: the whole prompt first (prefill), then one token per
step (decode). After a preemption ``computed`` drops to 0 and the prompt plus the
tokens generated so far are computed again (recompute, as vLLM does).

:meth:`Scheduler.schedule` plans one step (a :class:`Step`); :meth:`Scheduler.complete`
applies it when the step's time is over and says which sequences got a token.

Continuous batching, chunked prefill on (vLLM V1): the running sequences in admission
order each get ``min(need, budget left)`` tokens (a decode 1, a prefill a chunk), then
waiting requests are admitted FIFO while fewer than ``max_num_seqs`` run and budget is
left, none if a preemption happened in this step. Chunked prefill off (vLLM V0):
when waiting requests can be admitted, the step prefills whole prompts only (up to
``max_batched_tokens`` in all, a longer prompt alone) and every decode waits for it;
otherwise all running sequences decode. Static batching: a batch of up to
``max_num_seqs`` requests, each reserving blocks for its whole prompt + max_tokens, is
prefilled in one step and then decoded, padded to its full size, until its last
request finishes; only then is the next batch formed.

KV blocks (:mod:`.kvcache`) are allocated for the tokens a step computes. When the
pool has too few free blocks, the running sequence admitted last is preempted (its
blocks freed, put back at the head of the queue) until the allocation succeeds or the
sequence itself was the one preempted. A fragmented (contiguous) pool can fail
although blocks are free: that request fails (``Step.failed``).

Prefix caching (``prefix_caching``, on by default as in vLLM V1; :mod:`.prefix`): a waiting
request is admitted with the longest cached run of its prompt's full blocks already
computed (``Seq.hashes`` from :func:`~llmload.sim.prefix.block_hashes`), so its prefill
covers only the rest; full prompt blocks a step computed are registered when it completes.
At its first admission a request's hit is recorded: ``Seq.cached_tokens`` (reported in
``usage.prompt_tokens_details.cached_tokens``) and the counters ``prefix_queries`` (its
prompt tokens) and ``prefix_hits`` (its cached tokens), vLLM's
``vllm:prefix_cache_queries``/``hits``. A preempted request looks the cache up again when
readmitted (usually finding its own blocks) but is not counted again; vLLM counts every
lookup, so under KV pressure its counters can count a request twice.

Pure code: no clock, no I/O; the caller keeps the times.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from llmload.sim.kvcache import FRAGMENTED, NO_SPACE, OK, make_pool
from llmload.sim.params import EngineParams
from llmload.sim.prefix import PrefixCachingPool

__all__ = ["CANCELLED", "DONE", "FAILED", "RUNNING", "WAITING", "Scheduler", "Seq", "Step"]

WAITING, RUNNING, DONE, CANCELLED, FAILED = "waiting", "running", "done", "cancelled", "failed"


class Seq:
    """One request inside the engine. Times are the caller's clock (``None`` until they happen)."""

    __slots__ = (
        "blocks", "cached_tokens", "committed", "computed", "error", "generated", "hashes", "held", "max_tokens",
        "prompt", "sink", "start", "state", "t_arrival", "t_first", "t_last", "t_scheduled",
    )  # fmt: skip

    def __init__(
        self, prompt: int, max_tokens: int, sink: Any = None, t_arrival: float = 0.0, hashes: tuple[int, ...] = ()
    ) -> None:
        self.prompt = max(1, prompt)
        self.max_tokens = max_tokens
        self.sink = sink
        self.generated = 0  # output tokens sampled (and sent)
        self.computed = 0  # tokens whose KV is in the cache
        self.blocks = 0
        self.start = 0  # first block of a contiguous run
        self.hashes = hashes  # full prompt blocks' hashes (prefix caching)
        self.held: list[int] = []  # hashes of the cached blocks it holds
        self.committed = 0  # prompt blocks registered in (or found in) the cache
        self.cached_tokens: int | None = None  # prompt tokens found cached at its first admission
        self.state = WAITING
        self.error = ""
        self.t_arrival = t_arrival
        self.t_scheduled: float | None = None
        self.t_first: float | None = None
        self.t_last: float | None = None

    @property
    def need(self) -> int:
        """Tokens to compute before the next output token can be sampled."""
        return self.prompt + self.generated - self.computed


class Step:
    """One planned step: ``items`` (sequence, tokens it computes) and the mix that sets its cost."""

    __slots__ = ("admitted", "context_tokens", "decode_seqs", "failed", "items", "prefill_tokens", "preempted")

    def __init__(self) -> None:
        self.items: list[tuple[Seq, int]] = []
        self.decode_seqs = 0
        self.context_tokens = 0
        self.prefill_tokens = 0
        self.preempted = 0
        self.admitted: list[Seq] = []  # scheduled for the first time (their queue time ends)
        self.failed: list[Seq] = []  # KV allocation failed (fragmentation); already removed

    @property
    def tokens(self) -> int:
        return self.decode_seqs + self.prefill_tokens

    def _add(self, seq: Seq, n: int) -> None:
        self.items.append((seq, n))
        if seq.generated and seq.computed + 1 == seq.prompt + seq.generated:  # decode: feeds its last token
            self.decode_seqs += 1
            self.context_tokens += seq.computed + 1
        else:
            self.prefill_tokens += n


class Scheduler:
    """Waiting queue, running batch and KV pool of one engine (see the module docstring)."""

    def __init__(self, p: EngineParams) -> None:
        self.p = p
        self.cache = PrefixCachingPool(p.num_kv_blocks, p.block_size) if p.prefix_caching else None
        self.pool = self.cache or make_pool(p.num_kv_blocks, p.block_size, p.kv_fragmentation)
        self.waiting: deque[Seq] = deque()
        self.running: list[Seq] = []
        self.preemptions = 0
        self.failures = 0
        self.prefix_queries = 0  # prompt tokens of requests admitted for the first time
        self.prefix_hits = 0  # of which found in the prefix cache

    # -- queue ----------------------------------------------------------------------------

    def add(self, seq: Seq) -> None:
        seq.state = WAITING
        self.waiting.append(seq)

    def cancel(self, seq: Seq) -> None:
        """Forget ``seq`` (the client went away); its blocks are freed at once, or with its static batch."""
        if seq.state == WAITING:
            self.waiting.remove(seq)
            self.pool.release(seq)
        elif seq.state == RUNNING:
            if self.p.batching == "static":
                seq.state = CANCELLED
                self._release_static_batch_if_done()
                return
            self.running.remove(seq)
            self.pool.release(seq)
        seq.state = CANCELLED

    @property
    def kv_usage(self) -> float:
        return self.pool.used / self.pool.total

    # -- planning -------------------------------------------------------------------------

    def schedule(self) -> Step:
        """Plan the next step (``items`` empty when there is nothing to run)."""
        step = Step()
        if self.p.batching == "static":
            self._schedule_static(step)
        elif self.p.chunked_prefill:
            self._schedule_running(step, self.p.max_batched_tokens)
            if not step.preempted:
                self._admit(step, self.p.max_batched_tokens - step.tokens, chunked=True)
        else:
            if self.waiting and len(self.running) < self.p.max_num_seqs:
                self._admit(step, self.p.max_batched_tokens, chunked=False)
            if not step.items:
                self._schedule_running(step, 1 << 62)
        return step

    def _schedule_running(self, step: Step, budget: int) -> None:
        running, i = self.running, 0
        while i < len(running) and budget > 0:
            seq = running[i]
            n = min(seq.prompt + seq.generated - seq.computed, budget)
            status = self._reserve(seq, seq.computed + n, step)
            if status == OK:
                step._add(seq, n)
                budget -= n
                i += 1
            elif status == NO_SPACE:  # seq itself was preempted (it was the last one)
                break
            # FRAGMENTED: seq was removed from running; the same index is the next sequence

    def _reserve(self, seq: Seq, tokens: int, step: Step) -> int:
        """Blocks for ``tokens`` of running ``seq``, preempting from the tail of the batch as needed."""
        pool, running = self.pool, self.running
        while True:
            status = pool.ensure(seq, tokens)
            if status == OK:
                return OK
            if status == FRAGMENTED:
                running.remove(seq)
                self._fail(seq, tokens, step)
                return FRAGMENTED
            victim = running.pop()
            self._preempt(victim, step)
            if victim is seq:
                return NO_SPACE

    def _preempt(self, seq: Seq, step: Step) -> None:
        self.pool.release(seq)
        seq.computed = 0
        seq.state = WAITING
        self.waiting.appendleft(seq)
        self.preemptions += 1
        step.preempted += 1

    def _fail(self, seq: Seq, tokens: int, step: Step) -> None:
        seq.error = self.pool.describe_failure(seq, tokens)
        self.pool.release(seq)
        seq.state = FAILED
        self.failures += 1
        step.failed.append(seq)

    def _admit(self, step: Step, budget: int, chunked: bool) -> None:
        """Admit waiting requests FIFO; a request that does not fit blocks those behind it."""
        waiting, running, pool, cache, limit = self.waiting, self.running, self.pool, self.cache, self.p.max_num_seqs
        while waiting and len(running) < limit and budget > 0:
            seq = waiting[0]  # holds no blocks: computed == 0
            total = seq.prompt + seq.generated
            hit = self._hit(seq, total)
            start = hit * self.p.block_size
            need = total - start
            if chunked:
                n = min(need, budget)
            elif step.items and need > budget:
                break
            else:
                n = need
            status = pool.ensure(seq, n) if cache is None else cache.admit(seq, hit, start + n)
            if status == NO_SPACE:
                break
            waiting.popleft()
            if status == FRAGMENTED:
                self._fail(seq, n, step)
                continue
            self._reuse(seq, start)
            self._run(seq, step)
            step._add(seq, n)
            budget -= n

    def _hit(self, seq: Seq, tokens: int) -> int:
        """Leading blocks of ``seq``'s prompt found cached; at least one of ``tokens`` is left to compute."""
        if self.cache is None or not seq.hashes:
            return 0
        return self.cache.match(seq.hashes, (tokens - 1) // self.p.block_size)

    def _reuse(self, seq: Seq, cached: int) -> None:
        """``seq`` starts with ``cached`` tokens computed; its first admission is counted."""
        seq.computed = cached
        if seq.cached_tokens is None:
            seq.cached_tokens = cached
            if self.cache is not None:
                self.prefix_queries += seq.prompt
                self.prefix_hits += cached

    def _run(self, seq: Seq, step: Step) -> None:
        seq.state = RUNNING
        self.running.append(seq)
        if seq.t_scheduled is None:
            step.admitted.append(seq)

    def _schedule_static(self, step: Step) -> None:
        running = self.running
        if not running:  # form the next batch: reserve every request's full length up front
            waiting, pool, cache = self.waiting, self.pool, self.cache
            while waiting and len(running) < self.p.max_num_seqs:
                seq = waiting[0]
                tokens = seq.prompt + seq.max_tokens
                hit = self._hit(seq, seq.prompt)
                status = pool.ensure(seq, tokens) if cache is None else cache.admit(seq, hit, tokens)
                if status == NO_SPACE:
                    break
                waiting.popleft()
                if status == FRAGMENTED:
                    self._fail(seq, tokens, step)
                    continue
                self._reuse(seq, hit * self.p.block_size)
                self._run(seq, step)
                step._add(seq, seq.prompt - seq.computed)
            return
        for seq in running:  # decode, padded: finished sequences still take their slot and KV
            if seq.state == RUNNING:
                step.items.append((seq, 1))
            step.decode_seqs += 1
            step.context_tokens += seq.computed + 1

    # -- completion -----------------------------------------------------------------------

    def complete(self, step: Step) -> list[tuple[Seq, bool]]:
        """Apply a finished step: ``[(seq, finished)]`` for every sequence that got one output token."""
        out: list[tuple[Seq, bool]] = []
        finished = False
        cache = self.cache
        for seq, n in step.items:
            if seq.state != RUNNING:  # cancelled, failed or preempted meanwhile
                continue
            seq.computed += n
            if cache is not None and seq.committed < len(seq.hashes):
                cache.commit(seq, seq.computed)
            if seq.computed == seq.prompt + seq.generated:
                seq.generated += 1
                done = seq.generated >= seq.max_tokens
                out.append((seq, done))
                if done:
                    seq.state = DONE
                    finished = True
        if finished:
            if self.p.batching == "static":
                self._release_static_batch_if_done()
            else:
                keep = []
                for seq in self.running:
                    if seq.state == RUNNING:
                        keep.append(seq)
                    else:
                        self.pool.release(seq)
                self.running = keep
        return out

    def _release_static_batch_if_done(self) -> None:
        if all(seq.state != RUNNING for seq in self.running):
            for seq in self.running:
                self.pool.release(seq)
            self.running = []
