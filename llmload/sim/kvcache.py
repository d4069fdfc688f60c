"""The KV cache as a pool of fixed-size blocks, paged or contiguous.

A sequence holds the KV of every token it has computed: ``ceil(tokens / block_size)``
blocks. :meth:`ensure` grows a sequence's allocation to cover ``tokens`` and answers
:data:`OK`, :data:`NO_SPACE` (fewer free blocks than needed: the scheduler preempts)
or :data:`FRAGMENTED` (enough blocks are free, but not where they are needed).

* :class:`PagedPool` (vLLM's PagedAttention): any free block will do, so a request
  fails to get blocks only when the pool is really full. A counter is enough.
* :class:`ContiguousPool` (``--kv-fragmentation``; how engines allocated KV before
  paging): a sequence's blocks must form one run. Growing extends the run in place
  when the next block is free, else moves it to the first free run that is long
  enough (first fit, the old run counting as free). When no run fits although the
  free blocks add up, the allocation fails: a "CUDA out of memory" while the cache
  is partly empty.

Blocks are bookkept on the sequence (``blocks``, and ``start`` for a contiguous run).
Pure data structures, no clock.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["FRAGMENTED", "NO_SPACE", "OK", "BlockHolder", "BlockPool", "ContiguousPool", "PagedPool", "make_pool"]

OK, NO_SPACE, FRAGMENTED = 0, 1, 2


class BlockHolder(Protocol):
    """What a pool needs of a sequence: its block count and (contiguous pools) run start."""

    blocks: int
    start: int


class BlockPool(Protocol):
    total: int
    block_size: int

    @property
    def used(self) -> int: ...

    def ensure(self, seq: BlockHolder, tokens: int) -> int: ...

    def release(self, seq: BlockHolder) -> None: ...

    def describe_failure(self, seq: BlockHolder, tokens: int) -> str: ...


class PagedPool:
    """Blocks anywhere: a free-block counter."""

    __slots__ = ("block_size", "free", "total")

    def __init__(self, total: int, block_size: int) -> None:
        self.total = total
        self.block_size = block_size
        self.free = total

    @property
    def used(self) -> int:
        return self.total - self.free

    def ensure(self, seq: BlockHolder, tokens: int) -> int:
        """Grow ``seq`` to cover ``tokens`` tokens: :data:`OK` or :data:`NO_SPACE` (nothing taken)."""
        need = -(-tokens // self.block_size) - seq.blocks
        if need <= 0:
            return OK
        if need > self.free:
            return NO_SPACE
        self.free -= need
        seq.blocks += need
        return OK

    def release(self, seq: BlockHolder) -> None:
        self.free += seq.blocks
        seq.blocks = 0

    def describe_failure(self, seq: BlockHolder, tokens: int) -> str:  # pragma: no cover - paged never fragments
        return "KV cache full"


class ContiguousPool:
    """Each sequence's blocks form one run; first-fit placement (see the module docstring)."""

    __slots__ = ("_map", "block_size", "free", "total")

    def __init__(self, total: int, block_size: int) -> None:
        self.total = total
        self.block_size = block_size
        self.free = total
        self._map = bytearray(total)  # 0 = free, 1 = used

    @property
    def used(self) -> int:
        return self.total - self.free

    def ensure(self, seq: BlockHolder, tokens: int) -> int:
        """Grow ``seq``'s run to cover ``tokens``: :data:`OK`, :data:`NO_SPACE` or :data:`FRAGMENTED`."""
        want = -(-tokens // self.block_size)
        have = seq.blocks
        if want <= have:
            return OK
        if want - have > self.free:
            return NO_SPACE
        m = self._map
        end, new_end = seq.start + have, seq.start + want
        if have and new_end <= self.total and m.find(1, end, new_end) < 0:
            m[end:new_end] = b"\x01" * (new_end - end)  # extend in place
        else:
            if have:
                m[seq.start : end] = bytes(have)  # the old run counts as free while looking
            at = m.find(bytes(want))
            if at < 0:
                if have:
                    m[seq.start : end] = b"\x01" * have
                return FRAGMENTED
            m[at : at + want] = b"\x01" * want
            seq.start = at
        self.free -= want - have
        seq.blocks = want
        return OK

    def release(self, seq: BlockHolder) -> None:
        if seq.blocks:
            self._map[seq.start : seq.start + seq.blocks] = bytes(seq.blocks)
            self.free += seq.blocks
        seq.blocks = 0

    def largest_free_run(self) -> int:
        best = run = 0
        for b in self._map:
            run = run + 1 if b == 0 else 0
            best = max(best, run)
        return best

    def describe_failure(self, seq: BlockHolder, tokens: int) -> str:
        want = -(-tokens // self.block_size)
        return (
            f"CUDA out of memory: cannot allocate {want} contiguous KV-cache blocks although {self.free} of "
            f"{self.total} are free (largest free run {self.largest_free_run()}; KV cache fragmented)"
        )


def make_pool(total: int, block_size: int, contiguous: bool) -> PagedPool | ContiguousPool:
    return ContiguousPool(total, block_size) if contiguous else PagedPool(total, block_size)
