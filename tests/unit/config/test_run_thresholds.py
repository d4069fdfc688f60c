"""``--threshold`` through the config door: parsed into RunConfig, recorded, one error line when bad; a
profile's ``thresholds`` likewise."""

from __future__ import annotations

import pytest

from llmload.config import RunConfig
from llmload.errors import ConfigError, ProfileError
from llmload.workload.profiles import profile_from_dict

CLASSES = [{"name": "short", "weight": 1, "input_tokens": 8, "output_tokens": 8},
           {"name": "long", "weight": 1, "input_tokens": 8, "output_tokens": 8}]  # fmt: skip


def test_repeated_and_comma_separated_thresholds_reach_the_config():
    c = RunConfig.from_values({"threshold": ["ttft_p99_ms<800", "error_rate<0.01,long:tpot_p50_ms<40"]})
    assert [t.expr for t in c.thresholds] == ["ttft_p99_ms<800", "error_rate<0.01", "long:tpot_p50_ms<40"]
    assert c.public_dict()["thresholds"] == ["ttft_p99_ms<800", "error_rate<0.01", "long:tpot_p50_ms<40"]
    plain = RunConfig.from_values({})
    assert plain.thresholds == () and "thresholds" not in plain.public_dict()


def test_a_bad_threshold_is_one_config_error_line():
    with pytest.raises(ConfigError) as e:
        RunConfig.from_values({"threshold": ["garbage"]})
    assert str(e.value).startswith("--threshold 'garbage': not a threshold") and "\n" not in str(e.value)


def test_a_profile_carries_its_thresholds_and_checks_their_classes():
    p = profile_from_dict({"name": "p", "classes": CLASSES, "thresholds": ["long:ttft_p99_ms<2000", "error_rate<0.01"]})
    assert [t.expr for t in p.thresholds] == ["long:ttft_p99_ms<2000", "error_rate<0.01"]
    assert p.to_dict()["thresholds"] == ["long:ttft_p99_ms<2000", "error_rate<0.01"]
    assert profile_from_dict(p.to_dict()).thresholds == p.thresholds
    assert "thresholds" not in profile_from_dict({"name": "q", "classes": CLASSES}).to_dict()
    with pytest.raises(ProfileError, match=r"profile '<dict>': thresholds 'mid:ttft_p99_ms<1': no class 'mid'"):
        profile_from_dict({"classes": CLASSES, "thresholds": ["mid:ttft_p99_ms<1"]})
    with pytest.raises(ProfileError, match=r"thresholds 'p99<1': unknown figure 'p99'"):
        profile_from_dict({"classes": CLASSES, "thresholds": ["p99<1"]})
