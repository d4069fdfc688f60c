from __future__ import annotations

from types import SimpleNamespace

import pytest

from llmload.config import RunConfig, parse_duration, read
from llmload.errors import ConfigError


def opts(**kw):
    base = dict(api="openai-chat", model="m", profile="default", seed=7, extra_body="", max_tokens_cap=0)
    return read(SimpleNamespace(**{**base, **kw}))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("2m", 120.0), ("1h30m", 5400.0), ("250ms", 0.25), ("1.5", 1.5), ("0", None), ("", None)],
)
def test_durations(text, seconds):
    assert parse_duration(text, "--x") == seconds


@pytest.mark.parametrize("bad", ["abc", "10x", "5 minutes", "-3", "3m20"])
def test_bad_durations_name_the_flag(bad):
    with pytest.raises(ConfigError, match=r"^--stall-timeout "):
        parse_duration(bad, "--stall-timeout")


def test_valid_options_build_a_frozen_config_without_the_secret_in_its_repr():
    c = RunConfig.from_values(
        opts(api_key="sk-secret-123", extra_body='{"top_p": 0.5}', max_tokens_cap=64, web_auth="admin:pw-456")
    )
    assert c.adapter.model == "m" and c.adapter.extra_body == {"top_p": 0.5} and c.max_tokens_cap == 64
    assert c.web_auth == ("admin", "pw-456")
    assert "sk-secret-123" not in repr(c) and "pw-456" not in repr(c)
    assert "sk-secret-123" not in str(c.public_dict()) and c.public_dict()["api_key_set"] is True
    assert "pw-456" not in str(c.public_dict())
    with pytest.raises(AttributeError):
        c.api = "x"  # frozen


@pytest.mark.parametrize(
    ("api", "given", "env", "key"),
    [
        ("openai-chat", "sk-flag", {"OPENAI_API_KEY": "sk-env"}, "sk-flag"),
        ("openai-chat", "", {"OPENAI_API_KEY": "sk-env"}, "sk-env"),
        ("openai-responses", "", {"ANTHROPIC_API_KEY": "ant"}, ""),
        ("anthropic-messages", "sk-flag", {"ANTHROPIC_API_KEY": "ant"}, "sk-flag"),
        ("anthropic-messages", "", {"ANTHROPIC_API_KEY": "ant"}, "ant"),
        # an API's own variable is read for that API only: $OPENAI_API_KEY never goes to Anthropic
        ("anthropic-messages", "", {"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "ant"}, "ant"),
        ("anthropic-messages", "", {"OPENAI_API_KEY": "sk-openai"}, ""),
        ("openai-chat", "", {"ANTHROPIC_API_KEY": "ant"}, ""),
    ],
)
def test_api_key_comes_from_the_flag_else_the_adapters_variable(monkeypatch, api, given, env, key):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert RunConfig.from_values(opts(api=api, api_key=given)).api_key == key


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"api": "nope"}, r"--api 'nope': unknown endpoint adapter; choose one of .*openai-chat"),
        ({"extra_body": "{bad"}, r"--extra-body: not valid JSON"),
        ({"extra_body": "[1]"}, r"--extra-body: must be a JSON object"),
        ({"max_tokens_cap": -1}, r"--max-tokens-cap -1"),
        ({"inputs_per_request": 0}, r"--inputs-per-request 0: must be >= 1"),
        ({"inputs_per_request": "x"}, r"--inputs-per-request 'x': must be an integer"),
        ({"endpoint_path": "v1/x"}, r"--endpoint-path 'v1/x': must start with '/'"),
        ({"ttft_timeout": "soon"}, r"--ttft-timeout 'soon'"),
        ({"web_auth": "nocolon"}, r"^--web-auth: expected USER:PASSWORD"),  # with or without a web UI
    ],
)
def test_invalid_options_give_one_line_errors(kw, message):
    with pytest.raises(ConfigError, match=message) as e:
        RunConfig.from_values(opts(**kw))
    assert "\n" not in str(e.value)


def test_seed_is_drawn_when_not_given_and_kept_when_given():
    assert RunConfig.from_values(opts(seed=123)).seed == 123
    a, b = RunConfig.from_values(opts(seed=-1)).seed, RunConfig.from_values(opts(seed=-1)).seed
    assert a > 0 and b > 0 and a != b


def test_numbers_from_the_web_ui_form_arrive_as_text():
    c = RunConfig.from_values(opts(temperature="", max_tokens_cap="64", seed="5"))
    assert c.adapter.temperature is None and c.max_tokens_cap == 64 and c.seed == 5
    assert RunConfig.from_values(opts(temperature="0.7")).adapter.temperature == 0.7
    with pytest.raises(ConfigError, match=r"^--temperature 'warm': must be a number$"):
        RunConfig.from_values(opts(temperature="warm"))


def test_slo_flag_is_parsed_once_into_the_config_and_recorded():
    from llmload.metrics.slo import SLO

    c = RunConfig.from_values(opts(slo="ttft_ms=800,tpot_ms=25,e2e_ms=30000", slo_attainment="0.95"))
    assert c.slo == SLO(800.0, 25.0, 30000.0) and c.slo_attainment == 0.95
    assert c.public_dict()["slo"] == {"ttft_ms": 800.0, "tpot_ms": 25.0, "e2e_ms": 30000.0}
    plain = RunConfig.from_values(opts())
    assert plain.slo is None and plain.slo_attainment == 0.99 and plain.public_dict()["slo"] is None
    assert RunConfig.from_values(opts(slo_attainment="")).slo_attainment == 0.99  # web UI form left empty


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"slo": "ttft=800"}, r"^--slo 'ttft=800': unknown SLO 'ttft'; valid keys: ttft_ms, tpot_ms, e2e_ms"),
        ({"slo": "tpot_ms=abc"}, r"^--slo 'tpot_ms=abc': tpot_ms='abc' must be a number of milliseconds > 0"),
        ({"slo_attainment": 1.5}, r"^--slo-attainment 1.5: must be a share in \(0, 1\]"),
        ({"slo_attainment": 0}, r"^--slo-attainment 0: must be a share"),
        ({"slo_attainment": "most"}, r"^--slo-attainment 'most': must be a number$"),
    ],
)
def test_bad_slo_flags_give_one_line_errors(kw, message):
    with pytest.raises(ConfigError, match=message) as e:
        RunConfig.from_values(opts(**kw))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("text", "bounds"),
    [("100ms:5s", (0.1, 5.0)), ("250ms", (0.25, 5.0)), ("10s", (10.0, 10.0)), ("off", (None, None)), ("", (None, None))],
)
def test_error_backoff_flag(text, bounds):
    c = RunConfig.from_values(opts(error_backoff=text))
    assert (c.error_backoff.min_s, c.error_backoff.max_s) == bounds


def test_error_backoff_is_on_by_default():
    c = RunConfig.from_values(opts())
    assert (c.error_backoff.min_s, c.error_backoff.max_s) == (0.1, 5.0)
    assert c.public_dict()["error_backoff_s"] == [0.1, 5.0]


@pytest.mark.parametrize("bad", ["abc", "5s:1s", "0:1s", "1s:", "-1s"])
def test_bad_error_backoff_is_one_line_naming_the_flag(bad):
    with pytest.raises(ConfigError, match=r"^--error-backoff [^\n]*(e\.g\.|such as) [^\n]*$"):
        RunConfig.from_values(opts(error_backoff=bad))
