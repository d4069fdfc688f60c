"""KV block pools: paged (a counter) and contiguous (first-fit runs that fragment)."""

from __future__ import annotations

from llmload.sim.kvcache import FRAGMENTED, NO_SPACE, OK, ContiguousPool, PagedPool


class S:
    def __init__(self) -> None:
        self.blocks = 0
        self.start = 0


def test_paged_pool_allocates_whole_blocks_as_a_sequence_grows():
    pool, s = PagedPool(total=10, block_size=16), S()
    assert pool.ensure(s, 1) == OK and s.blocks == 1
    assert pool.ensure(s, 16) == OK and s.blocks == 1
    assert pool.ensure(s, 17) == OK and s.blocks == 2
    assert pool.used == 2
    assert pool.ensure(s, 16 * 10) == OK and pool.free == 0
    assert pool.ensure(s, 16 * 10 + 1) == NO_SPACE
    assert s.blocks == 10  # a refused growth takes nothing
    pool.release(s)
    assert pool.free == 10 and s.blocks == 0


def test_paged_pool_never_fragments():
    pool = PagedPool(total=8, block_size=1)
    seqs = [S() for _ in range(8)]
    for s in seqs:
        assert pool.ensure(s, 1) == OK
    for s in seqs[::2]:  # free every other block
        pool.release(s)
    big = S()
    assert pool.ensure(big, 4) == OK  # scattered blocks are fine when paged


def test_contiguous_pool_extends_in_place_or_moves_to_the_first_run_that_fits():
    pool = ContiguousPool(total=10, block_size=1)
    a, b = S(), S()
    assert pool.ensure(a, 2) == OK and (a.start, a.blocks) == (0, 2)
    assert pool.ensure(b, 2) == OK and (b.start, b.blocks) == (2, 2)
    assert pool.ensure(b, 3) == OK and (b.start, b.blocks) == (2, 3)  # in place
    assert pool.ensure(a, 3) == OK and (a.start, a.blocks) == (5, 3)  # moved past b
    assert pool.used == 6 and pool.free == 4
    pool.release(a)
    assert pool.free == 7


def test_contiguous_pool_fails_with_free_blocks_scattered():
    pool = ContiguousPool(total=8, block_size=1)
    seqs = [S() for _ in range(8)]
    for s in seqs:
        assert pool.ensure(s, 1) == OK
    for s in seqs[::2]:
        pool.release(s)
    assert pool.free == 4
    big = S()
    assert pool.ensure(big, 2) == FRAGMENTED  # 4 free blocks, no two adjacent
    assert big.blocks == 0 and pool.free == 4
    assert pool.ensure(big, 5) == NO_SPACE  # really too few
    assert "although 4 of 8 are free" in pool.describe_failure(big, 2)
    assert pool.largest_free_run() == 1


def test_contiguous_growth_may_reuse_its_own_run_when_moving():
    pool = ContiguousPool(total=4, block_size=1)
    a, b, c = S(), S(), S()
    pool.ensure(b, 1)  # block 0
    pool.ensure(a, 2)  # blocks 1-2
    pool.ensure(c, 1)  # block 3: a cannot grow in place
    pool.release(b)  # free: block 0 only
    assert pool.ensure(a, 3) == OK  # 0..2 overlaps its old run: allowed (a move within)
    assert (a.start, a.blocks) == (0, 3)
    assert pool.free == 0
