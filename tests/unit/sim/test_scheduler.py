"""The scheduler as pure code: chunked prefill, admission, preemption with recompute, static batching."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.sim.params import EngineParams
from llmload.sim.prefix import block_hashes
from llmload.sim.scheduler import CANCELLED, DONE, FAILED, RUNNING, WAITING, Scheduler, Seq


def params(**kw) -> EngineParams:
    kw.setdefault("kv_blocks", 1000)
    return EngineParams(**kw)


def run_to_end(s: Scheduler, limit: int = 100_000) -> tuple[dict[Seq, int], int]:
    """Plan and complete steps until idle: (tokens per seq, steps)."""
    got: dict[Seq, int] = {}
    for n in range(limit):
        step = s.schedule()
        if not step.items:
            return got, n
        for seq, _ in s.complete(step):
            got[seq] = got.get(seq, 0) + 1
    raise AssertionError("scheduler did not finish")


def test_chunked_prefill_splits_a_long_prompt_then_decodes_one_token_per_step():
    s = Scheduler(params(max_batched_tokens=512))
    a = Seq(prompt=1000, max_tokens=3)
    s.add(a)
    step = s.schedule()
    assert step.items == [(a, 512)] and step.prefill_tokens == 512 and step.decode_seqs == 0
    assert step.admitted == [a] and a.state == RUNNING
    assert s.complete(step) == []  # a partial prefill samples nothing
    step = s.schedule()
    assert step.items == [(a, 488)]
    assert s.complete(step) == [(a, False)]  # prompt done: first token
    step = s.schedule()
    assert step.items == [(a, 1)] and step.decode_seqs == 1 and step.context_tokens == 1001
    assert s.complete(step) == [(a, False)]
    assert s.complete(s.schedule()) == [(a, True)]
    assert a.state == DONE and s.running == [] and s.pool.used == 0


def test_decodes_go_first_and_a_new_prompt_gets_the_budget_left():
    s = Scheduler(params(max_batched_tokens=100))
    a = Seq(prompt=10, max_tokens=50)
    s.add(a)
    s.complete(s.schedule())  # a has its first token
    b = Seq(prompt=500, max_tokens=5)
    s.add(b)
    step = s.schedule()
    assert step.items == [(a, 1), (b, 99)]
    assert (step.decode_seqs, step.prefill_tokens) == (1, 99)


def test_without_chunked_prefill_a_prompt_takes_a_step_of_its_own_and_decodes_wait():
    s = Scheduler(params(max_batched_tokens=100, chunked_prefill=False))
    a = Seq(prompt=10, max_tokens=50)
    s.add(a)
    s.complete(s.schedule())
    b = Seq(prompt=3000, max_tokens=5)  # longer than the budget: prefilled whole, alone
    s.add(b)
    step = s.schedule()
    assert step.items == [(b, 3000)] and step.decode_seqs == 0
    assert s.complete(step) == [(b, False)]
    step = s.schedule()  # nothing waiting: everyone decodes
    assert step.items == [(a, 1), (b, 1)] and step.decode_seqs == 2


def test_without_chunked_prefill_short_prompts_share_a_prefill_step_up_to_the_budget():
    s = Scheduler(params(max_batched_tokens=100, chunked_prefill=False))
    seqs = [Seq(prompt=40, max_tokens=2) for _ in range(3)]
    for q in seqs:
        s.add(q)
    step = s.schedule()
    assert [q for q, _ in step.items] == seqs[:2] and step.prefill_tokens == 80


def test_max_num_seqs_caps_the_batch_and_the_rest_wait_fifo():
    s = Scheduler(params(max_num_seqs=2))
    seqs = [Seq(prompt=5, max_tokens=4) for _ in range(5)]
    for q in seqs:
        s.add(q)
    step = s.schedule()
    assert [q for q, _ in step.items] == seqs[:2]
    assert list(s.waiting) == seqs[2:]
    got, _ = run_to_end(s)
    assert all(got[q] == 4 for q in seqs)


def test_preemption_frees_the_last_admitted_and_it_recomputes_prompt_plus_output():
    # 4 blocks of 4 tokens = 16 tokens: two sequences of 5 + 6 tokens cannot both finish.
    s = Scheduler(params(kv_blocks=4, block_size=4, max_batched_tokens=64))
    a, b = Seq(prompt=5, max_tokens=6), Seq(prompt=5, max_tokens=6)
    s.add(a)
    s.add(b)
    preempted_b = False
    for _ in range(100):
        step = s.schedule()
        if step.preempted:
            assert b.state == WAITING and s.waiting[0] is b and b.computed == 0 and b.blocks == 0
            assert b.need == b.prompt + b.generated  # the tokens it had generated are recomputed
            preempted_b = True
        if not step.items:
            break
        s.complete(step)
    assert preempted_b
    assert s.preemptions >= 1
    assert a.state == DONE and b.state == DONE
    assert a.generated == 6 and b.generated == 6
    assert s.pool.used == 0


def test_preemption_never_livelocks_and_counts():
    s = Scheduler(params(kv_blocks=10, block_size=4, max_batched_tokens=32))
    seqs = [Seq(prompt=7, max_tokens=20) for _ in range(6)]
    for q in seqs:
        s.add(q)
    got, steps = run_to_end(s)
    assert [got[q] for q in seqs] == [20] * 6
    assert s.preemptions > 0


def test_static_batching_admits_only_when_the_whole_batch_has_finished():
    s = Scheduler(params(batching="static", max_num_seqs=3))
    short, long_, late = Seq(prompt=4, max_tokens=2), Seq(prompt=4, max_tokens=6), Seq(prompt=4, max_tokens=2)
    s.add(short)
    s.add(long_)
    step = s.schedule()
    assert step.prefill_tokens == 8
    s.complete(step)
    s.add(late)
    for _ in range(5):
        step = s.schedule()
        assert late.state == WAITING  # the batch is not released while long_ runs
        assert step.decode_seqs == 2  # padded: short (finished) still takes its slot
        s.complete(step)
    assert short.state == DONE and long_.state == DONE
    assert s.running == [] and s.pool.used == 0
    step = s.schedule()
    assert [q for q, _ in step.items] == [late]


def test_fragmented_pool_fails_the_request_instead_of_preempting():
    s = Scheduler(params(kv_blocks=8, block_size=4, kv_fragmentation=True, max_batched_tokens=64))
    small = [Seq(prompt=1, max_tokens=1000) for _ in range(8)]
    for q in small:
        s.add(q)
    s.complete(s.schedule())  # 8 sequences of 1 block each: the pool is full
    for q in small[::2]:
        s.cancel(q)  # 4 scattered free blocks
    big = Seq(prompt=5, max_tokens=1)  # needs 2 adjacent blocks
    s.add(big)
    step = s.schedule()
    assert big in step.failed and big.state == FAILED
    assert "contiguous" in big.error and "although" in big.error
    assert s.failures == 1 and s.preemptions == 0


def test_cancel_frees_blocks_in_every_state():
    s = Scheduler(params(max_num_seqs=1))
    a, b = Seq(prompt=20, max_tokens=5), Seq(prompt=20, max_tokens=5)
    s.add(a)
    s.add(b)
    step = s.schedule()
    assert s.pool.used > 0
    s.cancel(b)  # waiting
    assert b.state == CANCELLED and not s.waiting
    s.cancel(a)  # running, inside the planned step
    assert s.pool.used == 0 and not s.running
    assert s.complete(step) == []  # the step completes without it


@pytest.mark.parametrize("chunked", [True, False])
def test_every_request_gets_exactly_its_tokens(chunked):
    s = Scheduler(params(kv_blocks=50, block_size=8, max_batched_tokens=64, max_num_seqs=5, chunked_prefill=chunked))
    seqs = [Seq(prompt=3 + 17 * i % 50, max_tokens=1 + 7 * i % 30) for i in range(20)]
    for q in seqs:
        s.add(q)
    got, _ = run_to_end(s)
    assert [got[q] for q in seqs] == [q.max_tokens for q in seqs]


# -- prefix caching -----------------------------------------------------------------------


def tokens(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def cached_seq(toks: list[str], max_tokens: int = 2, block_size: int = 16) -> Seq:
    return Seq(prompt=len(toks), max_tokens=max_tokens, hashes=block_hashes(toks, block_size))


def test_a_request_sharing_a_cached_prefix_prefills_only_the_rest():
    s = Scheduler(params(max_batched_tokens=4096))
    shared = tokens("sys", 160)  # 10 blocks
    a = cached_seq(shared + tokens("a", 40))
    s.add(a)
    step = s.schedule()
    assert step.items == [(a, 200)] and a.cached_tokens == 0
    run_to_end(s)
    b = cached_seq(shared + tokens("b", 40))
    s.add(b)
    step = s.schedule()
    assert b.cached_tokens == 160 and b.computed == 160
    assert step.items == [(b, 40)] and step.prefill_tokens == 40
    assert (s.prefix_queries, s.prefix_hits) == (400, 160)
    got, _ = run_to_end(s)
    assert got == {b: 2}


def test_a_prompt_found_whole_still_computes_its_last_token():
    s = Scheduler(params())
    prompt = tokens("p", 32)  # exactly 2 blocks
    s.add(cached_seq(prompt))
    run_to_end(s)
    again = cached_seq(prompt)
    s.add(again)
    step = s.schedule()
    assert again.cached_tokens == 16  # the second block is computed again, for the logits
    assert step.items == [(again, 16)]


def test_without_prefix_caching_nothing_is_reused_or_counted():
    s = Scheduler(params(prefix_caching=False))
    prompt = tokens("p", 100)
    for _ in range(2):
        seq = cached_seq(prompt)
        s.add(seq)
        assert s.schedule().items == [(seq, 100)]
        run_to_end(s)
        assert seq.cached_tokens == 0
    assert s.cache is None and (s.prefix_queries, s.prefix_hits) == (0, 0)


def test_a_preempted_request_finds_its_own_blocks_again_and_is_counted_once():
    s = Scheduler(params(kv_blocks=20, max_batched_tokens=1000))
    a = cached_seq(tokens("a", 96), max_tokens=100)  # 6 prompt blocks, 13 at the end
    b = cached_seq(tokens("b", 96), max_tokens=100)  # the two together need 26 > 20
    s.add(a)
    s.add(b)
    readmitted = []
    for _ in range(2000):
        was_waiting = b.state == WAITING and b.generated > 0
        step = s.schedule()
        if not step.items:
            break
        if was_waiting and b.state == RUNNING:
            readmitted.append((b.computed, b.generated))
        s.complete(step)
    assert s.preemptions >= 1 and readmitted
    assert a.state == DONE and b.state == DONE
    assert readmitted[0][0] == 96  # its 6 prompt blocks were still cached: only the output is recomputed
    assert b.cached_tokens == 0  # the usage reports the first admission
    assert (s.prefix_queries, s.prefix_hits) == (192, 0)  # counted at the first admission only


def test_static_batching_uses_the_cache_too():
    s = Scheduler(params(batching="static"))
    shared = tokens("sys", 64)
    s.add(cached_seq(shared + tokens("x", 8)))
    run_to_end(s)
    b = cached_seq(shared + tokens("y", 8))
    s.add(b)
    step = s.schedule()
    assert b.cached_tokens == 64 and step.items == [(b, 8)]
    got, _ = run_to_end(s)
    assert got == {b: 2}


def test_prefix_caching_is_refused_with_a_contiguous_pool_and_off_by_default_there():
    assert params().prefix_caching is True
    assert params(kv_fragmentation=True).prefix_caching is False
    with pytest.raises(ConfigError, match="--no-prefix-caching"):
        params(kv_fragmentation=True, prefix_caching=True)
