"""Automatic prefix caching, vLLM-style: full KV blocks named by a hash of the prompt up to them.

**Block hashes.** A prompt is a sequence of tokens (the simulator's tokens are the words of
the prompt, see :mod:`llmload.sim.api`). Block ``j`` covers tokens ``j*B .. (j+1)*B - 1``
(``B`` = ``block_size``); only full blocks are hashed, and each hash chains its parent::

    h[0] = hash((None, tokens[0:B]))      h[j] = hash((h[j-1], tokens[j*B:(j+1)*B]))

so equal hashes mean equal prompts up to the end of that block, as in vLLM's hash-based
design. Python's ``hash`` of a tuple (SipHash, 64 bits) is enough for a simulator: the cache
lives in one process, and a collision needs about 2^32 distinct blocks to become likely.

**The pool.** :class:`PrefixCachingPool` is a paged pool (any free block will do) whose
blocks keep their content after the sequence holding them is freed:

* ``free``: blocks that hold nothing;
* the *cached* blocks: full prompt blocks with a hash, either **in use** (a reference
  count of the sequences holding them) or **evictable** (count 0, kept in LRU order);
* a sequence's other blocks (its last, partial prompt block, its output tokens, and a
  block whose hash another sequence had already registered) are private to it.

Allocation takes free blocks first, then evicts the least recently freed evictable
block (its hash is forgotten). A sequence freed returns its private blocks to ``free``
and its hashed blocks, last block first, to the evictable end of the LRU queue (so the
tail of a prompt is evicted before its head, as vLLM does). ``used`` counts blocks in use,
not evictable ones, like vLLM's ``kv_cache_usage_perc``.

**Hits.** When the scheduler admits a waiting sequence (new or preempted), it looks up
the longest run of its leading block hashes that are cached (in use or evictable), at
most ``(tokens - 1) // B`` blocks: one token is always computed, to produce the logits
(vLLM's ``max_cache_hit_length = num_tokens - 1``). :meth:`PrefixCachingPool.admit`
takes those blocks (their KV is reused, their prefill skipped) and allocates the rest,
atomically: when the rest does not fit, nothing is taken. Blocks computed by a step are
registered by :meth:`PrefixCachingPool.commit` once the step is over.

What is not modelled: output tokens are never cached (vLLM also caches full blocks of
generated tokens, so a follow-up turn can hit the previous reply; here it hits the
previous turn's prompt only), and there is no CPU offload tier. Pure data structures,
no clock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

from llmload.sim.kvcache import NO_SPACE, OK

__all__ = ["CachingHolder", "PrefixCachingPool", "block_hashes"]


def block_hashes(tokens: Sequence[Any], block_size: int) -> tuple[int, ...]:
    """The chained hashes of every full block of ``tokens`` (see the module docstring)."""
    out: list[int] = []
    parent: int | None = None
    for i in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash((parent, tuple(tokens[i : i + block_size])))
        out.append(parent)
    return tuple(out)


class CachingHolder(Protocol):
    """What the caching pool needs of a sequence (:class:`~llmload.sim.scheduler.Seq` has it)."""

    blocks: int  # blocks covered, shared and private
    hashes: tuple[int, ...]  # its prompt's full-block hashes
    held: list[int]  # hashes of the cached blocks it holds a reference to, in prompt order
    committed: int  # blocks of the prompt already registered or found cached


class PrefixCachingPool:
    """A paged KV pool with a prefix cache (see the module docstring)."""

    __slots__ = ("_evictable", "_refs", "block_size", "evictions", "free", "total")

    def __init__(self, total: int, block_size: int) -> None:
        self.total = total
        self.block_size = block_size
        self.free = total
        self._refs: dict[int, int] = {}  # hash -> sequences holding the block (> 0)
        self._evictable: OrderedDict[int, None] = OrderedDict()  # hash -> None, least recently freed first
        self.evictions = 0

    @property
    def used(self) -> int:
        """Blocks held by some sequence (evictable cached blocks count as free, as in vLLM)."""
        return self.total - self.free - len(self._evictable)

    @property
    def cached_blocks(self) -> int:
        """Blocks whose content is cached: in use or evictable."""
        return len(self._refs) + len(self._evictable)

    def is_cached(self, h: int) -> bool:
        return h in self._refs or h in self._evictable

    def match(self, hashes: Sequence[int], max_blocks: int) -> int:
        """How many leading ``hashes`` (at most ``max_blocks``) are cached."""
        refs, evictable = self._refs, self._evictable
        n = 0
        for h in hashes[: max(0, max_blocks)]:
            if h not in refs and h not in evictable:
                break
            n += 1
        return n

    def admit(self, seq: CachingHolder, hit: int, tokens: int) -> int:
        """Take ``seq``'s first ``hit`` cached blocks and grow it to ``tokens``: :data:`OK` or
        :data:`NO_SPACE` (nothing taken). ``seq`` must hold no blocks; ``hit`` comes from :meth:`match`."""
        assert seq.blocks == 0 and not seq.held
        hits = seq.hashes[:hit]
        need = max(0, -(-tokens // self.block_size) - hit)
        reclaimed = sum(1 for h in hits if h in self._evictable)  # evictable blocks that stop being evictable
        if need > self.free + len(self._evictable) - reclaimed:
            return NO_SPACE
        refs, evictable = self._refs, self._evictable
        for h in hits:
            if h in evictable:
                del evictable[h]
                refs[h] = 1
            else:
                refs[h] += 1
        seq.held = list(hits)
        seq.committed = hit
        seq.blocks = hit
        self._take(need)
        seq.blocks += need
        return OK

    def ensure(self, seq: CachingHolder, tokens: int) -> int:
        """Grow ``seq`` to cover ``tokens`` tokens: :data:`OK` or :data:`NO_SPACE` (nothing taken)."""
        need = -(-tokens // self.block_size) - seq.blocks
        if need <= 0:
            return OK
        if need > self.free + len(self._evictable):
            return NO_SPACE
        self._take(need)
        seq.blocks += need
        return OK

    def _take(self, n: int) -> None:
        """Remove ``n`` blocks from the free ones, evicting cached blocks LRU-first when short."""
        short = n - self.free
        if short > 0:
            evictable = self._evictable
            for _ in range(short):
                evictable.popitem(last=False)
            self.free += short
            self.evictions += short
        self.free -= n

    def commit(self, seq: CachingHolder, computed: int) -> None:
        """Register the full prompt blocks ``seq`` has computed (``computed`` tokens) in the cache.

        A block whose hash is already cached (another sequence computed the same prefix at
        the same time) stays private to ``seq``; the cache keeps the first copy.
        """
        full = min(computed // self.block_size, len(seq.hashes))
        if full <= seq.committed:
            return
        refs, evictable, held = self._refs, self._evictable, seq.held
        for h in seq.hashes[seq.committed : full]:
            if h not in refs and h not in evictable:
                refs[h] = 1
                held.append(h)
        seq.committed = full

    def release(self, seq: CachingHolder) -> None:
        """Free ``seq``'s blocks: private ones to ``free``, cached ones towards eviction (tail first)."""
        held = seq.held
        if held:
            refs, evictable = self._refs, self._evictable
            for h in reversed(held):
                n = refs[h] - 1
                if n:
                    refs[h] = n
                else:
                    del refs[h]
                    evictable[h] = None
            seq.held = []
        self.free += seq.blocks - len(held)
        seq.blocks = 0
        seq.committed = 0

    def describe_failure(self, seq: CachingHolder, tokens: int) -> str:  # pragma: no cover - paged never fragments
        return "KV cache full"
