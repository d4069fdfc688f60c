"""``llmload report`` on files that are not llmload summaries: one error line, exit code 2, no traceback."""

from __future__ import annotations

import json

import pytest

from llmload.redact import MASK
from llmload.report.commands import compare_main, report_main
from tests.helpers.samples import plain_summary


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


def test_a_key_of_the_environment_is_masked_in_every_report_file(tmp_path, monkeypatch, capsys):
    """A run saved before llmload masked echoed keys: the report files do not copy the key out of it."""
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLMLOAD_API_KEY", key)
    s = plain_summary()
    s["errors_by_kind"] = {"http_401": 1}
    s["errors_examples"] = s["overall"]["errors_examples"] = {"http_401": f"Incorrect API key provided: {key}."}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(s))
    assert report_main([str(path), "--out", str(tmp_path / "out")]) == 0
    files = sorted((tmp_path / "out").iterdir())
    assert [f.name for f in files] == ["report.html", "report.json", "report.md"]
    for f in files:
        text = f.read_text()
        assert key[:8] not in text and key[-8:] not in text, f.name
    assert any(MASK in f.read_text() for f in files)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("llmload.summary/3", "summary schema llmload.summary/3 is newer than this llmload reads "
                              "(llmload.summary/1, llmload.summary/2): upgrade llmload"),
        ("llmload.summary/x", "unknown summary schema 'llmload.summary/x' (this llmload reads llmload.summary/1, "
                              "llmload.summary/2)"),
        ("llmload.summary/0", "unknown summary schema 'llmload.summary/0'"),
    ],
)  # fmt: skip
def test_a_summary_of_a_schema_version_it_does_not_know_is_refused_in_one_line(tmp_path, capsys, schema, message):
    """It was read as if it were this version (a report of keys that may mean something else)."""
    known, path = tmp_path / "known.json", tmp_path / "summary.json"
    s = plain_summary()  # llmload.summary/1: still read
    known.write_text(json.dumps(s))
    path.write_text(json.dumps({**s, "schema": schema}))
    assert report_main([str(known), "--out", str(tmp_path / "known")]) == 0
    assert compare_main([str(known), str(known)]) == 0
    capsys.readouterr()
    for main, argv in ((report_main, [str(path), "--out", str(tmp_path)]), (compare_main, [str(known), str(path)])):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("llmload ") and f"{path}: {message}" in err[0], err
    assert not (tmp_path / "report.html").exists()
