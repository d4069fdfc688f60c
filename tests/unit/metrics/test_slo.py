"""SLOs: the --slo text and a profile's slo table, one-line errors, the class's limits winning key by key."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError, ProfileError
from llmload.metrics.slo import SLO, class_slos, parse_slo_text, slo_from_mapping


def test_the_flag_text_sets_each_key_it_names():
    assert parse_slo_text("ttft_ms=800,tpot_ms=25,e2e_ms=30000") == SLO(800.0, 25.0, 30000.0)
    assert parse_slo_text(" ttft_ms = 60 ") == SLO(ttft_ms=60.0)
    assert parse_slo_text("") is None and parse_slo_text(None) is None and parse_slo_text("  ") is None
    assert parse_slo_text("e2e_ms=1.5").to_dict() == {"e2e_ms": 1.5}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ttft=800", "unknown SLO 'ttft'; valid keys: ttft_ms, tpot_ms, e2e_ms"),
        ("ttft_ms=fast", "ttft_ms='fast' must be a number of milliseconds > 0"),
        ("ttft_ms=0", "ttft_ms='0' must be a number of milliseconds > 0"),
        ("ttft_ms=-5", "must be a number of milliseconds > 0"),
        ("ttft_ms=inf", "must be a number of milliseconds > 0"),
        ("ttft_ms", "'ttft_ms' is not key=value"),
        ("ttft_ms=800,,tpot_ms=2", "'' is not key=value"),
        ("ttft_ms=8,ttft_ms=9", "ttft_ms given twice"),
    ],
)
def test_bad_flag_text_is_one_line_naming_the_part_and_the_valid_keys(text, says):
    with pytest.raises(ConfigError) as e:
        parse_slo_text(text)
    msg = str(e.value)
    assert says in msg and msg.startswith(f"--slo {text!r}") and "\n" not in msg


def test_a_profile_table_and_its_errors():
    assert slo_from_mapping({"ttft_ms": 300, "tpot_ms": 25}, "x") == SLO(300.0, 25.0)
    with pytest.raises(ProfileError, match=r"^p: classes\[0\]\.slo: unknown SLO 'itl_ms'; valid keys"):
        slo_from_mapping({"itl_ms": 3}, "p: classes[0].slo", ProfileError)
    with pytest.raises(ProfileError, match="expected a table of limits"):
        slo_from_mapping(300, "p: classes[0].slo", ProfileError)
    with pytest.raises(ProfileError, match="must be a number"):
        slo_from_mapping({"ttft_ms": True}, "p", ProfileError)


def test_the_class_wins_key_by_key_over_the_flag():
    flag = SLO(ttft_ms=800.0, tpot_ms=25.0)
    assert SLO(ttft_ms=300.0).over(flag) == SLO(300.0, 25.0, None)
    assert SLO(e2e_ms=9.0).over(None) == SLO(e2e_ms=9.0)
    slos = class_slos({"short": SLO(ttft_ms=300.0), "long": None}, flag)
    assert slos == {"short": SLO(300.0, 25.0), "long": flag}


def test_no_limit_anywhere_means_no_slos():
    assert class_slos({"a": None, "b": SLO()}, None) is None
    assert class_slos({"a": None}, SLO()) is None
    assert class_slos({"a": SLO(ttft_ms=1.0), "b": None}, None) == {"a": SLO(ttft_ms=1.0), "b": SLO()}
