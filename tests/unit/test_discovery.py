from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llmload.discovery import discover_model
from llmload.errors import ConfigError


@pytest.fixture
def models_url():
    """/v1/models answering with the status set on the server (``srv.status``), listing "tiny"."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.server.seen.append(self.headers.get("Authorization"))
            body = json.dumps({"data": [{"id": "tiny"}]}).encode()
            self.send_response(self.server.status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.status, srv.seen = 200, []
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv, f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


def test_the_first_listed_model_is_the_one(models_url):
    _, url = models_url
    assert discover_model(url, {"Authorization": "Bearer k"}) == "tiny"


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_says_to_fix_the_key_not_to_pass_a_model(models_url, status):
    # Passing --model would only move the failure to the pre-flight (or to every request).
    srv, url = models_url
    srv.status = status
    with pytest.raises(ConfigError) as e:
        discover_model(url, {"Authorization": "Bearer sk-wrong-123"})
    line = str(e.value)
    assert "\n" not in line and f"HTTP {status}" in line and "API key" in line and "--api-key" in line
    assert "--model" not in line and "sk-wrong-123" not in line


def test_other_statuses_still_ask_for_a_model(models_url):
    srv, url = models_url
    srv.status = 404
    with pytest.raises(ConfigError, match="answered HTTP 404; pass --model NAME"):
        discover_model(url, {})


def test_a_user_password_in_the_host_is_basic_auth_and_never_in_the_message(models_url):
    """Was: 'http://u:s3cret@127.0.0.1:P/v1/models could not be read (Name or service not known)'."""
    srv, url = models_url
    host = url.replace("http://", "http://u:s3cret@")
    assert discover_model(host, {"Authorization": "Bearer k"}) == "tiny"
    assert srv.seen == ["Basic dTpzM2NyZXQ="]  # as Locust sends the load: basic auth wins
    srv.status = 404
    with pytest.raises(ConfigError) as e:
        discover_model(host)
    assert str(e.value) == f"--model not given and {url}/v1/models answered HTTP 404; pass --model NAME"
