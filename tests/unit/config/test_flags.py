"""The one flag table: Locust's parser and the configs are both made from it, each default written once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from locust.argument_parser import get_parser

from llmload.config import FLAGS, ExporterConfig, LadderConfig, RunConfig, add_arguments, read
from llmload.config.flags import OVERRIDABLE, attach_negative_values, defaults, local_master_default
from llmload.errors import ConfigError


def parser(**overrides):
    p = get_parser()
    add_arguments(p, overrides)
    return p


def test_every_flag_reaches_locusts_parser_with_its_table_default(monkeypatch):
    for f in FLAGS:
        monkeypatch.delenv(f.env_var, raising=False)
    monkeypatch.delenv("LLMLOAD_PROFILE", raising=False)
    opts = parser().parse_args([])
    values = read(opts)
    for f in FLAGS:
        assert values[f.dest] == f.default, f.name
    assert values["llmload_default_profile"] == "default" and values["profile"] is None  # Locust's own --profile
    text = parser().format_help()
    for f in FLAGS:
        assert f.name in text


def test_flags_names_are_unique_and_env_vars_follow_the_name():
    dests = [f.dest for f in FLAGS]
    assert len(dests) == len(set(dests))
    assert all(f.env_var == "LLMLOAD_" + f.dest.upper() for f in FLAGS)  # --api-key's is $LLMLOAD_API_KEY too


def test_web_ui_form_shows_the_flags_marked_for_it_and_masks_the_secret():
    actions = {a.dest: a for a in parser()._actions}
    for f in FLAGS:
        assert getattr(actions[f.dest], "include_in_web_ui", True) == f.web_ui, f.name
    assert actions["api_key"].is_secret is True


def test_the_start_forms_labels_show_defaults_not_a_placeholder(monkeypatch):
    """Locust's form labels are the raw help: no ``%(default)s`` there, and ``--help`` still reads the same."""
    from locust import events
    from locust.argument_parser import ui_extra_args_dict

    for f in FLAGS:
        monkeypatch.delenv(f.env_var, raising=False)
    monkeypatch.setattr("sys.argv", ["locust"])  # Locust reads the form's values from the command line
    listener = lambda parser, **_: add_arguments(parser, {"ladder": "1,2"})  # noqa: E731 (what activate() registers)
    events.init_command_line_parser.add_listener(listener)
    try:
        form = ui_extra_args_dict(["--host", "http://127.0.0.1:9"])
    finally:
        events.init_command_line_parser.remove_listener(listener)
    assert {f.dest for f in FLAGS if f.web_ui} <= set(form)
    assert not [k for k, o in form.items() if "%(" in (o["help_text"] or "")]
    assert form["step_time"]["help_text"].endswith("Default: 5m") and form["step_time"]["default_value"] == "5m"
    assert form["degradation"]["help_text"].endswith("Default: 0.5")
    text = " ".join(parser(ladder="1,2").format_help().split())
    assert "each ladder step holds its user count. Default: 5m" in text and "%(" not in text


def test_environment_variables_set_flags(monkeypatch):
    monkeypatch.setenv("LLMLOAD_API", "openai-completions")
    monkeypatch.setenv("LLMLOAD_STEP_TIME", "2m")
    values = read(parser().parse_args([]))
    assert values["api"] == "openai-completions" and values["step_time"] == "2m"


def test_a_locustfile_overrides_only_the_documented_defaults(monkeypatch):
    monkeypatch.delenv("LLMLOAD_PROFILE", raising=False)
    monkeypatch.delenv("LLMLOAD_LADDER", raising=False)
    values = read(parser(api="stream", ladder="1,2", profile="quadrants").parse_args([]))
    assert (values["api"], values["ladder"], values["llmload_default_profile"]) == ("stream", "1,2", "quadrants")
    assert set(OVERRIDABLE) == {"api", "profile", "ladder"}
    with pytest.raises(TypeError, match="no overridable default seed"):
        add_arguments(get_parser(), {"seed": 3})


def test_a_missing_flag_takes_its_table_default():
    values = read(SimpleNamespace(model="m"))
    assert values == {**defaults(), "model": "m"}
    c = RunConfig.from_values(values)
    assert c.ttft_timeout == 60.0 and c.stall_timeout == 30.0 and c.request_timeout == 600.0
    assert c.exporter == ExporterConfig() and c.exporter.port == 9646 and c.collect.interval_s == 2.0
    assert c.runs_dir == "runs" and c.sse_parser == "fast" and c.degradation == 0.5


def test_run_config_holds_the_ladder_collect_and_exporter_parts():
    c = RunConfig.from_values(read(SimpleNamespace(model="m", ladder="1,4", step_time="1m", step_warmup="5s",
                                                   engine_metrics=["http://e:8000"], exporter_port=0)))  # fmt: skip
    assert c.ladder == LadderConfig(levels=(1, 4), step_s=60.0, warmup_s=5.0)
    assert c.collect.engine_urls == ("http://e:8000/metrics",) and c.exporter.port == 0
    assert c.public_dict()["ladder"] == {"levels": [1, 4], "step_s": 60.0, "warmup_s": 5.0, "stop_on_breach": False,
                                         "baseline_requests": 0}  # fmt: skip


def _locust_parser():
    from locust.argument_parser import get_empty_argument_parser, setup_parser_arguments

    p = get_empty_argument_parser()
    setup_parser_arguments(p)
    return p


def test_web_auth_replaces_locusts_removed_flag_and_is_never_in_the_form():
    p = _locust_parser()
    add_arguments(p)
    ns = p.parse_args(["--web-auth", "admin:pw"])
    assert ns.web_auth == "admin:pw"
    action = next(a for a in p._actions if a.dest == "web_auth")
    assert getattr(action, "include_in_web_ui", True) is False


@pytest.mark.parametrize(
    ("argv", "env", "given", "expected"),
    [
        (["--processes", "4"], {}, [], "127.0.0.1"),
        (["--processes=4"], {}, [], "127.0.0.1"),
        ([], {"LOCUST_PROCESSES": "2"}, [], "127.0.0.1"),
        (["--processes", "4"], {}, ["--master-bind-host", "0.0.0.0"], "0.0.0.0"),
        ([], {}, [], "*"),
    ],
)
def test_master_binds_locally_only_under_processes_unless_chosen(argv, env, given, expected):
    p = _locust_parser()
    add_arguments(p)
    local_master_default(p, argv, env)
    assert p.parse_args(given).master_bind_host == expected


@pytest.mark.parametrize(
    ("argv", "env", "given", "expected"),
    [
        (["--processes", "2", "--master-bind-port", "15601"], {}, [], 15601),
        (["--processes=2", "--master-bind-port=15602"], {}, [], 15602),
        (["--processes", "2"], {"LOCUST_MASTER_BIND_PORT": "15603"}, [], 15603),
        (["--processes", "2", "--master-bind-port", "15601"], {}, ["--master-port", "15700"], 15700),
        (["--processes", "2"], {}, [], 5557),
        (["--master-bind-port", "15601"], {}, [], 5557),  # a master for workers elsewhere: theirs to choose
    ],
)
def test_forked_workers_connect_to_the_port_the_master_binds(argv, env, given, expected):
    p = _locust_parser()
    add_arguments(p)
    local_master_default(p, argv, env)
    assert p.parse_args(given).master_port == expected


def test_a_negative_value_after_its_flag_reaches_llmloads_own_check(monkeypatch):
    for f in FLAGS:
        monkeypatch.delenv(f.env_var, raising=False)
    argv = ["--ttft-timeout", "-5s", "--rate", "-1e3", "--model", "-u", "3", "--no-preflight", "--", "--seed", "-2"]
    assert attach_negative_values(argv) == [
        "--ttft-timeout=-5s", "--rate=-1e3", "--model", "-u", "3", "--no-preflight", "--", "--seed", "-2",
    ]  # fmt: skip
    with pytest.raises(SystemExit):  # argparse alone: "--ttft-timeout: expected one argument"
        parser().parse_args(["--ttft-timeout", "-5s"])
    opts = parser().parse_args(attach_negative_values(["--ttft-timeout", "-5s"]))
    with pytest.raises(ConfigError, match=r"^--ttft-timeout '-5s': must be a duration >= 0"):
        RunConfig.from_values(read(opts))
