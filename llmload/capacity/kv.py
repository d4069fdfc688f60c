"""The KV cache's capacity, from the engine's KV-use gauge against the KV tokens the requests held.

At every scrape (``timeseries.json``: ``kv_cache_usage``, the fraction of KV blocks in use, and
each scrape's wall time) the requests' own timing says which sequences held KV blocks (admitted,
not yet finished) and how many: ``ceil((prompt + tokens produced so far) / block_size)`` each.
Blocks held / fraction used = the pool's size; the median over the scrapes where the gauge
read at least 2 % (below that, one block's rounding dominates) is ``kv_blocks``, measured.
Without the gauge, or when it never moved, ``kv_blocks`` stays the default, assumed.
"""

from __future__ import annotations

import numpy as np

from llmload.capacity.features import Columns
from llmload.capacity.measured import Measured
from llmload.capacity.param import Param
from llmload.sim.params import EngineParams

__all__ = ["kv_param"]

_MIN_USAGE = 0.02
_MIN_SCRAPES = 3


def _blocks_held(c: Columns, t: float, block: int) -> float:
    on = (c.admitted <= t) & (t < c.last)
    span = np.maximum(c.last - c.first, 1e-9)
    produced = np.clip((t - c.first) / span, 0.0, 1.0) * c.output
    tokens = c.input + np.where(t >= c.first, produced, 0.0)
    return float(np.ceil(tokens[on] / block).sum())


def kv_param(m: Measured, c: Columns, base: EngineParams) -> Param:
    usage, times = m.gauges.get("kv_cache_usage") or [], m.gauges.get("_t_wall") or []
    ratios = []
    for u, tw in zip(usage, times, strict=False):
        if u is None or tw is None or u < _MIN_USAGE:
            continue
        held = _blocks_held(c, tw - m.t0_wall, base.block_size)
        if held > 0:
            ratios.append(held / u)
    if len(ratios) >= _MIN_SCRAPES:
        blocks = int(round(float(np.median(ratios))))
        spread = float(np.percentile(ratios, 75) - np.percentile(ratios, 25)) / 1.35  # IQR -> sigma
        return Param("kv_blocks", blocks, "measured", round(spread, 1),
                     f"KV blocks the requests held / the engine's KV use, median of {len(ratios)} scrapes "
                     f"(use up to {max(u for u in usage if u is not None):.0%}); "
                     f"{blocks * base.block_size} tokens")  # fmt: skip
    return Param("kv_blocks", base.num_kv_blocks, "assumed",
                 note="KV use (vllm:kv_cache_usage_perc) above 2 % in several scrapes, with --engine-metrics, "
                 "would pin the KV capacity")  # fmt: skip
