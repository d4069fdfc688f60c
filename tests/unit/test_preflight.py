from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llmload.errors import ConfigError
from llmload.preflight import (
    check_host,
    check_models,
    check_output_dir,
    check_output_file,
    check_port_free,
    check_range,
    check_reachable,
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def models_server():
    """/v1/models answering with the status and models set on the server."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            srv = self.server
            srv.seen.append(self.headers.get("Authorization"))
            body = json.dumps({"data": [{"id": m} for m in srv.models]}).encode()
            self.send_response(srv.status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.status, srv.models, srv.seen = 200, ["tiny"], []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


def test_host_needs_a_scheme_and_says_how_to_write_it():
    with pytest.raises(ConfigError) as e:
        check_host("127.0.0.1:8000")
    assert "needs http:// or https://, e.g. --host http://127.0.0.1:8000" in _one_line(e)
    with pytest.raises(ConfigError, match="needs http"):
        check_host("ftp://x")
    with pytest.raises(ConfigError, match="--host is missing"):
        check_host("")
    with pytest.raises(ConfigError, match="port is not a number"):
        check_host("http://h:99999")
    assert check_host("http://127.0.0.1:8000/") == ("127.0.0.1", 8000)
    assert check_host("https://api.example") == ("api.example", 443)


def test_a_closed_port_fails_with_one_line_before_load():
    port = _closed_port()
    with pytest.raises(ConfigError) as e:
        check_reachable(f"http://127.0.0.1:{port}", timeout=2)
    line = _one_line(e)
    assert f"cannot connect to 127.0.0.1:{port}" in line and "--no-preflight" in line


def test_reachable_server_passes(models_server):
    check_reachable(f"http://127.0.0.1:{models_server.server_port}")


def test_models_listing(models_server):
    host = f"http://127.0.0.1:{models_server.server_port}"
    assert check_models(host, "tiny", {"Authorization": "Bearer k"}) is None
    assert models_server.seen == ["Bearer k"]
    warning = check_models(host, "big", {})
    assert warning and "--model big is not among" in warning and "tiny" in warning
    models_server.status = 404
    assert check_models(host, "big", {}) is None  # no such route: nothing to say
    models_server.status = 401
    with pytest.raises(ConfigError, match="refuses the API key"):
        check_models(host, "tiny", {"Authorization": "Bearer wrong"})


def test_a_user_password_in_the_host_is_sent_as_basic_auth_and_never_shown(models_server):
    """As Locust's FastHttpSession sends it (in place of the key's header); urllib took 'u:pw@127.0.0.1' for a host."""
    port = models_server.server_port
    models_server.status = 401
    with pytest.raises(ConfigError) as e:
        check_models(f"http://u:s3cret@127.0.0.1:{port}", "tiny", {"Authorization": "Bearer k"})
    assert models_server.seen == ["Basic dTpzM2NyZXQ="]  # base64("u:s3cret"): was never asked at all
    assert f"http://127.0.0.1:{port}/v1/models answered HTTP 401" in _one_line(e) and "s3cret" not in str(e.value)
    closed = _closed_port()
    for host, call in ((f"http://u:s3cret@127.0.0.1:{closed}", check_reachable), ("http://u:s3cret@h:99999", check_host),
                       ("u:s3cret@127.0.0.1:8000", check_host)):  # fmt: skip
        with pytest.raises(ConfigError) as e:
            call(host)
        assert "s3cret" not in _one_line(e) and "--host " in str(e.value)


def test_output_files_and_folders(tmp_path):
    check_output_file("--summary-json", tmp_path / "s.json")
    check_output_file("--summary-json", None)
    with pytest.raises(ConfigError) as e:
        check_output_file("--records-jsonl", tmp_path / "missing" / "r.jsonl")
    assert "does not exist" in _one_line(e) and "--records-jsonl" in str(e.value)
    with pytest.raises(ConfigError, match="is a folder"):
        check_output_file("--summary-json", tmp_path)
    check_output_dir("--runs-dir", tmp_path / "runs")  # made later, inside an existing folder
    check_output_dir("--runs-dir", tmp_path)
    with pytest.raises(ConfigError, match="neither it nor its parent"):
        check_output_dir("--runs-dir", tmp_path / "a" / "b")
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match="is a file"):
        check_output_dir("--runs-dir", tmp_path / "f")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes everywhere")
def test_unwritable_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="not writable"):
        check_output_file("--summary-json", ro / "s.json")


def test_busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(ConfigError) as e:
            check_port_free("--web-port", "127.0.0.1", port)
        assert f"--web-port {port}: cannot listen on 127.0.0.1:{port}" in _one_line(e)
    check_port_free("--web-port", "127.0.0.1", port)  # closed again
    check_port_free("--exporter-port", "*", 0)


def test_a_port_whose_last_connections_wait_in_time_wait_is_free():
    """A rerun right after a run: the master's port still had TIME_WAIT connections, and the check said "in use"
    although ZeroMQ (SO_REUSEADDR) binds it."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        server, _ = listener.accept()
        server.close()  # the listening side closes first: its end of the connection waits in TIME_WAIT
        client.close()
    with socket.socket() as plain, pytest.raises(OSError):  # what the check did: a bind without SO_REUSEADDR fails
        plain.bind(("127.0.0.1", port))
    check_port_free("--master-bind-port", "127.0.0.1", port)


def test_ranges():
    check_range("-u", 5, 0)
    check_range("-u", None, 0)
    with pytest.raises(ConfigError) as e:
        check_range("-u", -3, 0, hint="the number of users")
    assert _one_line(e) == "-u -3: must be >= 0; the number of users"
    with pytest.raises(ConfigError, match=r"in 0\.5\.\.10"):
        check_range("--x", 11, 0.5, 10)
