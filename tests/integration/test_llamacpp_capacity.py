"""Measure -> fit -> predict -> measure on a real engine: llama.cpp's llama-server (issue 25, "On llama.cpp").

llama-server b11434 with the 88 M random-weight GGUF (tests/engines/make_gguf.py), CPU, one thread,
``--parallel 4`` (a slot cap a 6-user step passes) and ``--no-cache-prompt`` (the synthetic prompts share
their start, which llama.cpp's prompt cache would skip: half the prompt tokens of a run; the fitted
model has no prefix cache). The loop (tests/engines/capacity_loop.py): a ladder 1,2,6 of one profile
(32-320 prompt / 8-24 output tokens: a wide prompt range pins the per-context-token cost) measured with
the engine's gauges, ``llmload fit``, a ladder 1,3,6 of a second profile (128-256 / 24-40) measured,
``llmload predict`` of it with ``--check``; the table of measured vs predicted TTFT and TPOT p50 per step
is printed into the log (``make test`` shows it). Longer steps and the figures: benchmarks/llamacpp_capacity.py
and docs/capacity.md.

What it asserts, and why so loosely: the slot cap measured exactly (4, from llama.cpp's
``requests_processing`` / ``requests_deferred`` gauges) and the server's prompt-token factor measured;
every step predicted and measured; each step's TTFT and TPOT p50 predicted within a factor of 4. A
one-thread CPU engine is not what the model describes (TPOT 27 ms at 1 user, ~80 ms at 2: the slots
share one core, not linear in the batch), the 8 s steps hold 2-10 requests each, and the box may be
busy: at a load of 5-6 on this 2-core box a 10 s-step run read errors up to +191 % (n = 2) with the prompt
cache on; a quiet 15 s-step run (docs/capacity.md) within 35 %. A factor of 4 still fails a fit that lost
the cap (1 or 64 slots at the 6-user step), the prefill rate or the token count by a wide margin, or a
unit slip. About 65 s.
"""

from __future__ import annotations

import pytest

from tests.engines.capacity_loop import Ladder, fit_predict_measure
from tests.engines.llama_server import llama_server, missing_reason
from tests.engines.make_gguf import ensure_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.llamacpp,
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

SLOTS = 4
FIT = Ladder(prompt=(32, 320), output=(8, 24), levels="1,2,6")
PREDICTED = Ladder(prompt=(128, 256), output=(24, 40), levels="1,3,6")
FACTOR = 4.0  # predicted / measured of each step's TTFT and TPOT p50 within [1/4, 4]


def test_fit_on_one_profile_predicts_a_ladder_of_another(tmp_path, capsys):
    model = ensure_model("88m")
    with llama_server(model, alias="m88", parallel=SLOTS, log_dir=tmp_path, extra=("--no-cache-prompt",)) as srv:
        loop = fit_predict_measure(srv, tmp_path, FIT, PREDICTED, step_s=8, warmup_s=2)
    report = loop.table()
    with capsys.disabled():
        print("\n" + report)
    assert loop.params["max_num_seqs"] == SLOTS and loop.provenance["max_num_seqs"]["how"] == "measured", report
    assert loop.provenance["prefill_tps"]["how"] == "fitted" and loop.params["prefill_tps"] > 0, report
    assert 1.2 < loop.factor < 2.5, report  # the test GGUF's small BPE vocabulary: ~1.7 server tokens per asked
    rows = loop.rows()
    assert [r["load"] for r in rows] == ["1 user", "3 users", "6 users"], report
    for r in rows:
        assert r["n_measured"] >= 1, report
        for key in ("ttft_p50_ms", "tpot_p50_ms"):
            f = r[key]
            assert f["measured"] and f["predicted"], (r["load"], key, report)
            assert 1 / FACTOR <= f["predicted"] / f["measured"] <= FACTOR, (r["load"], key, report)
