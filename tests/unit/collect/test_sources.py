"""The HTTP side against real local sockets: gzip, HTTP errors, refused and silent endpoints, HTML."""

from __future__ import annotations

import base64
import gzip
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gevent
import pytest

from llmload.collect.sources import FetchError, ScrapeSource, http_request

PAGE = b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 5\npython_info 1\n"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path == "/private":
            if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"scraper:s3cr@t").decode():
                self.send_error(401)
                return
            self.path = "/metrics"
        if self.path == "/metrics":
            body, headers = PAGE, {}
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                body, headers = gzip.compress(PAGE), {"Content-Encoding": "gzip"}
        elif self.path == "/html":
            body, headers = b"<!DOCTYPE html><html>login</html>", {}
        else:
            self.send_error(404)
            return
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_scrape_of_a_gzip_page(server):
    s = ScrapeSource(server + "/metrics", frozenset({"engine"})).read(2.0)
    assert s.get("vllm:num_requests_running") == [({}, 5.0)]
    assert not s.get("python_info")


def test_http_error_and_html_answers(server):
    with pytest.raises(FetchError) as e:
        http_request(server + "/nope", 2.0)
    assert e.value.kind == "http_error" and "404" in str(e.value)
    with pytest.raises(FetchError) as e:
        ScrapeSource(server + "/html", frozenset({"gpu"})).read(2.0)
    assert e.value.kind == "bad_answer"


def test_refused_and_silent_endpoints_are_unreachable():
    with pytest.raises(FetchError) as e:
        http_request("http://127.0.0.1:9/metrics", 1.0)
    assert e.value.kind == "unreachable"
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts connections into the backlog, never answers
    try:
        with gevent.Timeout(5), pytest.raises(FetchError) as e:
            http_request(f"http://127.0.0.1:{silent.getsockname()[1]}/metrics", 0.3)
        assert e.value.kind == "unreachable" and "0.3s" in str(e.value)
    finally:
        silent.close()


def test_credentials_in_the_url_are_sent_as_basic_auth(server):
    port = server.rsplit(":", 1)[1]
    assert b"vllm:num_requests_running 5" in http_request(f"http://scraper:s3cr%40t@127.0.0.1:{port}/private", 2.0)
    with pytest.raises(FetchError, match="401"):
        http_request(f"http://scraper:wrong@127.0.0.1:{port}/private", 2.0)
