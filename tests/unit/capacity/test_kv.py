"""The KV capacity is measured from the engine's KV-use gauge when it moved, else assumed."""

from __future__ import annotations

import dataclasses

from llmload.capacity.fit import fit_measured
from llmload.capacity.measured import Measured, Req
from llmload.sim.params import EngineParams
from llmload.sim.virtual import Arrival, replay
from tests.helpers.capacity import ladder, measured

TRUE = EngineParams(max_num_seqs=8, kv_blocks=400)  # 6400 tokens: 4 long requests fill ~80 % of it


def _with_gauges(params: EngineParams) -> Measured:
    """A run whose requests arrive as a closed-loop ladder 1,4 sent them, with a scrape every second."""
    sent = measured(params, ladder((1, 4), step_s=40.0, warmup_s=5.0))
    scrapes: list[tuple[float, float]] = []
    arrivals = [Arrival(r.start, r.input, r.output, str(i)) for i, r in enumerate(sent.reqs)]
    outs, _ = replay(params, arrivals, on_tick=lambda e, t: scrapes.append((t, e.gauges()[2])), tick_s=1.0)
    reqs = tuple(
        Req(o.arrival.t, o.token_times[0], o.token_times[-1], o.token_times[-1], o.arrival.prompt,
            len(o.token_times), "c", o.seq.t_scheduled - o.arrival.t, None)
        for o in outs if o.token_times
    )  # fmt: skip
    gauges = {"kv_cache_usage": [u for _, u in scrapes], "_t_wall": [1000.0 + t for t, _ in scrapes]}
    return dataclasses.replace(sent, reqs=reqs, t0_wall=1000.0, gauges=gauges)


def test_kv_blocks_are_measured_from_the_kv_gauge():
    f = fit_measured(_with_gauges(TRUE))
    kv = next(p for p in f.provenance if p.name == "kv_blocks")
    assert kv.how == "measured" and abs(kv.value / 400 - 1) < 0.05, kv
    assert f.params.kv_blocks == kv.value


def test_without_the_gauge_kv_blocks_stay_assumed_and_say_what_would_pin_them():
    f = fit_measured(measured(TRUE, ladder((1, 4), step_s=40.0, warmup_s=5.0)))
    kv = next(p for p in f.provenance if p.name == "kv_blocks")
    assert kv.how == "assumed" and "kv_cache_usage" in kv.note
