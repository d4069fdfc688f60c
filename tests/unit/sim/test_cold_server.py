"""``--cold-start-s S --cold-start-ttft-ms MS``: the fixed simulator's first seconds are slower to first token."""

from __future__ import annotations

import argparse

import pytest

from llmload.errors import ConfigError
from llmload.sim.cold_server import ColdStartModel
from llmload.sim.config import add_arguments, config_from_args
from llmload.sim.latency_model import FixedLatencyModel


def parse(*argv: str):
    p = argparse.ArgumentParser()
    add_arguments(p)
    return config_from_args(p.parse_args(list(argv)))


def test_requests_within_the_window_of_the_first_one_wait_longer_for_their_first_token():
    m = ColdStartModel(FixedLatencyModel(0.05, 0.005), window_s=5.0, extra_s=1.0)
    assert m.due(100.0, 0) == pytest.approx(101.05)  # the first request opens the window
    assert m.due(104.9, 0) == pytest.approx(105.95)
    assert m.due(104.9, 2) == pytest.approx(105.96)  # then its tokens at the plain ITL
    assert m.due(105.0, 0) == pytest.approx(105.05)  # warm from the window's end
    assert m.tokens_due(104.9, 105.9, 8) == 0 and m.tokens_due(104.9, 105.951, 8) == 1
    assert m.tokens_due(106.0, 106.051, 8) == 1
    assert m.duration(3) == pytest.approx(0.06)  # the plain model's, as the fixed engine reports


def test_the_flags_reach_the_config_and_bad_values_are_one_line():
    cfg = parse("--ttft-ms", "50", "--cold-start-s", "5", "--cold-start-ttft-ms", "1000")
    assert (cfg.cold_start_s, cfg.cold_start_ttft_ms, cfg.mode) == (5.0, 1000.0, "fixed")
    assert parse().cold_start_s == 0.0
    with pytest.raises(ConfigError, match="--cold-start-ttft-ms must be a number >= 0, got -1"):
        parse("--cold-start-s", "5", "--cold-start-ttft-ms", "-1")
    with pytest.raises(ConfigError, match="belong to the fixed-latency mode"):
        parse("--mode", "engine", "--cold-start-s", "5", "--cold-start-ttft-ms", "1000")
