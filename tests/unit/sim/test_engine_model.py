"""The engine model on a virtual clock: calibration, presets' symptoms, determinism, refusals, GPU gauges."""

from __future__ import annotations

import statistics

import pytest

from llmload.sim.batching import BatchingEngine
from llmload.sim.cost import CostModel
from llmload.sim.gpu import SimulatedGpu, gpu_uuid
from llmload.sim.params import EngineParams
from llmload.sim.presets import PRESETS, preset_params
from llmload.sim.virtual import Arrival, VirtualLoop, replay


def burst(n: int, prompt: int, max_tokens: int, t: float = 0.0, tag: str = "") -> list[Arrival]:
    return [Arrival(t, prompt, max_tokens, tag) for _ in range(n)]


def test_healthy_matches_the_seed_figures_at_concurrency_1():
    outs, _ = replay(preset_params("healthy"), burst(1, 500, 100))
    (o,) = outs
    assert o.ttft == pytest.approx(0.180, abs=0.005)  # ~180 ms TTFT for a 500-token prompt
    assert o.tpot == pytest.approx(0.035, abs=0.001)  # ~35 ms TPOT
    assert len(o.token_times) == 100


def test_cost_model_follows_the_documented_equation():
    p = EngineParams(step_base_ms=10, host_overhead_ms=2, per_seq_ms=0.5, per_kv_token_us=2, prefill_tps=1000)
    host, gpu, moved = CostModel(p).step(decode_seqs=4, context_tokens=1000, prefill_tokens=100)
    assert host == pytest.approx(0.002)
    assert gpu == pytest.approx(0.010 + 4 * 0.0005 + 1000 * 2e-6 + 100 / 1000)
    assert moved == pytest.approx(p.weights_bytes + p.kv_bytes_per_token * 1100)
    half = CostModel(EngineParams(step_base_ms=10, host_overhead_ms=2, time_scale=0.5)).step(1, 0, 0)
    assert half[0] == pytest.approx(0.001) and half[1] == pytest.approx(0.005 + 0.5 * 0.0001)


def test_same_arrivals_give_the_same_token_times():
    arrivals = [Arrival(0.01 * i, 50 + 37 * i % 400, 5 + 11 * i % 60) for i in range(40)]
    p = preset_params("kv-pressure", kv_blocks=60)
    a, _ = replay(p, arrivals)
    b, _ = replay(p, arrivals)
    assert [o.token_times for o in a] == [o.token_times for o in b]
    assert all(len(o.token_times) == o.arrival.max_tokens for o in a)


def test_time_scale_scales_every_duration():
    arrivals = burst(3, 300, 20)
    full, _ = replay(preset_params("healthy"), arrivals)
    tenth, _ = replay(preset_params("healthy", time_scale=0.1), arrivals)
    for f, t in zip(full, tenth, strict=True):
        assert t.token_times == pytest.approx([x * 0.1 for x in f.token_times])


def test_batch_starved_ttft_grows_with_concurrency_while_tpot_stays_flat():
    p = preset_params("batch-starved")
    assert p.max_num_seqs == 4
    waits: list[int] = []
    low, _ = replay(p, burst(4, 100, 30))
    high, engine = replay(p, burst(16, 100, 30), on_tick=lambda e, t: waits.append(e.gauges()[1]), tick_s=0.05)
    ttft_low = statistics.median(o.ttft for o in low)
    ttft_high = statistics.median(o.ttft for o in high)
    assert ttft_high > 3 * ttft_low
    tpot_low = statistics.mean(o.tpot for o in low)
    tpot_high = statistics.mean(o.tpot for o in high)
    assert tpot_high == pytest.approx(tpot_low, rel=0.2)
    assert engine.stats.queue.sum > 0
    assert max(waits) >= 8


def decode_step(outs) -> float:
    """Median gap between tokens: the decode step, free of prefill chunks."""
    return statistics.median(i for o in outs for i in o.itls)


def test_bandwidth_bound_tpot_rises_with_the_batch():
    def ratio(name: str) -> float:
        one, _ = replay(preset_params(name), burst(1, 1000, 100))
        many, _ = replay(preset_params(name), burst(24, 1000, 100))
        return decode_step(many) / decode_step(one)

    assert ratio("bandwidth-bound") > 2.5
    assert ratio("healthy") < 1.3  # the healthy GQA model with FP16 weights reads 9x less KV per token


def test_kv_pressure_preempts_and_still_delivers_every_token():
    samples: list[float] = []
    p = preset_params("kv-pressure", kv_blocks=40)
    outs, engine = replay(p, burst(10, 60, 80), on_tick=lambda e, t: samples.append(e.gauges()[2]), tick_s=0.05)
    assert engine.sched.preemptions > 0
    assert engine.stats.preemptions == engine.sched.preemptions
    assert max(samples) > 0.95
    assert all(not o.error and len(o.token_times) == 80 for o in outs)


def test_kv_fragmented_fails_requests_while_blocks_are_free():
    p = preset_params("kv-fragmented", kv_blocks=96, max_batched_tokens=4096)
    arrivals = [Arrival(0.05 * i, (30, 300, 100)[i % 3], (150, 30, 80)[i % 3]) for i in range(60)]
    outs, engine = replay(p, arrivals)
    failed = [o for o in outs if o.error]
    assert failed and engine.stats.allocation_failures == len(failed)
    assert {o.status for o in failed} <= {200, 500}
    assert all("although" in o.error for o in failed)
    assert engine.sched.preemptions == 0 or len(failed) > engine.sched.preemptions


def test_prefill_interference_and_chunked_prefill():
    def short_itl_max(chunked: bool) -> float:
        p = preset_params("prefill-interference", chunked_prefill=chunked)
        arrivals = burst(4, 20, 200, tag="short") + burst(1, 3000, 1, t=1.0, tag="long")
        outs, _ = replay(p, arrivals)
        return max(max(o.itls) for o in outs if o.arrival.tag == "short")

    off, on = short_itl_max(False), short_itl_max(True)
    assert off > 0.035 + 3000 / 3500  # the whole prefill stalls every decode
    assert on < 0.5 * off


def test_refusals_too_long_and_queue_full():
    p = preset_params("healthy", max_model_len=100, max_waiting=2, max_num_seqs=1)
    outs, _ = replay(p, [Arrival(0, 90, 20), Arrival(0, 10, 5)] + burst(3, 10, 5, t=0.01))
    assert outs[0].status == 400 and "maximum context length is 100" in outs[0].error
    statuses = [o.status for o in outs[1:]]
    # one runs, two wait, the fourth finds the queue full
    assert statuses == [200, 200, 200, 429]


def test_static_batching_makes_late_arrivals_wait_for_the_whole_batch():
    arrivals = [Arrival(0, 50, 200), Arrival(0.5, 50, 5)]
    cont, _ = replay(preset_params("healthy"), arrivals)
    stat, _ = replay(preset_params("healthy", batching="static"), arrivals)
    assert cont[1].ttft < 0.5
    assert stat[1].ttft > 5  # it waits for the 200-token request to finish


def test_gpu_gauges_follow_the_step_mix():
    p = preset_params("batch-starved")
    loop = VirtualLoop()
    gpu = SimulatedGpu(p, uuid_=gpu_uuid(0), hostname="h", t0=0.0)
    engine = BatchingEngine(p, loop, gpu=gpu)  # type: ignore[arg-type]
    for _ in range(4):
        engine.submit(_NullSink(), 1000, 10)
    loop.run_until(5.0)
    s = gpu.sample(5.0)
    gpu_ms = p.step_base_ms + 4 * p.per_seq_ms  # + a little KV read
    assert s.utilization == pytest.approx(gpu_ms / (gpu_ms + p.host_overhead_ms), abs=0.03)  # ~55 %
    assert 0.3 < s.bandwidth_utilization < s.utilization
    assert s.power_watts == pytest.approx(p.gpu_power_idle_w + (p.gpu_power_max_w - p.gpu_power_idle_w) * s.utilization)
    assert s.memory_used_bytes == p.memory_used_bytes
    for seq in list(engine.sched.running):
        engine.cancel(seq)
    loop.run_until(10.0)
    assert gpu.sample(10.0).utilization == 0.0
    assert gpu_uuid(0) == gpu_uuid(0) != gpu_uuid(1)
    assert 'modelName="NVIDIA A10"' in "\n".join(gpu.render(10.0))


class _NullSink:
    def emit(self, n: int, finished: bool) -> None:
        pass

    def fail(self, message: str) -> None:
        pass


def test_engine_stats_observe_every_phase():
    outs, engine = replay(preset_params("healthy", max_num_seqs=2), burst(3, 100, 10))
    st = engine.stats
    assert st.finished == 3 and st.ttft.count == 3 and st.e2e.count == 3
    assert st.generation_tokens == 30 and st.itl.count == 27
    assert st.prompt_tokens == 300
    assert st.queue.sum > 0  # the third request waited for a slot
    assert st.iteration_tokens.count == engine.steps
    assert engine.running == 0 and engine.gauges() == (0, 0, 0.0)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_valid_and_documented(name):
    preset = PRESETS[name]
    p = preset_params(name)
    assert p.memory_used_bytes <= p.memory_total_bytes
    assert preset.summary and preset.symptom and preset.incident
    outs, _ = replay(p, burst(2, 200, 10))
    assert all(len(o.token_times) == 10 for o in outs)


def test_a_request_submitted_from_inside_a_step_never_starts_a_second_step():
    """A keep-alive client's next (pipelined) request arrives while the engine hands out tokens."""
    p = preset_params("healthy")
    loop = VirtualLoop()
    engine = BatchingEngine(p, loop)  # type: ignore[arg-type]
    times: list[list[float]] = []

    class Chain:
        def __init__(self, left: int) -> None:
            self.left = left
            self.times: list[float] = []
            times.append(self.times)

        def emit(self, n: int, finished: bool) -> None:
            self.times.extend([loop.time()] * n)
            if finished and self.left:
                engine.submit(Chain(self.left - 1), 5, 10)  # synchronously, from the engine's callback

        def fail(self, message: str) -> None:  # pragma: no cover
            raise AssertionError(message)

    engine.submit(Chain(4), 5, 10)
    loop.run()
    assert [len(t) for t in times] == [5] * 5
    one_request = (p.step_base_ms + p.host_overhead_ms + 10 / p.prefill_tps * 1000) + 4 * (
        p.step_base_ms + p.host_overhead_ms + p.per_seq_ms
    )
    assert loop.time() == pytest.approx(5 * one_request / 1000, rel=0.01)  # strictly one step at a time
    assert engine.idle() and engine.running == 0


def _prompt(shared: int, unique: int, tag: str) -> tuple[str, ...]:
    return tuple(f"s{i}" for i in range(shared)) + tuple(f"{tag}-{i}" for i in range(unique))


@pytest.mark.parametrize("caching", [True, False])
def test_a_shared_prefix_hits_the_cache_and_cuts_ttft_only_with_caching_on(caching):
    p = preset_params("healthy", prefix_caching=caching)
    arrivals = [Arrival(0.5 * i, 1100, 10, tokens=_prompt(1000, 100, f"r{i}")) for i in range(20)]
    outs, engine = replay(p, arrivals)
    st = engine.stats
    ratio = st.prefix_cache_hits / st.prefix_cache_queries if st.prefix_cache_queries else 0.0
    later = statistics.median(o.ttft for o in outs[1:])
    if caching:
        assert st.prefix_cache_queries == 20 * 1100
        assert ratio >= 0.85  # 19 of 20 requests find 992 of their 1100 tokens
        assert [o.seq.cached_tokens for o in outs] == [0] + [992] * 19
        assert later < 0.5 * outs[0].ttft  # 108 tokens to prefill instead of 1100
    else:
        assert (st.prefix_cache_queries, st.prefix_cache_hits) == (0, 0)
        assert all(o.seq.cached_tokens == 0 for o in outs)
        assert later == pytest.approx(outs[0].ttft, rel=0.05)


def test_unique_prompts_never_hit_and_keep_their_timing():
    arrivals = [Arrival(0.3 * i, 500, 20, tokens=_prompt(0, 500, f"u{i}")) for i in range(10)]
    on, engine = replay(preset_params("healthy"), arrivals)
    off, _ = replay(preset_params("healthy", prefix_caching=False), arrivals)
    assert engine.stats.prefix_cache_hits == 0 and engine.stats.prefix_cache_queries == 5000
    assert [o.token_times for o in on] == [o.token_times for o in off]
