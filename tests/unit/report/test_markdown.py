from __future__ import annotations

import io
from pathlib import Path

from llmload.report.data import build_report
from llmload.report.html_page import render_html
from llmload.report.markdown import PLACEHOLDER, write_markdown
from llmload.rundir import Run
from tests.helpers import samples


def md_of(summary) -> str:
    buf = io.StringIO()
    write_markdown(build_report(Run.from_summary(Path("."), "20270115T080000Z-default", summary)), buf)
    return buf.getvalue()


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_record_has_the_four_parts_in_order():
    text = md_of(samples.ladder_summary())
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## 1. Phenomenon", "## 2. Root cause", "## 3. Change", "## 4. Effect"]
    assert text.startswith("# Performance record: 20270115T080000Z-default\n")


def test_prefilled_from_verdict_and_findings():
    text = md_of(samples.ladder_summary())
    phen = section(text, "1. Phenomenon")
    assert "**Safe concurrency: 4 users** (recommended gateway limit 4 users)" in phen
    assert "TTFT p50 broke the limit at 8 users: 1,200 ms > 75.0 ms (baseline 50.0 ms)." in phen
    assert "| 8 users (breach) | 1,200 |" in phen and "| 1 user (baseline) |" in phen
    cause = section(text, "2. Root cause")
    assert "**Batch / admission cap** — layer: engine scheduler, confidence: high." in cause
    assert "- running flat at 4 while waiting grows" in cause and "`running_max` = 4" in cause
    assert "- Gateway queueing (low confidence, client)" in cause
    assert "Suggested: Raise --max-num-seqs." in section(text, "3. Change")


def test_effect_is_left_to_fill_with_the_before_values():
    effect = section(md_of(samples.ladder_summary()), "4. Effect")
    assert effect.count(PLACEHOLDER) >= 10
    assert "| safe concurrency (users) | 4 | _(to fill)_ | _(to fill)_ |" in effect
    assert "| TTFT p50 (ms, at 8 users) | 1,200 |" in effect  # measured where it broke
    assert "llmload compare runs/20270115T080000Z-default runs/<after> --markdown" in effect


def test_no_verdict_no_findings_and_plain_run():
    text = md_of(samples.ladder_summary(verdict=False, findings=False))
    assert f"No diagnosis finding in this run. Suspected cause: {PLACEHOLDER}" in text
    assert "| 16 users |" in text and "TTFT p50 (ms, at 16 users)" in text
    plain = md_of(samples.plain_summary())
    assert "A plain run (no concurrency ladder): 10 users for 40.0 s" in plain
    assert "safe concurrency" not in plain and "TTFT p50 (ms, whole run) | 300 |" in plain
    assert "Re-run the same load" in plain


def test_table_cells_are_escaped():
    s = samples.ladder_summary()
    s["findings"][0]["evidence_text"] = ["a | b"]
    assert "a | b" in md_of(s)  # bullet text is free text
    s["steps"][0]["users"] = 1
    assert md_of(s).count("\n| ") > 5


def test_reasoning_fact_only_where_some_request_reasoned():
    text = md_of(samples.reasoning_summary())
    assert "- reasoning: 40 requests; TTFO p50 420 ms (TTFT p50 300 ms counts reasoning), reasoning p50 120 ms" in text
    assert "2400 reasoning tokens (40 requests from usage, 0 counted); hidden reasoning in 2 requests" in text
    assert "reasoning" not in md_of(samples.plain_summary()).lower()


def test_the_slo_verdict_is_one_line_of_the_phenomenon():
    from llmload.report.data import build_report
    from llmload.report.markdown import write_markdown
    from llmload.results import to_summary
    from llmload.rundir import Run
    from tests.helpers.samples import slo_result

    out = io.StringIO()
    write_markdown(build_report(Run.from_summary(Path("."), "r", to_summary(slo_result()))), out)
    assert ("- SLOs: target 99.0 %: attainment >= target up to 1 user; first failed: ttft_ms at 4 users "
            "(fast: ttft_ms <= 1200; slow: ttft_ms <= 1200).") in out.getvalue()  # fmt: skip
def test_a_rate_ladder_is_named_by_its_rates_in_the_run_facts():
    md = md_of(samples.rate_ladder_summary())
    assert "- ladder: 1, 2, 4, 8 req/s at 16 users\n" in md and "- ladder: 16, 16" not in md
    assert "- Baseline (1 req/s): " in md and "Confidence band" not in md  # user counts, not rates
    plain = md_of(samples.ladder_summary())
    assert "- ladder: 1, 4, 8, 16 users\n" in plain and "- Baseline (1 user): " in plain and "Confidence band: 4–8 users" in plain


def test_a_rate_ladder_names_its_safe_rate_and_its_steps_by_rate():
    phen = section(md_of(samples.rate_ladder_summary()), "1. Phenomenon")
    assert "**Safe rate: 2 req/s**" in phen
    assert "TTFT p50 broke the limit at 4 req/s: 1,200 ms > 75.0 ms" in phen
    assert "| 4 req/s (breach) | 1,200 |" in phen and "| 1 req/s (baseline) |" in phen


def test_a_rate_ladder_record_words_its_limit_band_slos_and_effect_in_rates():
    s = samples.rate_ladder_summary()
    s["verdict"]["confidence"]["band_steps"] = [0, 1]
    s["verdict"]["slo"] = {"target": 0.99, "slos": {}, "per_class": {},
                           "overall": {"status": "breach", "safe_step": 1, "safe_users": 16, "failed_step": 2,
                                       "failed_users": 16, "failed_slo": "ttft_ms"}}  # fmt: skip
    md = md_of(s)
    phen = section(md, "1. Phenomenon")
    assert ("- **Safe rate: 2 req/s** (offered, at the -u cap of 16 users; recommended gateway rate limit 2 req/s).\n"
            in phen)  # fmt: skip
    assert "- SLOs: target 99.0 %: attainment >= target up to 2 req/s; first failed: ttft_ms at 4 req/s" in phen
    assert "- Confidence band: 1–2 req/s (steady windows agree within 10 %).\n" in phen
    effect = section(md, "4. Effect")
    assert "| safe rate (req/s) | 2.00 |" in effect and "safe concurrency" not in effect
    assert "| TTFT p50 (ms, at 4 req/s) | 1,200 |" in effect and "at 16 users" not in effect


def test_an_open_loop_record_lists_its_arrivals_and_a_closed_one_does_not():
    md = md_of(samples.open_loop_summary(trace=True))
    facts = md[: md.index("## 1. Phenomenon")]
    assert "- arrivals (open loop):\n  - process: trace replay" in facts
    assert "  - offered: 20 req/s (the trace's mean rate at its speedup)\n" in facts
    assert "  - client wait: p50 0.0900 ms, p99 45.0 ms\n  - send lag: p50 0.0800 ms, p99 0.900 ms\n" in facts
    assert "  - trace: mooncake.jsonl: 1,500 entries at speedup 2, span 75.0 s\n" in facts
    assert "  - sent: 1,200 of 1,500 entries (the run ended first" in facts and "  - block reuse: 43.2 %" in facts
    assert "Trace replay: mooncake.jsonl for 40.0 s, achieved 29.4 req/s; TTFT p50" in section(md, "1. Phenomenon")
    for closed in (samples.plain_summary(), samples.ladder_summary()):
        assert "arrivals" not in md_of(closed)
    assert "A plain run (no concurrency ladder): 10 users for 40.0 s;" in md_of(samples.plain_summary())


def test_a_ladder_over_sessions_names_its_ladder_and_its_steady_steps_in_sessions():
    from llmload.results import to_summary
    from tests.helpers.session_data import session_result

    s = to_summary(session_result({1: 50.0, 4: 60.0, 8: 120.0}))
    s["config"] = {**(s.get("config") or {}), "ladder": {"levels": [1, 4, 8], "step_s": 30, "warmup_s": 5}}
    s["steady"] = {"run": None, "steps": [{"users": n, "steady": True, "window_s": 20, "batches": 10} for n in (1, 4, 8)]}
    md = md_of(s)
    assert "- ladder: 1, 4, 8 sessions\n" in md
    assert "- steady state per step: 1 session yes (20 s, 10 batches); 4 sessions yes" in md
    html = render_html(build_report(Run.from_summary(Path("."), "r", s)))
    assert "<dd>1, 4, 8 sessions; 30 s per step, 5 s warm-up</dd>" in html
