"""The pre-flight, end to end: the real CLI exits with code 2 and one error line before any load.

Each bad input is one that a new user met (issue 16): a closed port with ``--model`` given,
``--host`` without a scheme, output paths into missing folders, a negative ``-u``, a busy
``--web-port`` or ``--master-bind-port``, ``--step-time abc`` without ``--ladder``. With ``--no-preflight`` the run
goes ahead against a closed port: the users back off (a few attempts, not a hot loop) and
the diagnosis names the unreachable target.
"""

from __future__ import annotations

import socket

import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_error(output: str) -> str:
    errors = [line for line in output.splitlines() if line.startswith("llmload: error:")]
    assert len(errors) == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    return errors[0]


def test_closed_port_with_model_is_exit_2_before_load(tmp_path, closed_port):
    code, output, summary = run_cli(
        ["--headless", "-u", "2", "-t", "10s", "--host", f"http://127.0.0.1:{closed_port}", "--model", "m"], tmp_path
    )
    assert code == 2
    line = _one_error(output)
    assert f"cannot connect to 127.0.0.1:{closed_port}" in line and "--no-preflight" in line
    assert summary is None
    assert "llmload summary" not in output


def test_host_without_scheme(tmp_path, sim):
    url = sim()
    bare = url.split("://", 1)[1]
    code, output, _ = run_cli(["--headless", "-u", "1", "-t", "3s", "--host", bare, "--model", "m"], tmp_path)
    assert code == 2
    assert f"--host {bare}: needs http:// or https://, e.g. --host http://{bare}" in _one_error(output)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--records-jsonl", "{tmp}/missing/records.jsonl"], "--records-jsonl {tmp}/missing/records.jsonl: the folder"),
        (["--timeseries-json", "{tmp}/missing/t.json"], "--timeseries-json {tmp}/missing/t.json: the folder"),
        (["--html", "{tmp}/missing/r.html"], "--html {tmp}/missing/r.html: the folder"),
        (["--runs-dir", "{tmp}/missing/deeper"], "--runs-dir {tmp}/missing/deeper: neither it nor its parent"),
        (["-u", "-3"], "-u/--users -3: must be >= 0"),
        (["--step-time", "abc"], "--step-time 'abc'"),
        (["--step-warmup", "later"], "--step-warmup 'later'"),
        (["--error-backoff", "fast"], "--error-backoff"),
    ],
)
def test_bad_flags_are_exit_2_before_load(tmp_path, sim, flags, message):
    url = sim()
    flags = [f.replace("{tmp}", str(tmp_path)) for f in flags]
    code, output, summary = run_cli(["--headless", "-t", "3s", "--host", url, *flags], tmp_path)
    assert code == 2, output[-2000:]
    assert message.replace("{tmp}", str(tmp_path)) in _one_error(output)
    assert "llmload summary" not in output


def test_summary_json_into_a_missing_folder_is_exit_2(tmp_path, sim):
    import subprocess
    import sys

    from tests.helpers.harness import ROOT

    target = tmp_path / "missing" / "s.json"
    p = subprocess.run([sys.executable, "-m", "llmload", "run", "--headless", "-t", "3s", "--host", sim(),
                        "--summary-json", str(target)], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert p.returncode == 2
    assert f"--summary-json {target}: the folder" in _one_error(p.stdout + p.stderr)


def test_busy_web_port_is_exit_2(tmp_path, sim):
    url = sim()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, output, _ = run_cli(["--web-host", "127.0.0.1", "--web-port", str(port), "--host", url,
                                   "--exporter-port", "0"], tmp_path, timeout=60)  # fmt: skip
    assert code == 2
    assert f"--web-port {port}: cannot listen on 127.0.0.1:{port}" in _one_error(output)


def test_busy_master_port_under_processes_is_exit_2_before_any_worker(tmp_path, sim):
    """Locust binds the master's port after forking its workers: on a busy port the master died in
    a traceback and the two workers were left waiting minutes for it (seen by hand)."""
    url = sim()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, output, summary = run_cli(["--headless", "--processes", "2", "--master-bind-port", str(port),
                                         "--host", url, "-u", "2", "-t", "5s", "--exporter-port", "0"],
                                        tmp_path, timeout=30)  # fmt: skip
    assert code == 2 and summary is None
    assert f"--master-bind-port {port}: cannot listen on 127.0.0.1:{port}" in _one_error(output)
    assert "Starting Locust" not in output  # nothing forked


def test_without_preflight_a_closed_port_backs_off_and_is_diagnosed(tmp_path, closed_port):
    host = f"http://127.0.0.1:{closed_port}"
    code, output, s = run_cli(
        ["--headless", "--only-summary", "-u", "2", "-r", "2", "-t", "5s", "--host", host, "--model", "m",
         "--no-preflight", "--stop-timeout", "1"],
        tmp_path,
    )  # fmt: skip
    assert s is not None, output[-3000:]
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert o["ok"] == 0 and o["errors"] >= 2
    assert o["requests"] <= 300, o["requests"]  # without backoff: ~17 000 in 5 s
    assert s["errors_by_kind"] == {"connection": o["errors"]}
    assert (
        "ConnectionRefusedError" in s["errors_examples"]["connection"]
        or "refused" in s["errors_examples"]["connection"].lower()
    )
    top = s["findings"][0]
    assert top["id"] == "target_unreachable", s["findings"]
    assert host in " ".join(top["evidence_text"]) or "127.0.0.1" in top["title"] + " ".join(top["evidence_text"])
    assert all(f["id"] != "load_generator_saturated" for f in s["findings"])
    assert f"finding: Target unreachable / every request fails: no connection to {host}" in output


def test_open_loop_with_a_conversation_profile_is_exit_2_before_load(tmp_path, sim):
    url = sim()
    profile = tmp_path / "chat.toml"
    profile.write_text('[[classes]]\nname = "chat"\nweight = 1\nturns = 3\ninput_tokens = 20\noutput_tokens = 8\n')
    flags = ["--headless", "-t", "3s", "--host", url, "--profile", str(profile), "--arrival", "poisson", "--rate", "2"]
    code, output, _ = run_cli(flags, tmp_path)
    assert code == 2, output[-2000:]
    line = _one_error(output)
    assert "has conversation classes (chat)" in line and "--arrival closed" in line
    assert "llmload summary" not in output
