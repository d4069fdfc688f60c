"""The fit recovers a known engine model from its own timing (virtual clock: exact, no waiting)."""

from __future__ import annotations

import dataclasses

import pytest

from llmload.capacity.fit import fit_measured
from llmload.capacity.quality import fit_quality, worst_error
from llmload.sim.presets import preset_params
from tests.helpers.capacity import ladder, measured, step_p50

CASES = {  # preset (not told to the fitter) and the cap the ladder's top step exceeds
    "healthy": preset_params("healthy", max_num_seqs=8),
    "batch-starved": preset_params("batch-starved"),
    "bandwidth-bound": preset_params("bandwidth-bound", max_num_seqs=8),
}


def _prov(fit, name):
    return next(p for p in fit.provenance if p.name == name)


@pytest.mark.parametrize("name", list(CASES))
def test_fit_recovers_the_step_cost_the_prefill_rate_and_the_cap(name):
    true = CASES[name]
    f = fit_measured(measured(true, ladder((1, 4, 12))))
    got = f.params
    # host and step_base are one intercept for latencies: their sum is what a run pins
    assert got.host_overhead_ms + got.step_base_ms == pytest.approx(true.host_overhead_ms + true.step_base_ms, rel=0.03)
    assert got.prefill_tps == pytest.approx(true.prefill_tps, rel=0.05)
    assert got.max_num_seqs == true.max_num_seqs and _prov(f, "max_num_seqs").how == "measured"
    # per_seq and per_kv_token trade off (batch and context grow together): their effect at the top step matters
    n, ctx = true.max_num_seqs, true.max_num_seqs * 700
    effect = lambda p: p.per_seq_ms * n + p.per_kv_token_us / 1000 * ctx  # noqa: E731
    top_step = true.host_overhead_ms + true.step_base_ms + effect(true)  # one decode step at the cap
    assert abs(effect(got) - effect(true)) < 0.10 * top_step
    assert _prov(f, "host_overhead_ms").how == "assumed" and "GPU" in _prov(f, "host_overhead_ms").note
    assert _prov(f, "prefill_tps").how == "fitted" and _prov(f, "prefill_tps").stderr < 0.05 * got.prefill_tps


@pytest.mark.parametrize("name", list(CASES))
def test_the_fitted_model_predicts_a_step_it_never_saw(name):
    true = CASES[name]
    f = fit_measured(measured(true, ladder((1, 4, 12))))
    unseen = ladder((6,))  # 6 users: between the fitted steps, below or near the cap
    (t_ttft, t_tpot), (p_ttft, p_tpot) = step_p50(true, unseen, 0), step_p50(f.params, unseen, 0)
    assert p_tpot == pytest.approx(t_tpot, rel=0.05)
    assert p_ttft == pytest.approx(t_ttft, rel=0.10)


def test_the_fit_quality_replays_each_step():
    true = CASES["healthy"]
    m = measured(true, ladder((1, 4, 12)))
    rows = fit_quality(m, fit_measured(m).params)
    assert {(r["step"], r["class"]) for r in rows} >= {(0, "(all)"), (1, "short"), (2, "long")}
    assert all(r["tpot_p50_ms"] and r["tpot_p50_replayed_ms"] for r in rows)
    assert worst_error(rows) < 0.15


def test_a_run_without_queueing_leaves_the_cap_assumed_and_says_what_would_pin_it():
    f = fit_measured(measured(CASES["healthy"], ladder((1, 4))))
    cap = _prov(f, "max_num_seqs")
    assert cap.how == "assumed" and "num_requests_waiting" in cap.note
    assert f.params.max_num_seqs >= 4


def test_one_load_level_holds_the_batch_terms_and_warns():
    f = fit_measured(measured(CASES["healthy"], ladder((1,))))
    assert _prov(f, "per_seq_ms").how == "assumed" and "ladder" in _prov(f, "per_seq_ms").note
    assert any("one load level" in w for w in f.warnings)
    assert dataclasses.asdict(_prov(f, "step_base_ms"))["how"] == "fitted"


def test_the_replay_of_a_closed_loop_follows_each_user_so_the_true_model_replays_exactly():
    # replayed at the measured send times, requests overlapped that never did (TTFT p50 -11 % on the true model)
    true = CASES["healthy"]
    rows = fit_quality(measured(true, ladder((1, 4, 12))), true)
    assert worst_error(rows) < 0.005
