from __future__ import annotations

import socket

import pytest

from llmload.errors import ConfigError
from llmload.runtime.checks import check_master_port


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


@pytest.mark.parametrize(
    ("argv", "env", "where"),
    [
        (["--processes", "2", "--master-bind-port", "{port}"], {}, "127.0.0.1"),  # --processes binds locally
        (["--master", "--master-bind-port={port}"], {}, "*"),
        (["--processes", "2"], {"LOCUST_MASTER_BIND_PORT": "{port}"}, "127.0.0.1"),
        (["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", "{port}", "--my-own-flag", "x"], {},
         "127.0.0.1"),  # a custom locustfile's flag is Locust's business  # fmt: skip
    ],
)
def test_a_master_on_a_busy_port_is_one_line_before_locust_starts(busy_port, argv, env, where, monkeypatch):
    env = {k: v.format(port=busy_port) for k, v in env.items()}
    for k, v in env.items():
        monkeypatch.setenv(k, v)  # Locust's parser reads LOCUST_* from the process environment
    with pytest.raises(ConfigError) as e:
        check_master_port([x.format(port=busy_port) for x in argv], env)
    origin = "".join(f"{k}={v}: " for k, v in env.items())  # a port from the environment: named as set
    assert str(e.value).startswith(f"{origin}--master-bind-port {busy_port}: cannot listen on {where}:{busy_port}")
    assert "choose another --master-bind-port" in str(e.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["--master-bind-port", "{port}"],  # standalone: no master socket
        ["--worker", "--master-port", "{port}"],
        ["--processes", "2", "--worker", "--master-bind-port", "{port}"],  # a parent of workers only
        ["--processes", "2", "--master-bind-port", "{port}", "-u", "not-a-number"],  # Locust's parser says it
    ],
)
def test_no_master_socket_or_a_bad_value_is_left_alone(busy_port, argv, capsys):
    check_master_port([x.format(port=busy_port) for x in argv], {})
    assert capsys.readouterr().err == ""  # a bad value is said once, by Locust's own parse after this


def test_a_free_port_passes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    check_master_port(["--processes", "2", "--master-bind-port", str(port)], {})



def test_the_flags_and_workload_of_processes_are_checked_before_the_fork():
    from llmload.runtime.checks import check_before_fork

    args = ["--processes", "2", "--headless", "--host", "http://127.0.0.1:9"]
    with pytest.raises(ConfigError, match=r"^--arrival poisson: needs --rate"):
        check_before_fork([*args, "--arrival", "poisson"])
    with pytest.raises(ConfigError, match=r"^trace '/nope.jsonl': no such file"):
        check_before_fork([*args, "--trace", "/nope.jsonl"])
    check_before_fork(["--headless", "--arrival", "poisson"])  # no fork: the process checks its own flags
    check_before_fork([*args, "--arrival", "poisson", "--rate", "5"])


def test_a_bad_value_from_the_environment_names_the_variable_before_locust_starts(monkeypatch):
    """Locust's parser would say "argument --seed: invalid int value: 'abc'", naming a flag nobody typed."""
    from llmload.runtime.checks import check_before_fork

    monkeypatch.setenv("LLMLOAD_SEED", "abc")
    with pytest.raises(ConfigError, match=r"^LLMLOAD_SEED=abc: argument --seed: invalid int value: 'abc'$"):
        check_master_port(["--headless"], {})
    monkeypatch.delenv("LLMLOAD_SEED")
    check_master_port(["--headless", "--seed", "abc"], {})  # typed on the command line: Locust's parse says it
    monkeypatch.setenv("LLMLOAD_TTFT_TIMEOUT", "abc")
    with pytest.raises(ConfigError, match=r"^LLMLOAD_TTFT_TIMEOUT=abc: --ttft-timeout 'abc': must be a duration"):
        check_before_fork(["--processes", "2", "--headless", "--host", "http://127.0.0.1:9"])
