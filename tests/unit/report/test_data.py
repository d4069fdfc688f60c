"""The report's data: an agent class's turn kinds join its conversation-turn rows (markdown and HTML tables)."""

from __future__ import annotations

import io
from pathlib import Path

from llmload.metrics.latency import Latency
from llmload.metrics.parts.agents import AgentFigures
from llmload.metrics.parts.turns import TurnResult
from llmload.report.data import build_report
from llmload.report.markdown import write_markdown
from llmload.rundir import Run
from tests.helpers import samples


def report_of(summary):
    return build_report(Run.from_summary(Path("."), "20270115T080000Z-default", summary))


def test_an_agent_class_gets_a_row_per_turn_kind_and_other_classes_none():
    summary = samples.plain_summary()
    lat = {"ttft": Latency(4, 40.0, 38.0, 50.0, 55.0, 55.0, 30.0)}
    kinds = {"tool_turn": TurnResult(4, 4, 2000, latency=lat), "answer_turn": TurnResult(2, 2, 1400, latency=lat)}
    name = next(iter(summary["classes"]))
    summary["classes"][name].update(AgentFigures(kinds).to_dict())
    r = report_of(summary)
    rows = {c["name"]: c["by_turn"] for c in r["classes"]}
    assert [t["turn"] for t in rows[name]] == ["tool turns", "answer turns"]
    assert rows[name][0]["input_tokens_mean"] == 500.0 and rows[name][0]["ttft_p50"] == 38.0
    assert all(not turns for other, turns in rows.items() if other != name)
    buf = io.StringIO()
    write_markdown(r, buf)
    assert "| tool turns | 4 | 500 |" in buf.getvalue()


def test_a_summary_without_agents_gives_the_same_rows_as_before():
    r = report_of(samples.plain_summary())
    assert all(c["by_turn"] == [] for c in r["classes"])
