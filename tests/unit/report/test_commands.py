"""``llmload report`` on files that are not llmload summaries: one error line, exit code 2, no traceback."""

from __future__ import annotations

import json

import pytest

from llmload.report.commands import report_main


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"a": 1}, "not an llmload summary (no 'overall' key)"),
        ([1, 2], "not an llmload summary (no 'overall' key)"),
        ({"schema": "other/1", "overall": {}}, "not an llmload summary (schema 'other/1', expected llmload.summary/2)"),
        ({"schema": "llmload.summary/2", "overall": {"requests": "many"}}, "not a readable llmload summary (ValueError"),
        ({"schema": "llmload.summary/2", "overall": {}, "steps": "x"}, "not a readable llmload summary"),
        ({"schema": "llmload.summary/2", "overall": {}, "warnings": 5}, "not a readable llmload summary"),
        ({"schema": "llmload.summary/2", "overall": {}, "config": {"ladder": 5}}, "not a readable llmload summary"),
    ],
)
def test_not_a_summary_is_one_line_and_exit_2(tmp_path, capsys, doc, message):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(doc))
    assert report_main([str(path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("llmload report: error: ") and message in err[0], err
