"""The API key never reaches the web UI: not in the start page, not in any endpoint.

``llmload run`` in web UI mode with a key from ``--api-key``, ``$OPENAI_API_KEY`` or ``$LLMLOAD_API_KEY``;
every page and endpoint the UI serves is fetched (before, during and after a run started
from the form) and searched for the key. A run started with the form's key field left
empty still sends the key it was started with (checked on the server side).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.harness import ROOT
from tests.integration.test_web_ui import free_port, stop_process, wait_for_http

pytestmark = pytest.mark.integration

KEY = "sk-llmload-test-7d1f0c2a9b"
# Every GET route of Locust's web UI plus llmload's own (assets are static files).
PAGES = (
    "/",
    "/stats/requests",
    "/stats/report",
    "/stats/report?download=1&theme=dark",
    "/stats/requests/csv",
    "/stats/requests_full_history/csv",
    "/stats/failures/csv",
    "/exceptions",
    "/exceptions/csv",
    "/tasks",
    "/logs",
    "/worker-count",
    "/llmload/live",
    "/llmload/series",
    "/llmload/charts",
    "/metrics",
)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    authorizations: list[str]


class _Chat(BaseHTTPRequestHandler):
    """A minimal streaming chat server that remembers each request's Authorization header."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # /v1/models, /health
        body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.authorizations.append(self.headers.get("Authorization", ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = {"choices": [{"index": 0, "delta": {"content": " tok"}, "finish_reason": None}]}
        for _ in range(3):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
        self.wfile.write(b"data: " + json.dumps(finish).encode() + b"\n\ndata: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def chat_server():
    server = _Server(("127.0.0.1", 0), _Chat)
    server.authorizations = []
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield server
    server.shutdown()
    server.server_close()


def _fetch(url: str, data: bytes | None = None) -> str:
    with urllib.request.urlopen(url, data=data, timeout=10) as r:
        return r.read().decode("utf-8", "replace")


def _get(url: str) -> tuple[int, str]:
    """Status and body, error answers included (their bodies must not leak either)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def _assert_no_key(base: str) -> None:
    statuses = {}
    for page in PAGES:
        statuses[page], text = _get(base + page)
        assert KEY not in text, f"the API key is in {page}"
    assert statuses["/"] == statuses["/llmload/live"] == statuses["/stats/report"] == 200, statuses


@pytest.mark.parametrize("source", ["flag", "env", "LLMLOAD_API_KEY"])
def test_api_key_never_reaches_the_web_ui(source, chat_server, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    host = f"http://127.0.0.1:{chat_server.server_address[1]}"
    log = tmp_path / "llmload.log"
    cmd = [sys.executable, "-m", "llmload", "run", "--web-host", "127.0.0.1", "--web-port", str(port),
           "--host", host, "--model", "m", "--max-tokens-cap", "3", "-u", "1", "-r", "1"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LLMLOAD_API_KEY", "ANTHROPIC_API_KEY")}
    env["LLMLOAD_EXPORTER_PORT"] = "0"
    if source == "flag":
        cmd += ["--api-key", KEY]
    else:
        env["OPENAI_API_KEY" if source == "env" else source] = KEY
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    try:
        wait_for_http(base + "/", 30, proc, log)
        page = _fetch(base + "/")
        assert '"api_key"' in page, "the start form should still offer the key field"
        _assert_no_key(base)

        # Start from the form as the browser does, with the key field left empty.
        form = {"user_count": "1", "spawn_rate": "1", "host": host, "api_key": ""}
        answer = json.loads(_fetch(base + "/swarm", urllib.parse.urlencode(form).encode()))
        assert answer["success"], answer
        deadline = time.monotonic() + 20
        while len(chat_server.authorizations) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert chat_server.authorizations, log.read_text()[-3000:]
        assert set(chat_server.authorizations) == {f"Bearer {KEY}"}  # the empty field kept the key
        _assert_no_key(base)  # nothing echoed back while running

        _fetch(base + "/stop", b"")
        _assert_no_key(base)
    finally:
        stop_process(proc)
    assert KEY not in log.read_text()
