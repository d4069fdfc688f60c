"""A ladder over sessions' verdict in words: the figures it held, the step that broke, per session."""

from __future__ import annotations

from llmload.analysis.sessions import Figure, SessionLevel, SessionVerdict
from llmload.report.session_lines import figure_text, session_headline, session_sentence

HELD = SessionLevel(3, 40, (Figure("ttft_p99", 820.0, 1000.0), Figure("attainment", 0.992, 0.99)), 12_340.0, 4.0)
FAILED = SessionLevel(4, 60, (Figure("ttft_p99", 1400.0, 1000.0), Figure("attainment", 0.931, 0.99)), 15_000.0, 4.0)


def test_max_sessions_under_slo_with_the_breach_and_the_slo_most_missed():
    v = SessionVerdict("slo", "breach", HELD, FAILED, "ttft_ms", 0.99)
    assert session_sentence(v) == (
        "max sessions under SLO: 40 (TTFT p99 820 ms <= 1,000 ms, attainment 99.2 % >= 99.0 %; session p50 12.3 s, "
        "4.0 turns); 60 sessions breach: attainment 93.1 % < 99.0 %, most missed ttft_ms (TTFT p99 1,400 ms > 1,000 ms)"
    )
    assert session_headline(v) == "Max sessions under SLO: 40"


def test_errors_as_what_most_failed_requests_missed():
    failed = SessionLevel(4, 60, (Figure("error_rate", 0.05), Figure("attainment", 0.95, 0.99)))
    v = SessionVerdict("slo", "breach", HELD, failed, "errors", 0.99)
    assert session_sentence(v).endswith("60 sessions breach: attainment 95.0 % < 99.0 %, most missed errors (error rate 5.0 %)")


def test_on_the_baselines_limits_no_breach_and_no_step():
    held = SessionLevel(2, 16, (Figure("ttft_p50", 61.0, 75.0),), None, 3.5)
    ok = SessionVerdict("degradation", "ok", held, degradation=0.5, top=16)
    assert session_sentence(ok) == (
        "max sessions within +50 % of the 1-session baseline: at least 16 (the top step; TTFT p50 61.0 ms <= 75.0 ms; "
        "3.5 turns per session); extend --ladder to find the limit"
    )
    assert session_headline(ok) == "Max sessions within +50 %: at least 16"
    none = SessionVerdict("degradation", "breach", None, SessionLevel(0, 1, (Figure("error_rate", 0.2, 0.01),)))
    assert session_sentence(none) == (
        "max sessions within +50 % of the 1-session baseline: none; 1 session breaches: error rate 20.0 % > 1.0 %"
    )


def test_a_stopped_judgement_says_so_far_and_why():
    v = SessionVerdict("slo", "insufficient_data", HELD, None, None, 0.99, note="the step of 60 sessions finished only 3 requests")
    assert session_sentence(v).startswith("max sessions under SLO: 40 so far (")
    assert session_sentence(v).endswith("; the step of 60 sessions finished only 3 requests")


def test_figures_name_a_class_and_a_duration_over_a_minute():
    assert figure_text(Figure("chat:e2e_p90", 250.0, 300.0)) == "chat E2E p90 250 ms <= 300 ms"
    assert figure_text(Figure("tpot_p50", 30.0)) == "TPOT p50 30.0 ms"
    long = SessionVerdict("degradation", "ok", SessionLevel(0, 1, (), 125_000.0, 10.0))
    assert "session p50 2 min 05 s, 10.0 turns" in session_sentence(long)


def test_each_class_figure_is_compared_with_its_own_limit():
    failed = SessionLevel(1, 4, (Figure("agent:ttft_p99", 180.0, 150.0), Figure("coder:ttft_p99", 60.0, 100.0),
                                 Figure("attainment", 0.95, 0.99)))  # fmt: skip
    text = session_sentence(SessionVerdict("slo", "breach", None, failed, "ttft_ms", 0.99))
    assert text == ("max sessions under SLO: none; 4 sessions breach: attainment 95.0 % < 99.0 %, most missed ttft_ms "
                    "(agent TTFT p99 180 ms > 150 ms, coder TTFT p99 60.0 ms <= 100 ms)")  # fmt: skip
