"""The run's workload door: a profile, or a trace and its profile, read once per file version."""

from __future__ import annotations

import os

import pytest

from llmload.config import RunConfig
from llmload.errors import ProfileError
from llmload.runtime.workload import run_workload
from llmload.workload.traces import TRACE_CLASS


def test_a_profile_run_has_no_trace():
    w = run_workload(RunConfig.from_values({"profile": "default"}))
    assert w.trace is None and w.profile.name == "default"


def test_a_trace_is_read_once_per_version_of_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2}\n')
    config = RunConfig.from_values({"trace": str(path), "trace_limit": 5})
    first = run_workload(config)
    assert first.profile.class_names == (TRACE_CLASS,) and len(first.trace) == 1
    assert run_workload(config) is first  # the coordinator, each load process, the pre-flight: one read
    path.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2}\n{"timestamp": 5, "input_length": 3, "output_length": 1}\n')
    os.utime(path, ns=(1, 1))  # a different version, whatever the clock's resolution
    assert len(run_workload(config).trace) == 2


def test_a_missing_trace_is_one_line(tmp_path):
    with pytest.raises(ProfileError, match=r"^trace '.*nope.jsonl': no such file; check the path$"):
        run_workload(RunConfig.from_values({"trace": str(tmp_path / "nope.jsonl")}))


@pytest.mark.parametrize(
    ("extra", "what"),
    [
        ('images = {count = 1, width = 28, height = 28}\n', "images"),
        ('turns = 2\ntools = [{type = "function", function = {name = "f", parameters = {type = "object"}}}]\n'
         'tool_calls = {per_turn = 1, result_tokens = 5}\n', "tools"),
    ],
)
def test_images_or_tools_on_a_text_only_api_are_refused_before_any_load(tmp_path, extra, what):
    path = tmp_path / "p.toml"
    path.write_text('[[classes]]\nname = "v"\nweight = 1\ninput_tokens = 5\noutput_tokens = 4\n' + extra)
    assert run_workload(RunConfig.from_values({"profile": str(path), "api": "openai-chat"})).profile.classes[0].name == "v"
    for api in ("openai-completions", "openai-embeddings"):
        with pytest.raises(ProfileError, match=rf"class 'v' sends {what}.*--api {api} cannot carry"):
            run_workload(RunConfig.from_values({"profile": str(path), "api": api}))
