"""The simulator's own flags: a value that is no number (nan, inf) is refused in one line, like a negative one."""

from __future__ import annotations

import argparse

import pytest

from llmload.errors import ConfigError
from llmload.sim.config import add_arguments, config_from_args


def parse(*argv: str):
    p = argparse.ArgumentParser()
    add_arguments(p)
    return config_from_args(p.parse_args(list(argv)))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--itl-ms", "nan"], "--itl-ms must be a number >= 0, got nan"),  # was accepted: "itl nan ms"
        (["--ttft-ms", "inf"], "--ttft-ms must be a number >= 0, got inf"),
        (["--ttft-ms", "-1"], "--ttft-ms must be a number >= 0, got -1"),
        (["--mode", "engine", "--time-scale", "inf"], "--time-scale must be a number > 0, got inf"),
        (["--mode", "engine", "--time-scale", "nan"], "--time-scale must be a number > 0, got nan"),
        (["--mode", "engine", "--step-base-ms", "nan"], "--step-base-ms must be a number >= 0, got nan"),
    ],
)
def test_a_value_that_is_no_number_is_one_line(argv, message):
    with pytest.raises(ConfigError) as e:
        parse(*argv)
    assert str(e.value) == f"sim: {message}"


def test_plain_values_pass():
    assert parse("--ttft-ms", "0", "--itl-ms", "2.5").itl_ms == 2.5
    assert parse("--mode", "engine", "--time-scale", "0.1").engine.time_scale == 0.1
