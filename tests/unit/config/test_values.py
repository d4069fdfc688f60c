"""Value parsers: user counts of the ladder, JSON objects, numbers from the web UI form, URLs, credentials."""

from __future__ import annotations

import pytest

from llmload.config.values import (
    parse_duration,
    parse_json_object,
    parse_levels,
    parse_number,
    parse_selector,
    parse_urls,
    parse_web_auth,
)
from llmload.errors import ConfigError


def test_ladder_levels():
    assert parse_levels("1, 5,10") == (1, 5, 10)
    for bad, message in (("a,b", "must be user counts"), ("0,2", "at least 1 user"), ("4,2", "must increase"), ("", "at least 1")):
        with pytest.raises(ConfigError, match=message):
            parse_levels(bad)


def test_json_objects_numbers_urls_and_selectors():
    assert parse_json_object("", "--x") == {} and parse_json_object('{"a": 1}', "--x") == {"a": 1}
    with pytest.raises(ConfigError, match="^--x: must be a JSON object"):
        parse_json_object("[1]", "--x")
    assert parse_number("", int, "--n") is None and parse_number("5", int, "--n") == 5 and parse_number(2.5, float, "--n") == 2.5
    with pytest.raises(ConfigError, match="^--n '5.5': must be an integer$"):
        parse_number("5.5", int, "--n")
    assert parse_urls("http://a:1,http://a:1/", "--u", metrics_path=True) == ("http://a:1/metrics",)
    with pytest.raises(ConfigError, match="must be an http"):
        parse_urls(["ftp://x"], "--u", metrics_path=False)
    assert parse_selector('{job="vllm"}', "--s") == 'job="vllm"'
    with pytest.raises(ConfigError, match="PromQL label matchers"):
        parse_selector("job=vllm", "--s")


@pytest.mark.parametrize("bad", ["admin", ":pw", "admin:", ":"])
def test_malformed_web_auth_is_one_line_without_the_password(bad):
    with pytest.raises(ConfigError, match=r"^--web-auth: expected USER:PASSWORD") as e:
        parse_web_auth(bad)
    assert "\n" not in str(e.value)
    assert parse_web_auth("") is None and parse_web_auth("a:pw:with:colons") == ("a", "pw:with:colons")


@pytest.mark.parametrize("bad", ["-5s", "-1m30s", "-250ms", "-3"])
def test_a_negative_duration_says_it_must_be_at_least_zero(bad):
    with pytest.raises(ConfigError, match=rf"^--ttft-timeout '{bad}': must be a duration >= 0 such as 30s"):
        parse_duration(bad, "--ttft-timeout")
    with pytest.raises(ConfigError, match=r"^--ttft-timeout '-': must be a duration such as 30s"):
        parse_duration("-", "--ttft-timeout")  # no number: not "off"
