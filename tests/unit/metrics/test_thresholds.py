"""Threshold expressions: what parses, and one error line for what does not."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError, ProfileError
from llmload.metrics.thresholds import FIGURES, Threshold, check_classes, parse_threshold, parse_thresholds


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("ttft_p99_ms<800", Threshold("ttft_p99_ms<800", "ttft_p99_ms", "<", 800.0)),
        ("tpot_p50_ms <= 40", Threshold("tpot_p50_ms <= 40", "tpot_p50_ms", "<=", 40.0)),
        ("error_rate<0.01", Threshold("error_rate<0.01", "error_rate", "<", 0.01)),
        ("goodput.attainment>=0.99", Threshold("goodput.attainment>=0.99", "goodput.attainment", ">=", 0.99)),
        ("output_tokens_per_s>1e3", Threshold("output_tokens_per_s>1e3", "output_tokens_per_s", ">", 1000.0)),
        ("long:ttft_p99_ms<2000", Threshold("long:ttft_p99_ms<2000", "ttft_p99_ms", "<", 2000.0, "long")),
    ],
)
def test_expressions_parse(text, want):
    assert parse_threshold(text) == want


def test_a_threshold_knows_its_latency_and_judges_a_value():
    t = parse_threshold("long:ttft_p99_ms<2000")
    assert t.latency == ("ttft", "p99") and t.met(1999.0) and not t.met(2000.0)
    assert parse_threshold("error_rate<=0.01").latency is None and parse_threshold("requests>=10").met(10)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("garbage", "not a threshold; write [CLASS:]FIGURE OP NUMBER"),
        ("ttft_p99_ms=800", "not a threshold"),
        ("ttft_p98_ms<800", "unknown figure 'ttft_p98_ms'; one of ttft_p50_ms"),
        ("ttft_p99_ms<fast", "the limit 'fast' is not a number"),
        ("ttft_p99_ms<inf", "is not a number"),
    ],
)
def test_a_bad_expression_is_one_line_naming_it(text, says):
    with pytest.raises(ConfigError) as e:
        parse_threshold(text)
    msg = str(e.value)
    assert msg.startswith(f"--threshold {text!r}: ") and says in msg and "\n" not in msg


def test_lists_comma_separated_values_and_the_profiles_error_type():
    got = parse_thresholds(["ttft_p99_ms<800,error_rate<0.01", "tpot_p50_ms<40"])
    assert [t.expr for t in got] == ["ttft_p99_ms<800", "error_rate<0.01", "tpot_p50_ms<40"]
    assert parse_thresholds(None) == () and parse_thresholds("") == ()
    with pytest.raises(ProfileError, match=r"^profile 'x': thresholds 'nope'"):
        parse_thresholds(["nope"], "profile 'x': thresholds", ProfileError)
    with pytest.raises(ProfileError, match="expected a list of expressions"):
        parse_thresholds(42, "profile 'x': thresholds", ProfileError)


def test_a_class_prefix_must_name_a_class():
    ts = parse_thresholds("long:ttft_p99_ms<2000")
    check_classes(ts, ["short", "long"])
    with pytest.raises(ConfigError, match=r"no class 'long' in the profile \(its classes: a, b\)"):
        check_classes(ts, ["a", "b"])


def test_every_latency_percentile_and_the_issue_examples_are_figures():
    for f in ("ttft_p99_ms", "tpot_p50_ms", "itl_p90_ms", "e2e_p99_ms", "error_rate", "goodput.attainment",
              "output_tokens_per_s"):  # fmt: skip
        assert f in FIGURES
