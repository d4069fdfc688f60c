"""The prefix-caching KV pool: chained block hashes, shared blocks, LRU eviction, atomic admission."""

from __future__ import annotations

import random

from llmload.sim.kvcache import NO_SPACE, OK
from llmload.sim.prefix import PrefixCachingPool, block_hashes


class S:
    """A sequence as the pool sees it."""

    def __init__(self, tokens: list[str] | None = None, block_size: int = 4) -> None:
        self.blocks = 0
        self.hashes = block_hashes(tokens or [], block_size)
        self.held: list[int] = []
        self.committed = 0


def words(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_block_hashes_cover_full_blocks_only_and_chain_the_prefix():
    a = words("a", 10)
    assert len(block_hashes(a, 4)) == 2  # tokens 8 and 9 fill no block
    assert block_hashes(a[:8], 4) == block_hashes(a, 4)
    b = a[:4] + words("b", 6)
    assert block_hashes(b, 4)[0] == block_hashes(a, 4)[0] and block_hashes(b, 4)[1] != block_hashes(a, 4)[1]
    # the same block after a different prefix is a different block
    c = words("x", 4) + a[4:8]
    assert block_hashes(c, 4)[1] != block_hashes(a, 4)[1]
    assert block_hashes([], 4) == () and block_hashes(a[:3], 4) == ()


def test_a_second_sequence_shares_the_cached_blocks_instead_of_taking_new_ones():
    pool = PrefixCachingPool(total=10, block_size=4)
    prompt = words("p", 12)  # 3 full blocks
    a = S(prompt)
    assert pool.admit(a, pool.match(a.hashes, 2), 13) == OK  # 12 prompt tokens + 1 output: 4 blocks
    assert pool.used == 4 and a.held == []
    pool.commit(a, 12)
    assert a.held == list(a.hashes) and pool.cached_blocks == 3
    b = S(prompt)
    hit = pool.match(b.hashes, (12 - 1) // 4)  # one token must be computed: at most 2 of 3 blocks
    assert hit == 2
    assert pool.admit(b, hit, 13) == OK
    assert b.blocks == 4 and b.held == list(b.hashes[:2])
    assert pool.used == 4 + 2  # b took 2 new blocks, shared 2
    pool.release(a)
    assert pool.used == 4 and pool.free == 10 - 4 - 1  # a's third cached block is evictable, its private one free
    pool.release(b)
    assert pool.used == 0 and pool.free == 7 and pool.cached_blocks == 3


def test_freed_cached_blocks_are_evicted_least_recently_freed_first_tail_before_head():
    pool = PrefixCachingPool(total=4, block_size=4)
    a, b = S(words("a", 8)), S(words("b", 8))
    for s in (a, b):
        assert pool.admit(s, 0, 8) == OK
        pool.commit(s, 8)
        pool.release(s)
    assert pool.free == 0 and pool.used == 0 and pool.cached_blocks == 4  # all four kept, all evictable
    big = S()
    assert pool.ensure(big, 4) == OK  # one block: evicts a's tail (freed first)
    assert pool.evictions == 1
    assert pool.match(a.hashes, 2) == 1 and pool.match(b.hashes, 2) == 2
    assert pool.ensure(big, 8) == OK  # then a's head
    assert pool.match(a.hashes, 2) == 0 and pool.match(b.hashes, 2) == 2


def test_a_hit_refreshes_a_block_so_it_is_evicted_later():
    pool = PrefixCachingPool(total=4, block_size=4)
    a, b = S(words("a", 4)), S(words("b", 4))
    for s in (a, b):
        pool.admit(s, 0, 4)
        pool.commit(s, 4)
        pool.release(s)
    again = S(words("a", 4) + ["q"])
    assert pool.admit(again, pool.match(again.hashes, 1), 5) == OK  # hits a's block, takes one more
    pool.release(again)  # a's block is now the most recently freed
    filler = S()
    assert pool.ensure(filler, 4 * 3) == OK  # 3 blocks: the free ones, then b's block (older) first
    assert pool.match(a.hashes, 1) == 1 and pool.match(b.hashes, 1) == 0


def test_admission_is_all_or_nothing():
    pool = PrefixCachingPool(total=3, block_size=4)
    a = S(words("a", 8))
    pool.admit(a, 0, 8)
    pool.commit(a, 8)
    pool.release(a)  # 2 evictable, 1 free
    b = S(words("a", 8) + words("z", 8))
    hit = pool.match(b.hashes, 3)
    assert hit == 2
    # 2 hit blocks + 2 more needed, 1 free and nothing else evictable: refused, nothing moved
    assert pool.admit(b, hit, 16) == NO_SPACE
    assert (b.blocks, b.held, pool.free, pool.used, pool.cached_blocks) == (0, [], 1, 0, 2)
    assert pool.admit(b, hit, 12) == OK and pool.used == 3


def test_a_block_computed_twice_at_once_stays_private_to_the_second_sequence():
    pool = PrefixCachingPool(total=10, block_size=4)
    prompt = words("p", 8)
    a, b = S(prompt), S(prompt)
    pool.admit(a, 0, 9)
    pool.admit(b, 0, 9)  # admitted before a computed anything: no hit
    pool.commit(a, 8)
    pool.commit(b, 8)
    assert len(a.held) == 2 and b.held == [] and pool.cached_blocks == 2
    pool.release(b)
    assert pool.free == 10 - 3 and pool.used == 3
    pool.release(a)
    assert pool.free == 8 and pool.used == 0


def test_block_accounting_holds_under_random_traffic():
    rng = random.Random(7)
    pool = PrefixCachingPool(total=40, block_size=4)
    heads = [words(f"h{i}", 12) for i in range(4)]
    live: list[tuple[S, int]] = []
    for step in range(3000):
        if live and (rng.random() < 0.45 or len(live) > 8):
            s, _ = live.pop(rng.randrange(len(live)))
            pool.release(s)
        else:
            tokens = rng.choice(heads)[: rng.randrange(4, 13)] + words(f"u{step}-", rng.randrange(0, 9))
            s = S(tokens)
            hit = pool.match(s.hashes, (len(tokens) - 1) // 4)
            if pool.admit(s, hit, len(tokens) + 1) == OK:
                pool.commit(s, len(tokens))
                live.append((s, len(tokens)))
        private = sum(s.blocks - len(s.held) for s, _ in live)
        shared = {h for s, _ in live for h in s.held}
        assert pool.used == private + len(shared)
        assert pool.free >= 0 and pool.free + pool.used + (pool.cached_blocks - len(shared)) == pool.total
    for s, _ in live:
        pool.release(s)
    assert pool.used == 0
