"""The faulty server does, on the wire, what each mode promises."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.servers.faulty import start_faulty_server

CHAT = "/v1/chat/completions"


class Reply:
    """A raw response: chunks with arrival times and how the stream ended."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.chunks: list[tuple[float, bytes]] = []
        self.end = ""  # "complete" (last chunk seen), "eof", "reset"
        self.t_sent = 0.0

    @property
    def events(self) -> list[bytes]:
        """Payloads of ``data:`` events (comments left out)."""
        return [c[6:-2] for _, c in self.chunks if c.startswith(b"data: ")]

    @property
    def json_events(self) -> list[dict]:
        return [json.loads(e) for e in self.events if e != b"[DONE]"]

    @property
    def content_times(self) -> list[float]:
        return [t for t, c in self.chunks if b'"content":"' in c and b'"role"' not in c]


class Client:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
        self.rfile = self.sock.makefile("rb")

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

    def post(self, model: str, path: str = CHAT, **fields: object) -> Reply:
        body = {"model": model, "stream": True, "max_tokens": 6, "stream_options": {"include_usage": True}}
        body["messages" if path == CHAT else "prompt"] = (
            [{"role": "user", "content": "a b c"}] if path == CHAT else "a b c"
        )
        body.update(fields)
        data = json.dumps(body).encode()
        r = Reply()
        r.t_sent = time.perf_counter()
        self.sock.sendall(
            b"POST %b HTTP/1.1\r\nHost: f\r\nContent-Length: %d\r\n\r\n%b" % (path.encode(), len(data), data)
        )
        try:
            self._read(r)
        except ConnectionResetError:
            r.end = "reset"
        return r

    def _read(self, r: Reply) -> None:
        line = self.rfile.readline()
        if not line:
            r.end = "eof"
            return
        r.status = int(line.split()[1])
        while (line := self.rfile.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            r.headers[k.lower()] = v.strip()
        if "content-length" in r.headers:
            r.body, r.end = self.rfile.read(int(r.headers["content-length"])), "complete"
            return
        while True:
            size_line = self.rfile.readline()
            if not size_line:
                r.end = "eof"
                return
            t = time.perf_counter()
            size = int(size_line.strip(), 16)
            data = self.rfile.read(size + 2)
            if size == 0:
                r.end = "complete"
                return
            r.chunks.append((t, data[:-2]))


@pytest.fixture(scope="module")
def server():
    with start_faulty_server() as s:
        yield s


@pytest.fixture
def client(server):
    c = Client(server.url)
    yield c
    c.close()


def _finishes(r: Reply) -> list[str]:
    return [c["finish_reason"] for e in r.json_events for c in e.get("choices", []) if c.get("finish_reason")]


def _usage(r: Reply) -> dict | None:
    found = [e["usage"] for e in r.json_events if "usage" in e]
    return found[0] if found else None


def test_ok_streams_role_tokens_finish_usage_done(client):
    r = client.post("ok", max_tokens=5)
    assert (r.status, r.end) == (200, "complete")
    ev = r.json_events
    assert ev[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [e["choices"][0]["delta"] for e in ev[1:6]] == [{"content": " tok"}] * 5
    assert ev[6]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "length"}
    assert ev[7]["choices"] == []
    assert _usage(r) == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    assert r.events[-1] == b"[DONE]"
    gaps = [b - a for a, b in zip(r.content_times, r.content_times[1:], strict=False)]
    assert 0.001 <= sum(gaps) / len(gaps) <= 0.05


def test_ok_completions_and_no_usage_unless_asked(client):
    r = client.post("ok", "/v1/completions", max_tokens=3, stream_options={})
    ev = r.json_events
    assert [e["choices"][0]["text"] for e in ev] == [" tok"] * 3 + [""]
    assert _finishes(r) == ["length"]
    assert _usage(r) is None
    assert r.events[-1] == b"[DONE]"


def test_ok_non_streaming_is_one_json_body(client):
    r = client.post("ok", stream=False, max_tokens=4)
    assert r.status == 200
    body = json.loads(r.body)
    assert body["choices"][0]["message"]["content"] == " tok" * 4
    assert body["usage"]["completion_tokens"] == 4


@pytest.mark.parametrize("code", [429, 500, 503])
def test_http_status_with_json_error(client, code):
    r = client.post(f"http:{code}")
    assert r.status == code
    assert json.loads(r.body)["error"]["code"] == code
    assert client.post("ok").status == 200  # connection kept alive


def test_retry_after_sends_the_header_with_the_status(client):
    r = client.post("retry_after:429:2")
    assert r.status == 429
    assert r.headers["retry-after"] == "2"
    assert json.loads(r.body)["error"]["message"] == "faulty: HTTP 429"


def test_context_length_is_a_400_with_the_servers_message(client):
    r = client.post("context_length")
    assert r.status == 400
    assert "maximum context length is 32768 tokens" in json.loads(r.body)["error"]["message"]


def test_html_is_a_200_web_page(client):
    r = client.post("html")
    assert r.status == 200
    assert r.headers["content-type"].startswith("text/html")
    assert b"<title>Welcome to nginx!</title>" in r.body
    assert client.post("ok").status == 200


def test_close_before_headers(client):
    r = client.post("close_before_headers")
    assert r.end == "eof"
    assert r.status == 0


def test_reset_midstream(client):
    r = client.post("reset_midstream:3", max_tokens=10)
    assert r.status == 200
    assert r.end == "reset"
    assert len(r.content_times) == 3
    assert b"[DONE]" not in r.events


def test_close_midstream_ends_with_eof_and_no_terminator(client):
    r = client.post("close_midstream:3", max_tokens=10)
    assert r.status == 200
    assert r.end == "eof"
    assert len(r.content_times) == 3
    assert b"[DONE]" not in r.events


def _stats(url: str) -> dict:
    c = Client(url)
    try:
        c.sock.sendall(b"GET /stats HTTP/1.1\r\nHost: f\r\n\r\n")
        r = Reply()
        c._read(r)
        return json.loads(r.body)
    finally:
        c.close()


def test_keepalive_announces_its_limits_and_drops_the_request_after_max(server, client):
    before = _stats(server.url)
    replies = [client.post("keepalive:5:3:0", max_tokens=2) for _ in range(3)]
    assert [(r.status, r.end) for r in replies] == [(200, "complete")] * 3
    assert replies[0].headers["keep-alive"] == "timeout=5, max=3"
    dropped = client.post("keepalive:5:3:0")
    assert (dropped.status, dropped.end) == (0, "eof")  # read, then closed without a byte of answer
    after = _stats(server.url)
    assert after["dropped"] - before["dropped"] == 1
    assert after["requests"] - before["requests"] == 4


def test_keepalive_drops_the_request_after_an_idle_timeout(server, client):
    assert client.post("keepalive:1:100:0", max_tokens=1).end == "complete"
    time.sleep(1.05)
    assert client.post("keepalive:1:100:0", max_tokens=1).end == "eof"


def test_keepalive_quiet_close_after_k_requests_as_llama_cpp_after_a_stream(server, client):
    assert client.post("keepalive:5:100:1", max_tokens=1).end == "complete"
    assert client.post("keepalive:5:100:1", max_tokens=1).end == "eof"
    fresh = Client(server.url)
    try:
        assert fresh.post("keepalive:5:100:1", max_tokens=1).end == "complete"  # a new connection is served
    finally:
        fresh.close()


def test_slow_first(client):
    r = client.post("slow_first:200")
    role_t = r.chunks[0][0]
    assert b'"role"' in r.chunks[0][1]
    assert role_t - r.t_sent < 0.15
    assert r.content_times[0] - r.t_sent >= 0.2
    assert len(r.content_times) == 6
    assert _finishes(r) == ["length"]


def test_stall_after_pings_during_the_silence(client):
    r = client.post("stall_after:2:350", max_tokens=5)
    times = r.content_times
    assert len(times) == 5
    assert times[2] - times[1] >= 0.35
    pings = [t for t, c in r.chunks if c == b": ping\n\n"]
    assert len(pings) >= 3
    assert all(times[1] < t < times[2] for t in pings)
    assert max(b - a for a, b in zip([times[1], *pings], [*pings, times[2]], strict=True)) < 0.2
    assert _usage(r)["completion_tokens"] == 5


def test_slow_total(client):
    r = client.post("slow_total:40", max_tokens=5)
    assert r.content_times[-1] - r.t_sent >= 0.2
    assert r.end == "complete"


def test_malformed_after(client):
    r = client.post("malformed_after:2")
    assert len(r.content_times) == 2
    assert r.events[-2:] == [b"{not json", b"[DONE]"]


def test_short_ends_cleanly_without_finish_or_usage(client):
    r = client.post("short:3", max_tokens=10)
    assert r.end == "complete"
    assert len(r.content_times) == 3
    assert _finishes(r) == []
    assert _usage(r) is None
    assert r.events[-1] == b"[DONE]"


def test_short_with_finish_is_a_legit_stop(client):
    r = client.post("short_with_finish:3", max_tokens=10)
    assert len(r.content_times) == 3
    assert _finishes(r) == ["stop"]
    assert _usage(r)["completion_tokens"] == 3


def test_empty(client):
    r = client.post("empty")
    assert r.status == 200
    assert r.content_times == []
    assert _finishes(r) == ["stop"]
    assert r.events[-1] == b"[DONE]"


def test_error_event(client):
    r = client.post("error_event:2")
    assert len(r.content_times) == 2
    err = json.loads(r.events[-2])["error"]
    assert err == {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}
    assert r.events[-1] == b"[DONE]"


def test_no_done(client):
    r = client.post("no_done", max_tokens=4)
    assert r.end == "complete"
    assert b"[DONE]" not in r.events
    assert _finishes(r) == ["length"]
    assert _usage(r)["completion_tokens"] == 4


def test_multi_token(client):
    r = client.post("multi_token:3", max_tokens=8)
    contents = [e["choices"][0]["delta"].get("content") for e in r.json_events[1:-2]]
    assert contents == [" tok tok tok", " tok tok tok", " tok tok"]
    assert _usage(r)["completion_tokens"] == 8


@pytest.mark.parametrize("model", ["nope", "http", "stall_after:1", "short:x", "llmload-sim"])
def test_unknown_or_bad_mode_is_a_400(client, model):
    r = client.post(model)
    assert r.status == 400
    assert "mode" in json.loads(r.body)["error"]["message"]


def test_requests_are_recorded(server, client):
    before = len(server.server.requests)
    client.post("ok", max_tokens=1)
    client.post("http:503")
    assert server.server.requests[before:] == ["ok", "http:503"]


def test_command_line_entry_serves_and_stops_on_sigterm():
    script = Path(__file__).resolve().parents[2] / "servers" / "faulty.py"
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, str(script), "--port", "0"], stdout=subprocess.PIPE, env=env)
    try:
        line = proc.stdout.readline().decode()
        url = re.search(r"http://\S+", line).group(0)
        c = Client(url)
        try:
            assert c.post("ok", max_tokens=2).end == "complete"
        finally:
            c.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
