from __future__ import annotations

import pytest

from llmload.capacity.overrides import apply_overrides
from llmload.errors import ConfigError
from llmload.sim.params import EngineParams


def test_set_a_value_or_scale_it():
    p = EngineParams(prefill_tps=2000.0, max_num_seqs=8)
    q = apply_overrides(p, ["max_num_seqs=64", "prefill_tps=x1.5", "chunked-prefill=off", "kv_blocks=x0.5"])
    assert (q.max_num_seqs, q.prefill_tps, q.chunked_prefill) == (64, 3000.0, False)
    assert q.kv_blocks == p.num_kv_blocks // 2
    assert apply_overrides(p, []) is p


@pytest.mark.parametrize("bad", ["warp=9", "max_num_seqs", "max_num_seqs=many", "max_num_seqs=0"])
def test_a_bad_override_is_one_clear_error(bad):
    with pytest.raises(ConfigError, match="--set|max-num-seqs"):
        apply_overrides(EngineParams(), [bad])
