"""The report's "model" section of a fitted run: its engine.toml (written by `llmload fit` on a virtual-clock
ladder) as parameters, residuals and one chart; a run without engine.toml reports as before."""

from __future__ import annotations

import io
import json
import shutil

import orjson
import pytest
import tomllib

from llmload.capacity.capacity_command import fit_main
from llmload.capacity.drive import drive, step_bounds
from llmload.capacity.predict import to_record
from llmload.metrics.dump import record_to_line
from llmload.report import html_page, markdown
from llmload.report.commands import analysed, write_report
from llmload.report.data import build_report
from llmload.report.model_section import model_chart, model_html, model_markdown, model_report
from llmload.rundir import load_run
from llmload.sim.params import EngineParams
from tests.helpers.capacity import ladder
from tests.helpers.samples import plain_summary

TRUE = EngineParams(max_num_seqs=6, step_base_ms=20.0, prefill_tps=5000.0)


@pytest.fixture(scope="module")
def engine_toml(tmp_path_factory):
    """engine.toml of `llmload fit` on a ladder 1,3,10 run on the virtual clock (records + summary steps)."""
    run = tmp_path_factory.mktemp("fitted")
    w = ladder((1, 3, 10), step_s=40.0, warmup_s=5.0)
    (run / "records.jsonl").write_bytes(b"".join(record_to_line(to_record(s, False, 120.0)) for s in drive(TRUE, w)))
    steps = [{"index": i, "users": st.users, "started_at": 1.0 + a, "steady_from": 1.0 + b, "ended_at": 1.0 + c}
             for i, (st, (a, b, c)) in enumerate(zip(w.steps, step_bounds(w), strict=True))]  # fmt: skip
    (run / "summary.json").write_text(json.dumps({"schema": "llmload.summary/2", "steps": steps, "users_max": 10}))
    assert fit_main([str(run)]) == 0
    return run / "engine.toml"


def _report_dir(tmp_path, engine=None):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(plain_summary()))
    if engine is not None:
        shutil.copy(engine, run / "engine.toml")
    return run


def test_the_section_holds_every_parameter_with_its_provenance_and_every_residual(engine_toml):
    doc = tomllib.loads(engine_toml.read_text())
    m = model_report(engine_toml.parent)["model"]
    by_name = {p["name"]: p for p in m["params"]}
    assert set(by_name) == set(doc["provenance"]) - {"fitted_range"}
    assert by_name["max_num_seqs"]["how"] == "measured" and by_name["max_num_seqs"]["value"] == 6
    assert by_name["prefill_tps"]["how"] == "fitted"
    assert by_name["prefill_tps"]["uncertainty"].startswith("± ")
    assert by_name["host_overhead_ms"]["how"] == "assumed" and by_name["host_overhead_ms"]["uncertainty"]  # what pins it
    assert m["fitted_range"]["max_concurrency"] == 10 and m["requests"] == doc["requests"]
    q = doc["quality"]
    assert len(m["residuals"]) == 4 * len(q)  # TTFT and TPOT p50/p90 of each step and class
    first = m["residuals"][0]
    assert (first["step"], first["class"], first["metric"]) == (q[0]["step"], q[0]["class"], "ttft_p50")
    assert (first["measured_ms"], first["replayed_ms"], first["error"]) == (
        q[0]["ttft_p50_ms"], q[0]["ttft_p50_replayed_ms"], q[0]["ttft_p50_error"])  # fmt: skip
    chart = model_chart(m)
    assert chart is not None and [label for _, label in chart.x_ticks] == ["1", "3", "10"]
    assert [len(line.points) for line in chart.lines] == [3, 3]


def test_a_fitted_run_s_report_has_the_section_in_every_file(tmp_path, engine_toml, capsys):
    run = _report_dir(tmp_path, engine_toml)
    write_report(load_run(str(run)))
    html, md = (run / "report.html").read_text(), (run / "report.md").read_text()
    assert json.loads((run / "report.json").read_text())["model"]["params"]
    section = html[html.index("<h2>Engine model</h2>") :]
    assert "<table>" in section and "max_num_seqs" in section and "<svg" in section and "measured" in section
    assert "## Engine model" in md and "| parameter | value | how obtained |" in md
    assert "| max_num_seqs | 6 | measured |" in md and "| 0 (1 user) | (all) | TTFT p50 |" in md


def test_a_run_without_engine_toml_reports_exactly_as_before(tmp_path):
    run = _report_dir(tmp_path)
    assert model_report(run) == {}
    write_report(load_run(str(run)))
    before = build_report(analysed(load_run(str(run))))  # the pipeline without the model section
    for name, writer in (("report.html", html_page.write_html), ("report.md", markdown.write_markdown)):
        buf = io.StringIO()
        writer(before, buf)
        assert (run / name).read_text() == buf.getvalue(), name
    assert (run / "report.json").read_bytes() == orjson.dumps(before, option=orjson.OPT_INDENT_2) + b"\n"
    assert model_html(before) == "" and model_markdown(before) == []


def test_an_unreadable_engine_toml_is_one_warning_line_in_the_section(tmp_path):
    run = _report_dir(tmp_path)
    (run / "engine.toml").write_text("schema = [unclosed\n")
    m = model_report(run)
    assert m["model"]["error"].startswith(f"{run / 'engine.toml'}: not a readable engine file")
    assert "not a readable engine file" in model_html(m) and "<table>" not in model_html(m)
    assert model_markdown(m)[2].startswith("- warning: ")
