"""The ``llmload`` command line: ``llmload demo`` checks its options before it starts anything; ``--version``."""

from __future__ import annotations

import sys

import pytest

from llmload import cli


@pytest.fixture
def no_simulator(monkeypatch):
    """Fail the test if the demo got as far as starting the simulator."""
    import llmload.sim

    def start(*_a, **_k):
        raise AssertionError("the simulator was started")

    monkeypatch.setattr(llmload.sim, "start_sim_process", start)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run-time", "abc"], "--run-time 'abc': must be a duration > 0 such as 30s, 5m or 1h30m"),
        (["--run-time", "0s"], "--run-time '0s': must be a duration > 0"),
        (["--users", "-3"], "--users -3: must be >= 1"),  # was Locust's "-r/--spawn-rate: must be > 0"
        (["--profile", "nosuch"], "--profile: unknown profile 'nosuch'"),
        (["--summary-json", "/proc/llmload-nope/s.json"], "--summary-json /proc/llmload-nope/s.json: cannot create its folder"),
    ],
)
def test_demo_refuses_bad_options_in_one_line_before_the_simulator_starts(no_simulator, capsys, args, message):
    assert cli.main(["demo", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"llmload demo: error: {message}") and err.count("\n") == 1 and "Traceback" not in err


def test_a_reader_that_leaves_early_is_no_traceback(tmp_path):
    """`llmload compare A B | head -2`: the pipe closes before the table is written (BrokenPipeError)."""
    import json
    import subprocess
    import sys

    from tests.helpers import samples

    path = tmp_path / "s.json"
    path.write_text(json.dumps(samples.ladder_summary()))
    proc = subprocess.Popen([sys.executable, "-m", "llmload", "compare", str(path), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    proc.stdout.close()  # before the child (still importing) writes a line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1 and "Traceback" not in err and "BrokenPipeError" not in err, err


def test_bad_flags_under_processes_are_one_line_before_locust_forks(capsys, monkeypatch):
    """Each of the N forked workers and the master said the same error line (3 lines for --processes 2)."""
    import socket

    import locust.main

    def forks(*_a, **_k):
        raise AssertionError("Locust's main started (it would fork the test process)")

    monkeypatch.setattr(locust.main, "main", forks)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])  # free again once closed: never Locust's 5557
    args = ["--processes", "2", "--master-bind-port", port, "--headless", "--host", "http://127.0.0.1:9"]
    assert cli.run([*args, "--slo", "ttft=3"]) == 2  # returned before Locust's main (which would fork)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["llmload: error: --slo 'ttft=3': unknown SLO 'ttft'; valid keys: ttft_ms, tpot_ms, e2e_ms "
                   "(e.g. ttft_ms=800,tpot_ms=25)"]  # fmt: skip


def test_a_negative_duration_after_its_flag_goes_to_locust_joined_to_it(monkeypatch):
    """``--ttft-timeout -5s`` was argparse's "expected one argument"; joined, llmload's check says what is wrong."""
    import locust.main

    seen: list[list[str]] = []
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(locust.main, "main", lambda: seen.append(list(sys.argv)))
    assert cli.run(["--headless", "--ttft-timeout", "-5s", "-u", "1"]) == 0
    assert seen[0][-4:] == ["--headless", "--ttft-timeout=-5s", "-u", "1"]


@pytest.mark.parametrize("arg", ["--version", "version"])
def test_version_names_llmload_locust_and_python(arg, capsys):
    from importlib.metadata import version

    assert cli.main([arg]) == 0
    out = capsys.readouterr().out
    assert out == f"llmload {version('llmload')} (locust {version('locust')}, python {sys.version.split()[0]})\n"
