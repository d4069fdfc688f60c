"""Where a flag's value came from, in front of its error line: an environment variable or a config file."""

from __future__ import annotations

import pytest
from locust.argument_parser import get_parser

from llmload.config import FLAGS, RunConfig, add_arguments, read
from llmload.config.origin import locate, located, origins
from llmload.errors import ConfigError, ProfileError


@pytest.fixture
def parsed(monkeypatch, tmp_path):
    """Locust's parser with llmload's flags after it parsed ``argv``, with ``env`` set and a --config file."""
    for f in FLAGS:
        monkeypatch.delenv(f.env_var, raising=False)
    monkeypatch.chdir(tmp_path)  # no locust.conf of the machine's

    def parse(argv, env=None, conf=""):
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        if conf:
            (tmp_path / "my.conf").write_text(conf)
            argv = ["--config", str(tmp_path / "my.conf"), *argv]
        parser = get_parser()
        add_arguments(parser)
        return parser, parser.parse_known_args(argv)[0]

    return parse


def test_a_bad_value_from_the_environment_names_the_variable(parsed):
    parser, opts = parsed(["--headless"], {"LLMLOAD_TTFT_TIMEOUT": "abc", "LOCUST_USERS": "-3"})
    where = origins(parser)
    assert (
        where["--ttft-timeout"] == "LLMLOAD_TTFT_TIMEOUT=abc" and where["-u"] == where["--users"] == "LOCUST_USERS=-3"
    )
    assert "--headless" not in where  # given on the command line
    with pytest.raises(ConfigError) as e, located(parser):
        RunConfig.from_values(read(opts))
    assert str(e.value) == (
        "LLMLOAD_TTFT_TIMEOUT=abc: --ttft-timeout 'abc': must be a duration such as 30s, 2m, 1h30m or 250ms"
    )
    assert locate("-u/--users -3: must be >= 0", where) == "LOCUST_USERS=-3: -u/--users -3: must be >= 0"


def test_a_bad_value_from_a_config_file_names_the_file_and_the_command_line_wins(parsed, tmp_path):
    parser, opts = parsed(["--stall-timeout", "xyz"], conf="ttft-timeout = abc\nstall-timeout = 5s\n")
    where = origins(parser)
    assert where["--ttft-timeout"] == f"ttft-timeout = abc in {tmp_path / 'my.conf'}"
    assert "--stall-timeout" not in where  # the command line's value is the one used
    assert locate("--stall-timeout 'xyz': must be a duration", where) == "--stall-timeout 'xyz': must be a duration"
    assert locate("argument --ttft-timeout: invalid", where).startswith("ttft-timeout = abc in ")  # argparse's line


def test_a_secret_value_is_never_shown_only_where_it_was_set(parsed):
    parser, _ = parsed([], {"LLMLOAD_WEB_AUTH": "admin-s3cret", "LLMLOAD_API_KEY": "sk-123"})
    where = origins(parser)
    assert where["--web-auth"] == "LLMLOAD_WEB_AUTH (environment variable)"
    assert where["--api-key"] == "LLMLOAD_API_KEY (environment variable)"
    assert "s3cret" not in str(where) and "sk-123" not in str(where)


def test_a_line_without_a_flag_or_without_a_parser_is_left_as_it_is(parsed):
    parser, _ = parsed([], {"LLMLOAD_PROFILE": "nope"})
    assert locate("profile 'x.toml': classes: needs at least one", origins(parser)).startswith("profile 'x.toml'")
    with pytest.raises(ProfileError, match=r"^profile 'x'"), located(None):  # the same exception, unchanged
        raise ProfileError("profile 'x': bad")
    assert origins(object()) == {} and origins(get_parser()) == {}  # no ConfigArgParse parser / not parsed yet
