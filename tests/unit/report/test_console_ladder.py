"""The console's ladder lines: a ladder over sessions counts sessions; an embeddings ladder says latency (E2E)."""

from __future__ import annotations

import io
from pathlib import Path

from llmload.report.console import render_summary
from llmload.report.data import build_report
from llmload.report.html_page import render_html
from llmload.report.markdown import write_markdown
from llmload.results import from_summary, to_summary
from llmload.rundir import Run
from tests.helpers.analysis_data import analyzed, stats, step, summary
from tests.helpers.session_data import session_result

LADDER = {1: 50.0, 4: 60.0, 8: 120.0}


def console(result) -> str:
    out = io.StringIO()
    render_summary(result, out)
    return out.getvalue()


def report(result) -> dict:
    return build_report(Run.from_summary(Path("."), "20270115T080000Z-agent", to_summary(result)))


def markdown(data: dict) -> str:
    out = io.StringIO()
    write_markdown(data, out)
    return out.getvalue()


def test_a_ladder_over_sessions_prints_sessions_and_the_max_sessions_verdict():
    text = console(session_result(LADDER))
    assert "\n  sessions  TTFT p50  TPOT p50  out tok/s  errors\n" in text
    line = next(x for x in text.splitlines() if x.startswith("verdict: "))
    assert line.startswith("verdict: max sessions within +50 % of the 1-session baseline: 4 (TTFT p50 60.1 ms <= 75.0 ms")
    assert "session p50 6.09 s, 4.0 turns); 8 sessions breach: TTFT p50 120 ms > 75.0 ms" in line
    assert line.endswith("; recommended gateway limit 1 request in flight")  # the sessions idle in their tool waits


def test_with_slos_the_verdict_is_on_them_and_the_baselines_limits_follow():
    lines = console(session_result(LADDER, slo_ms=150.0)).splitlines()
    i = next(i for i, x in enumerate(lines) if x.startswith("verdict: "))
    assert lines[i].startswith("verdict: max sessions under SLO: 1 (TTFT p99 50.0 ms <= 150 ms, attainment 100.0 % >= 99.0 %")
    assert "4 sessions breach: attainment 90.0 % < 99.0 %, most missed ttft_ms (TTFT p99 " in lines[i]
    assert lines[i + 1].startswith("  max sessions within +50 % of the 1-session baseline: 4 (")
    assert not any(x.startswith("SLO attainment >=") for x in lines)  # said by the verdict line


def test_a_mixed_run_stays_a_ladder_over_users():
    text = console(session_result(LADDER, single=True))
    assert "\n     users  TTFT p50" in text and "verdict: safe concurrency " in text and "sessions breach" not in text


def test_the_report_of_a_ladder_over_sessions_heads_with_the_max_sessions():
    data = report(session_result(LADDER, slo_ms=150.0))
    assert data["sessions"]["headline"] == "Max sessions under SLO: 1" and len(data["sessions"]["lines"]) == 2
    assert [s.get("sessions") for s in data["steps"]] == [1, 4, 8]
    md = markdown(data)
    assert "- **Max sessions under SLO: 1**.\n- max sessions under SLO: 1 (TTFT p99 50.0 ms <= 150 ms" in md
    assert "8 sessions breach: TTFT p50 120 ms > 75.0 ms; recommended gateway limit 1 request in flight.\n" in md
    assert "| 8 sessions (breach) |" in md and "Confidence band: 4–4 sessions (4 sessions either way" in md
    html = render_html(data)
    assert '<p class="headline">Max sessions under SLO: 1</p>' in html and "at 8 sessions" in html
    plain = report(session_result(LADDER, single=True))
    assert "sessions" not in plain and "sessions" not in plain["steps"][0] and "latency" not in plain


def _embeddings(index: int, users: int, latency: float, errors: int = 0) -> dict:
    entry = step(index, users, ttft=latency, tpot=None, e2e=latency, ok=20 - errors, errors=errors)
    entry["overall"]["inputs"] = {"requests": 20, "inputs": 80, "inputs_per_request": 4.0, "inputs_per_s": 8.0,
                                  "input_tokens": 8000, "input_tokens_per_s": 800.0}  # fmt: skip
    return entry


def _embeddings_run():
    s = summary([_embeddings(0, 1, 40.0), _embeddings(1, 4, 55.0), _embeddings(2, 8, 70.0)])
    s["classes"] = {"docs": {**stats(ttft=50.0, tpot=None, e2e=50.0), "inputs": {"requests": 60, "inputs": 240}}}
    s["overall"] = {**stats(ttft=50.0, tpot=None, e2e=50.0), "inputs": {"requests": 60, "inputs": 240}}
    return from_summary(analyzed(s))


def test_an_embeddings_ladder_says_latency_e2e_in_every_writer():
    result = _embeddings_run()
    text = console(result)
    assert "ladder, steady windows only (ms; lat = latency, E2E)\n     users   lat p50   lat p99  out tok/s" in text
    assert "verdict: safe concurrency 4 users; latency p50 (E2E) broke the limit at 8 users (70 > 60)" in text
    assert "latency p50 grade (E2E; excellent < 300 ms, " in text and "docs excellent (50 ms)" in text
    assert "e2e_p50" not in text and "TTFT p50 grade" not in text and "TTFT p50  TPOT p50" not in text
    data = report(result)
    assert data["latency"] == "e2e"
    md = markdown(data)
    assert "| step | latency p50 ms (E2E) | latency p99 ms (E2E) | out tok/s | errors |" in md
    assert "latency p50 (E2E) 40.0 ms; limits +50 %." in md and "latency p50 (E2E) broke the limit at 8 users" in md
    assert "TTFT" not in md and "TPOT" not in md
    html = render_html(data)
    assert "<th>latency p50 (E2E)</th>" in html and "Baseline latency p50 (E2E)" in html and "latency grade" in html
    assert "Latency (E2E) vs concurrency" in html and "TTFT" not in html and "TPOT" not in html
