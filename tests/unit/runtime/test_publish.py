"""The run's outputs from one summary: the console table, --summary-json, the run directory."""

from __future__ import annotations

import io
import json
import logging

from llmload import rundir
from llmload.results import from_summary, to_summary
from llmload.runtime import publish as publish_module
from llmload.runtime.publish import publish
from tests.helpers import samples


def counted(monkeypatch) -> list[int]:
    """to_summary in the publisher counts its calls; the run directory's own may not run at all."""
    calls: list[int] = []

    def once(result):
        calls.append(1)
        return to_summary(result)

    def never(result):
        raise AssertionError("the run directory made a summary of its own")

    monkeypatch.setattr(publish_module, "to_summary", once)
    monkeypatch.setattr(rundir, "to_summary", never)
    return calls


def test_every_output_is_written_from_one_summary(monkeypatch, tmp_path):
    calls = counted(monkeypatch)
    result, out = from_summary(samples.plain_summary()), io.StringIO()
    path = tmp_path / "s.json"
    summary = publish(result, out, summary_json=str(path), runs_dir=str(tmp_path / "runs"), series=samples.timeseries,
                      host="http://user:secret@127.0.0.1:9")  # fmt: skip
    assert calls == [1] and summary == to_summary(result)  # as made: the run directory's additions are its own
    assert json.loads(path.read_text()) == summary
    (run,) = (tmp_path / "runs").iterdir()
    saved = json.loads((run / "summary.json").read_text())
    assert saved["overall"] == summary["overall"] and saved["timeseries"]["path"] == "timeseries.json"
    assert json.loads((run / "config.json").read_text())["host"] == "http://127.0.0.1:9"
    text = out.getvalue()
    assert text.index("llmload summary") < text.index(f"llmload: run saved in {run}")  # the table first


def test_without_files_only_the_table_is_written(monkeypatch, tmp_path):
    counted(monkeypatch)
    out = io.StringIO()
    publish(from_summary(samples.plain_summary()), out, summary_json="", runs_dir="")
    assert "llmload summary" in out.getvalue() and "run saved" not in out.getvalue()
    assert list(tmp_path.iterdir()) == []


def test_a_summary_json_that_cannot_be_written_is_one_error_line_and_the_rest_is_written(tmp_path, caplog):
    out = io.StringIO()
    bad = tmp_path / "missing" / "s.json"
    with caplog.at_level(logging.ERROR, logger="llmload"):
        summary = publish(from_summary(samples.plain_summary()), out, summary_json=str(bad), runs_dir=str(tmp_path / "runs"))
    (record,) = caplog.records
    assert record.message.startswith(f"llmload: cannot write --summary-json {bad}: ")
    assert summary["overall"] and len(list((tmp_path / "runs").iterdir())) == 1
