"""The command line: bad input is one clear error line and a non-zero exit, before any load."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tests.helpers.harness import ROOT, run_cli

pytestmark = pytest.mark.integration


@pytest.fixture
def listener():
    """A bare TCP listener standing in for the target: it records whether anyone connected."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    s.setblocking(False)
    yield f"http://127.0.0.1:{s.getsockname()[1]}", s
    s.close()


def no_connection_was_made(sock) -> bool:
    try:
        sock.accept()
    except BlockingIOError:
        return True
    return False


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--api", "grpc"], "--api 'grpc': unknown endpoint adapter; choose one of"),
        (["--profile", "nope"], "nope"),
        (["--ttft-timeout", "soon"], "--ttft-timeout 'soon'"),
        (["--extra-body", "{x"], "--extra-body: not valid JSON"),
    ],
)
def test_bad_input_exits_before_any_request(listener, tmp_path, flags, message):
    url, sock = listener
    code, output, summary = run_cli(["--headless", "-u", "1", "-t", "3s", "--host", url, "--model", "m", *flags], tmp_path)
    assert code == 2
    errors = [line for line in output.splitlines() if line.startswith("llmload: error:")]
    assert len(errors) == 1, output
    assert message in errors[0]
    assert summary is None
    assert no_connection_was_made(sock)


def test_unreachable_server_without_model_is_a_clear_error(tmp_path):
    code, output, _ = run_cli(["--headless", "-u", "1", "-t", "3s", "--host", "http://127.0.0.1:9"], tmp_path)
    assert code == 2
    assert "llmload: error: --host http://127.0.0.1:9: cannot connect to 127.0.0.1:9 (Connection refused)" in output


def test_model_is_discovered_and_the_api_key_never_printed(sim, tmp_path):
    url = sim(ttft_ms=5, itl_ms=1)
    code, output, s = run_cli(
        ["--headless", "-u", "2", "-r", "2", "-t", "3s", "--host", url, "--api-key", "sk-very-secret-key",
         "--profile", "quadrants", "--max-tokens-cap", "32", "--only-summary"],
        tmp_path,
    )  # fmt: skip
    assert code == 0, output[-2000:]
    assert s["config"]["model"] == "llmload-sim"
    assert s["config"]["api_key_set"] is True
    assert "sk-very-secret-key" not in output
    assert "sk-very-secret-key" not in (tmp_path / "summary.json").read_text()
    assert set(s["classes"]) == {"short_short", "long_short", "short_long", "long_long"}
    assert s["overall"]["ok"] > 0 and s["overall"]["errors"] == 0


def test_locustfile_from_the_repository_works_with_plain_locust(sim, tmp_path):
    url = sim(ttft_ms=5, itl_ms=1)
    out = tmp_path / "s.json"
    p = subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(ROOT / "locustfiles/completions_stream.py"), "--headless",
         "-u", "2", "-r", "2", "-t", "3s", "--host", url, "--max-tokens-cap", "16", "--summary-json", str(out),
         "--json-file", str(tmp_path / "locust")],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads(out.read_text())
    assert s["config"]["api"] == "openai-completions"
    assert s["overall"]["ok"] > 0
    # Locust's own statistics (written at exit): one E2E entry per finished request, no TTFT ones
    # (--locust-ttft-rows adds them), so its request and failure counts are llmload's.
    entries = json.loads((tmp_path / "locust.json").read_text())
    assert {e["method"] for e in entries} == {"E2E"}, entries
    assert sum(e["num_requests"] for e in entries) == s["overall"]["ok"] + s["overall"]["errors"], s["overall"]
    assert sum(e["num_failures"] for e in entries) == s["overall"]["errors"]
