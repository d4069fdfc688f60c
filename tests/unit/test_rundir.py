from __future__ import annotations

import io
import json
import logging

import pytest

from llmload.config import RunConfig, read
from llmload.results import from_summary, to_summary
from llmload.rundir import RunDirError, create_run_dir, load_run, run_dir_name, save_run, scrub, write_run_dir
from tests.helpers import samples

T = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def test_name_is_utc_timestamp_and_profile():
    assert run_dir_name(T) == "20270115T080000Z"
    assert run_dir_name(T, "default") == "20270115T080000Z-default"
    assert run_dir_name(T, "profiles/my chat.toml") == "20270115T080000Z-my-chat"
    assert run_dir_name(T, "../") == "20270115T080000Z"


def test_a_trace_replay_is_named_after_its_trace_not_the_unused_profile_flag(tmp_path):
    s = samples.plain_summary()
    s["config"].update(profile="default", arrival={"mode": "trace", "rate": None, "trace": {"file": "/d/mooncake.jsonl"}})
    s["profile"] = {"name": "trace:mooncake", "classes": [{"name": "trace", "weight": 1}]}
    assert write_run_dir(tmp_path, from_summary(s)).name.endswith("Z-trace-mooncake")  # was "...Z-default"
    assert write_run_dir(tmp_path, from_summary(samples.plain_summary())).name.endswith(
        "-" + samples.plain_summary()["config"]["profile"])  # fmt: skip


def test_two_runs_in_the_same_second_get_two_directories(tmp_path):
    paths = [create_run_dir(tmp_path / "runs", T, "default") for _ in range(3)]
    assert [p.name for p in paths] == ["20270115T080000Z-default", "20270115T080000Z-default-2", "20270115T080000Z-default-3"]
    assert all(p.is_dir() for p in paths)


def test_layout_and_contents(tmp_path):
    s = samples.ladder_summary()
    s["timeseries"] = {"path": "../elsewhere/summary.timeseries.json", "schema": "llmload.timeseries/1", "polls": 20}
    s = to_summary(from_summary(s))  # as llmload writes it
    path = write_run_dir(tmp_path, from_summary(s), timeseries=samples.timeseries(), host="http://user:pw@gw:8000")
    assert path.name == "20270115T080000Z-default"
    assert sorted(p.name for p in path.iterdir()) == ["config.json", "findings.json", "summary.json", "timeseries.json", "verdict.json"]
    summary = json.loads((path / "summary.json").read_text())
    assert summary["verdict"] == s["verdict"] and summary["steps"] == s["steps"]
    assert summary["timeseries"] == {"path": "timeseries.json", "schema": "llmload.timeseries/1", "polls": 20}
    config = json.loads((path / "config.json").read_text())
    assert config["host"] == "http://gw:8000" and config["config"]["model"] == "test-model" and config["profile"]["name"] == "default"
    assert json.loads((path / "verdict.json").read_text()) == {"baseline": s["baseline"], "verdict": s["verdict"]}
    assert json.loads((path / "findings.json").read_text()) == s["findings"]
    assert json.loads((path / "timeseries.json").read_text())["t"][:2] == [T, T + 2]
    assert not list(path.glob("*.tmp"))


def test_plain_run_without_series(tmp_path):
    s = samples.plain_summary()
    s["timeseries"] = {"path": "x.timeseries.json"}
    path = write_run_dir(tmp_path, from_summary(s))
    assert not (path / "timeseries.json").exists()
    assert "timeseries" not in json.loads((path / "summary.json").read_text())
    assert json.loads((path / "verdict.json").read_text()) == {"baseline": None, "verdict": None}
    assert json.loads((path / "findings.json").read_text()) == []


def test_api_key_never_written(tmp_path):
    config = RunConfig.from_values(read(None))
    config = type(config)(**{**{f: getattr(config, f) for f in config.__slots__}, "api_key": samples.SECRET})
    s = samples.with_secret(samples.ladder_summary())
    s["config"].update(config.public_dict())
    path = write_run_dir(tmp_path, from_summary(s), timeseries=samples.timeseries())
    for p in path.iterdir():
        assert samples.SECRET not in p.read_text()
    assert json.loads((path / "config.json").read_text())["config"]["api_key_set"] is True


def test_scrub():
    assert scrub({"a": 1, "API_KEY": "x", "n": [{"password": "p", "b": 2}]}) == {"a": 1, "n": [{"b": 2}]}


def test_save_run_prints_one_line(tmp_path):
    out = io.StringIO()
    path = save_run(from_summary(samples.plain_summary()), str(tmp_path / "runs"), out, series=samples.timeseries, host=None)
    assert path is not None and (path / "timeseries.json").exists()
    assert out.getvalue() == f"llmload: run saved in {path} (llmload report {path} writes report.html)\n"
    assert save_run(from_summary(samples.plain_summary()), "", out) is None


def test_save_run_failure_is_one_error_line_not_a_crash(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out = io.StringIO()
    with caplog.at_level(logging.ERROR, logger="llmload"):
        assert save_run(from_summary(samples.plain_summary()), str(blocker / "runs"), out) is None
        assert save_run(from_summary(samples.plain_summary()), str(tmp_path), out, series=lambda: 1 / 0) is None
    assert out.getvalue() == ""
    assert len(caplog.records) == 2 and all("cannot write the run directory" in r.getMessage() for r in caplog.records)


def test_load_run_from_directory_or_summary_file(tmp_path):
    path = write_run_dir(tmp_path, from_summary(samples.ladder_summary()), timeseries=samples.timeseries())
    run = load_run(path)
    assert run.name == path.name and run.path == path and run.timeseries["schema"] == "llmload.timeseries/1"
    assert run.config["schema"] == "llmload.config/1"
    by_file = load_run(path / "summary.json")
    assert by_file.name == path.name and by_file.timeseries is not None
    other = tmp_path / "before.json"
    other.write_text(json.dumps(samples.plain_summary()))
    assert load_run(other).name == "before" and load_run(other).timeseries is None


def test_load_run_takes_optional_files_of_another_shape_as_absent(tmp_path):
    """A hand-edited "timeseries" key, or a timeseries.json / config.json that is no object: was an AttributeError."""
    path = write_run_dir(tmp_path, from_summary(samples.ladder_summary()), timeseries=samples.timeseries())
    summary = json.loads((path / "summary.json").read_text())
    for value in ("timeseries.json", 5, {"path": 7}):
        summary["timeseries"] = value
        (path / "summary.json").write_text(json.dumps(summary))
        assert load_run(path).timeseries is not None  # found at its usual name
    (path / "timeseries.json").write_text("[]")
    (path / "config.json").write_text('"x"')
    run = load_run(path)
    assert run.timeseries is None and run.config is None


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such run directory"), ("{", "not valid JSON"), ("[1]", "not an llmload summary"), ("dir", "no summary.json here")],
)
def test_load_run_errors(tmp_path, content, message):
    target = tmp_path / "x"
    if content == "dir":
        target.mkdir()
    elif content is not None:
        target.write_text(content)
    with pytest.raises(RunDirError, match=message):
        load_run(target)


def test_flags_and_environment(monkeypatch):
    from locust.argument_parser import get_parser

    from llmload.config import add_arguments

    monkeypatch.delenv("LLMLOAD_RUNS_DIR", raising=False)  # tests/conftest.py points it at a temp dir
    monkeypatch.delenv("LLMLOAD_NO_RUN_DIR", raising=False)
    parser = get_parser()
    add_arguments(parser)
    runs_dir = lambda *args: RunConfig.from_values(read(parser.parse_args(list(args)))).runs_dir  # noqa: E731
    assert runs_dir() == "runs"
    assert runs_dir("--runs-dir", "/tmp/r") == "/tmp/r"
    assert runs_dir("--no-run-dir") == ""
    monkeypatch.setenv("LLMLOAD_RUNS_DIR", "/tmp/env-runs")
    assert runs_dir() == "/tmp/env-runs" and runs_dir("--runs-dir", "/tmp/r") == "/tmp/r"
    monkeypatch.setenv("LLMLOAD_NO_RUN_DIR", "true")
    assert runs_dir() == ""
