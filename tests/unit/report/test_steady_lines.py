"""The steady-state verdicts in the console and the report files."""

from __future__ import annotations

import copy
import io
import json

from llmload.cli import main
from llmload.report.steady_lines import render_steady, steady_lines
from tests.helpers import samples

STEADY = {"steady": True, "reason": "no trend in TTFT, TPOT or in-flight", "window_s": 58, "batches": 10}
MOVING = {"steady": False, "reason": "in-flight still climbing (+30.0/min, mean 10.2)", "window_s": 20, "batches": 10}


def test_console_lines_for_a_run_and_for_steps():
    out = io.StringIO()
    render_steady({"run": STEADY, "steps": []}, out)
    assert out.getvalue() == "steady state: yes (58 s, 10 batches)\n"
    assert steady_lines({"run": MOVING, "steps": []}) == [
        "steady state: NO: in-flight still climbing (+30.0/min, mean 10.2)"]  # fmt: skip
    steps = [{"users": 1, **STEADY}, {"users": 8, **MOVING}]
    assert steady_lines({"run": None, "steps": steps}) == [
        "steady state per step: 1 users yes (58 s, 10 batches); 8 users NO: in-flight still climbing (+30.0/min, "
        "mean 10.2)"]  # fmt: skip
    short = {"steady": None, "reason": "window too short to tell (4 s; a trend test needs >= 10 s)"}
    assert steady_lines({"run": short}) == ["steady state: not judged: window too short to tell (4 s; a trend test needs >= 10 s)"]
    assert steady_lines(None) == []


def test_report_files_show_it(tmp_path, capsys):
    s = copy.deepcopy(samples.plain_summary())
    s["steady"] = {"run": MOVING, "steps": []}
    (tmp_path / "summary.json").write_text(json.dumps(s))
    assert main(["report", str(tmp_path)]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "report.json").read_text())["steady"]["run"]["steady"] is False
    assert "- steady state: NO: in-flight still climbing" in (tmp_path / "report.md").read_text()
    assert "<h2>Steady state</h2>" in (tmp_path / "report.html").read_text()


def test_a_ladder_over_sessions_names_its_steps_in_sessions():
    from llmload.report.steady_lines import steady_html

    steps = [{"users": 1, **STEADY}, {"users": 8, **MOVING}]
    assert steady_lines({"run": None, "steps": steps}, "sessions")[0].startswith(
        "steady state per step: 1 session yes (58 s, 10 batches); 8 sessions NO: in-flight")
    block = {"run": None, "steps": steps}
    assert "1 session yes" in steady_html({"steady": block, "steps": [{"index": 0, "users": 1, "sessions": 1}]})
    assert "1 users yes" in steady_html({"steady": block, "steps": [{"index": 0, "users": 1}]})  # as it always read
