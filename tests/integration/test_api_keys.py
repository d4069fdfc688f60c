"""API keys end to end, the real CLI: which key goes where, and none comes back out.

* The key sent: ``--api-key``, else ``$LLMLOAD_API_KEY``, else the API's own variable
  (``$OPENAI_API_KEY``; ``$ANTHROPIC_API_KEY`` for ``--api anthropic-messages``), against a
  simulator that requires the key: an OpenAI key in the environment is not sent to the
  Messages endpoint (it was, as ``x-api-key``: the run went through), so the pre-flight
  ``GET /v1/models`` is refused before any load.
* A key a server echoes (``tests/servers/faulty.py`` mode ``echo_key``: a gateway's 401
  "Incorrect API key provided: <key>") is in no output: console, ``--summary-json``,
  ``--records-jsonl``, the run directory and the three report files.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.harness import ROOT, run_cli

pytestmark = pytest.mark.integration

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
KEY_VARS = ("LLMLOAD_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def _only(monkeypatch, **env: str) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)  # the child inherits it


def _run(url: str, tmp_path, *extra: str):
    return run_cli(["--headless", "-u", "1", "-t", "2s", "--host", url, "--api", "anthropic-messages", "--model", "m",
                    "--only-summary", "--stop-timeout", "0", *extra], tmp_path)  # fmt: skip


def test_an_openai_key_is_not_sent_to_the_messages_endpoint(sim, tmp_path, monkeypatch):
    url = sim(ttft_ms=5, itl_ms=1, api_key=KEY)
    _only(monkeypatch, OPENAI_API_KEY=KEY)
    code, output, s = _run(url, tmp_path)
    assert code == 2 and s is None, output[-2000:]  # refused before any load: no key went with GET /v1/models
    assert "answered HTTP 401: the server refuses the API key" in output and KEY not in output


@pytest.mark.parametrize("env", [{"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": "sk-other-0000"},
                                 {"LLMLOAD_API_KEY": KEY, "ANTHROPIC_API_KEY": "sk-ant-other-0000"}])  # fmt: skip
def test_the_messages_endpoint_gets_llmload_api_key_else_anthropic_api_key(sim, tmp_path, monkeypatch, env):
    url = sim(ttft_ms=5, itl_ms=1, api_key=KEY)
    _only(monkeypatch, **env)
    code, output, s = _run(url, tmp_path)
    assert code == 0 and s is not None, output[-2000:]
    assert s["overall"]["ok"] > 0 and s["overall"]["errors"] == 0
    assert KEY not in output and KEY not in str(s)


def test_a_key_the_server_echoes_is_in_no_output(faulty, tmp_path, monkeypatch):
    _only(monkeypatch)
    records, runs = tmp_path / "records.jsonl", tmp_path / "runs"
    code, output, s = run_cli(
        ["--headless", "-u", "2", "-t", "2s", "--host", faulty, "--model", "echo_key", "--api-key", KEY,
         "--records-jsonl", str(records), "--runs-dir", str(runs), "--stop-timeout", "0"],
        tmp_path,
    )  # fmt: skip
    assert s is not None, output[-2000:]
    assert s["errors_by_kind"] == {"http_401": s["overall"]["errors"]} and s["overall"]["errors"] >= 2
    assert "Incorrect API key provided: [redacted]." in s["errors_examples"]["http_401"]  # the message is kept
    (run_dir,) = runs.iterdir()
    report = subprocess.run([sys.executable, "-m", "llmload", "report", str(run_dir)], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)  # fmt: skip
    assert report.returncode == 0, report.stderr
    files = [tmp_path / "summary.json", records, *run_dir.iterdir()]
    assert {"report.html", "report.md", "report.json", "summary.json", "findings.json"} <= {f.name for f in files}
    texts = {"console": output + report.stdout + report.stderr, **{str(f): f.read_text() for f in files}}
    for piece in (KEY, KEY[:8], KEY[-8:], KEY[10:30]):  # the key, and any 8 characters of it
        assert [name for name, text in texts.items() if piece in text] == [], piece
    assert all("[redacted]" in texts[str(f)] for f in (tmp_path / "summary.json", records, run_dir / "report.md"))
