"""``--repeat N`` / ``--repeat-pause``: taken off the command line, checked before any load."""

from __future__ import annotations

import pytest

from llmload.config.repeat import split_repeat
from llmload.errors import ConfigError

BASE = ["--headless", "-u", "2", "-t", "5s", "--host", "http://127.0.0.1:9", "--profile", "dir/tiny.toml"]


def test_no_repeat_is_none_and_one_is_a_plain_run():
    assert split_repeat(BASE) is None
    assert split_repeat([*BASE, "--repeat", "1"]) is None
    one = split_repeat([*BASE, "--repeat", "1", "--repeat-pause", "1s"])
    assert one.runs == 1 and list(one.args) == BASE


def test_repeat_takes_its_flags_and_where_the_runs_go_off_the_command_line():
    cfg = split_repeat([*BASE, "--repeat=3", "--repeat-pause", "2s", "--seed", "40", "--summary-json", "s.json",
                        "--runs-dir=out"])  # fmt: skip
    assert (cfg.runs, cfg.pause_s, cfg.seed, cfg.summary_json, cfg.runs_dir) == (3, 2.0, 40, "s.json", "out")
    assert list(cfg.args) == BASE and cfg.profile == "tiny" and cfg.host == "http://127.0.0.1:9"
    fresh = split_repeat([*BASE, "--repeat", "2", "--seed", "-1", "--no-run-dir", "--summary-json", "x.json"])
    assert fresh.seed is None and fresh.runs_dir == "" and fresh.pause_s == 10.0 and "--no-run-dir" not in fresh.args


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--repeat", "0"], "--repeat '0': must be a whole number >= 1"),
        (["--repeat", "two"], "--repeat 'two'"),
        (["--repeat"], "--repeat: needs a value"),
        (["--repeat", "2", "--repeat-pause", "soon"], "--repeat-pause"),
        (["--repeat-pause", "5s"], "only with --repeat N"),
        (["--repeat", "2", "--worker"], "--repeat with --worker: not supported"),
        (["--repeat", "2", "--seed", "x"], "--seed 'x'"),
        (["--repeat", "2", "--no-run-dir"], "give --summary-json PATH"),
    ],
)
def test_bad_input_is_one_clear_error(extra, says):
    with pytest.raises(ConfigError, match=None) as e:
        split_repeat([*BASE, *extra])
    assert says in str(e.value)


def test_repeat_is_headless_only():
    with pytest.raises(ConfigError, match="add --headless"):
        split_repeat(["-u", "2", "--repeat", "2"])
