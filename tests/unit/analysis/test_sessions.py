"""A ladder over sessions: which runs are, and their max-sessions verdicts (on SLOs, on the baseline's limits)."""

from __future__ import annotations

import pytest

from llmload.analysis.sessions import Figure, over_sessions, result_over_sessions, session_verdicts, target_quantile
from tests.helpers.session_data import session_result

LADDER = {1: 50.0, 4: 60.0, 8: 120.0}


def test_a_run_is_over_sessions_only_when_every_request_was_a_turn():
    agent = session_result(LADDER)
    assert result_over_sessions(agent) and over_sessions([agent.overall, *agent.classes.values()])
    assert result_over_sessions(session_result(LADDER, chat=True))
    mixed = session_result(LADDER, single=True)  # a single-request class beside the agent: users, not sessions
    assert not result_over_sessions(mixed) and session_verdicts(mixed) == ()
    assert not over_sessions([mixed.overall]) and over_sessions([mixed.classes["agent"]])
    assert not over_sessions([])
    fanned = session_result(LADDER, fanout=True)  # sub-agents' requests are their parent session's
    assert result_over_sessions(fanned)
    (v,) = session_verdicts(fanned)
    assert v.held is not None and v.held.sessions == 4 and v.held.turns_per_session == 4.0  # the parents' sessions


def test_without_slos_the_max_sessions_is_the_safe_step_within_the_baselines_limits():
    (v,) = session_verdicts(session_result(LADDER))
    assert (v.basis, v.status, v.missed, v.baseline_sessions, v.top) == ("degradation", "breach", "ttft_p50", 1, 8)
    assert v.held is not None and v.held.sessions == 4 and v.held.step == 1
    ttft, tpot = v.held.figures
    assert ttft.metric == "ttft_p50" and ttft.value == pytest.approx(60.0, rel=0.01) and ttft.limit == pytest.approx(75.0)
    assert tpot.metric == "tpot_p50" and tpot.limit == pytest.approx(15.0)
    # per session: 4 turns, 2 s apart (the tool wait), the last one's end: about 6.1 s
    assert v.held.turns_per_session == 4.0 and v.held.duration_p50_ms == pytest.approx(6090, rel=0.01)
    assert v.failed is not None and v.failed.sessions == 8
    (breach,) = v.failed.figures
    assert breach.metric == "ttft_p50" and breach.value == pytest.approx(120.0) and breach.limit == pytest.approx(75.0)


def test_with_slos_the_max_sessions_is_the_last_step_meeting_the_attainment_target():
    slo, deg = session_verdicts(session_result(LADDER, slo_ms=150.0))
    assert (slo.basis, slo.status, slo.target, slo.missed) == ("slo", "breach", 0.99, "ttft_ms")
    # one session in ten is 3x slower: at 4 sessions its turns (180 ms) miss the 150 ms SLO, attainment 90 %
    assert slo.held is not None and slo.held.sessions == 1
    assert slo.held.figures == (Figure("ttft_p99", 50.0, 150.0), Figure("attainment", 1.0, 0.99))
    assert slo.failed is not None and slo.failed.sessions == 4
    p99, attainment = slo.failed.figures
    assert p99.metric == "ttft_p99" and p99.value > 150.0 and attainment == Figure("attainment", 0.9, 0.99)
    assert deg.basis == "degradation" and deg.held is not None and deg.held.sessions == 4


def test_no_breach_holds_at_least_the_top_step_and_a_conversation_counts_turns_per_session():
    (v,) = session_verdicts(session_result({1: 50.0, 4: 55.0}, chat=True))
    assert v.status == "ok" and v.failed is None and v.held is not None and v.held.sessions == 4
    assert v.held.turns_per_session == 4.0 and v.held.duration_p50_ms is None  # no agent sessions: no duration


@pytest.mark.parametrize(("target", "q"), [(0.99, "p99"), (0.95, "p99"), (0.9, "p90"), (0.75, "p90"), (0.5, "p50")])
def test_the_slo_figure_is_the_percentile_the_target_needs_within_the_limit(target, q):
    assert target_quantile(target) == q


def test_the_verdicts_notes_name_steps_in_sessions():
    v = session_result({1: 50.0, 4: 55.0, 8: 60.0}).judgement.verdict
    assert v.status == "ok" and "holds at least 8 sessions" in v.note
    assert "sessions" in v.confidence.note and "users" not in v.confidence.note + v.note
    users = session_result({1: 50.0, 4: 55.0, 8: 60.0}, single=True).judgement.verdict
    assert "holds at least 8 users" in users.note


def test_classes_with_their_own_slos_are_shown_each_on_its_own_figures():
    slo, _ = session_verdicts(session_result(LADDER, slo_ms=150.0, coder_slo_ms=100.0))
    assert slo.held is not None and slo.failed is not None and slo.failed.sessions == 4
    agent, coder, attainment = slo.failed.figures
    assert (agent.metric, agent.limit, coder.metric, coder.limit) == ("agent:ttft_p99", 150.0, "coder:ttft_p99", 100.0)
    assert agent.value > 150.0 and coder.value == pytest.approx(60.0) and attainment.value == pytest.approx(0.95)
