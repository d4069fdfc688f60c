"""The simulator over real HTTP: wire format, token counts, keep-alive, errors, timing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from llmload.errors import ConfigError
from llmload.sim import SimConfig, run_in_thread, start_sim_process
from llmload.sim.config import add_arguments, config_from_args


class RawClient:
    """A socket client that keeps the HTTP/1.1 chunk boundaries and their arrival times."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
        self.rfile = self.sock.makefile("rb")

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

    def send(self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Length: {len(data)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(head.encode() + b"\r\n" + data)

    def response(self) -> tuple[int, dict[str, str], list[tuple[float, bytes]] | bytes]:
        """(status, headers, body): body is a list of (arrival time, chunk) when chunked."""
        status = int(self.rfile.readline().split()[1])
        headers = {}
        while (line := self.rfile.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            headers[k.lower()] = v.strip()
        if "content-length" in headers:
            return status, headers, self.rfile.read(int(headers["content-length"]))
        chunks = []
        while True:
            size = int(self.rfile.readline().strip(), 16)
            t = time.perf_counter()
            data = self.rfile.read(size + 2)
            assert data.endswith(b"\r\n")
            if size == 0:
                return status, headers, chunks
            chunks.append((t, data[:-2]))

    def request(self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None):
        self.send(method, path, body, headers)
        return self.response()


def sse_payloads(chunks: list[tuple[float, bytes]]) -> list[bytes]:
    out = []
    for _, c in chunks:
        assert c.startswith(b"data: ")
        assert c.endswith(b"\n\n")
        assert c.count(b"\n\n") == 1  # one SSE event per HTTP chunk
        out.append(c[6:-2])
    return out


CHAT = {"model": "m", "messages": [{"role": "user", "content": "one two three"}, {"role": "user", "content": "four"}]}


@pytest.fixture(scope="module")
def sim():
    with run_in_thread(SimConfig(port=0, ttft_ms=2, itl_ms=1, default_max_tokens=5)) as server:
        yield server


@pytest.fixture
def client(sim):
    c = RawClient(sim.url)
    yield c
    c.close()


def test_streaming_chat_sends_role_tokens_finish_usage_done(client):
    status, headers, chunks = client.request(
        "POST",
        "/v1/chat/completions",
        {**CHAT, "stream": True, "max_tokens": 7, "stream_options": {"include_usage": True}},
    )
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"
    assert "content-encoding" not in headers
    payloads = sse_payloads(chunks)
    assert payloads[-1] == b"[DONE]"
    events = [json.loads(p) for p in payloads[:-1]]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = events[1:-1]
    assert len(content) == 7
    for e in content:
        assert e["object"] == "chat.completion.chunk"
        assert e["choices"][0]["delta"]["content"].strip()
    assert [e["choices"][0]["finish_reason"] for e in content] == [None] * 6 + ["length"]
    usage = events[-1]
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 4, "completion_tokens": 7, "total_tokens": 11}


def test_usage_chunk_only_when_asked(client):
    _, _, chunks = client.request("POST", "/v1/chat/completions", {**CHAT, "stream": True, "max_tokens": 3})
    payloads = sse_payloads(chunks)
    assert len(payloads) == 1 + 3 + 1
    assert all(b'"usage"' not in p for p in payloads)


@pytest.mark.parametrize("n", [1, 2, 64])
def test_max_completion_tokens_is_honoured_exactly_and_wins_over_max_tokens(client, n):
    body = {**CHAT, "stream": True, "max_completion_tokens": n, "max_tokens": 1000}
    _, _, chunks = client.request("POST", "/v1/chat/completions", body)
    assert sum(b'"content":"' in p and b'"role"' not in p for p in sse_payloads(chunks)) == n


def test_streaming_completions_has_no_role_chunk(client):
    body = {"model": "m", "prompt": "a b c", "stream": True, "max_tokens": 4, "stream_options": {"include_usage": True}}
    status, _, chunks = client.request("POST", "/v1/completions", body)
    assert status == 200
    events = [json.loads(p) for p in sse_payloads(chunks)[:-1]]
    assert [e["object"] for e in events[:4]] == ["text_completion"] * 4
    assert all(e["choices"][0]["text"].strip() for e in events[:4])
    assert events[3]["choices"][0]["finish_reason"] == "length"
    assert events[4]["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def test_gateway_stream_sends_raw_text_one_token_per_chunk(client):
    status, headers, chunks = client.request(
        "POST", "/v1/stream", {"prompt": "hi", "stream": True, "max_new_tokens": 9}
    )
    assert status == 200
    assert headers["content-type"].startswith("text/plain")
    assert len(chunks) == 9
    assert all(c.strip() and b"data:" not in c for _, c in chunks)


def test_non_streaming_answers_one_json_body(client):
    status, _, body = client.request("POST", "/v1/chat/completions", {**CHAT, "max_tokens": 6})
    assert status == 200
    obj = json.loads(body)
    assert obj["object"] == "chat.completion"
    assert len(obj["choices"][0]["message"]["content"].split()) == 6
    assert obj["choices"][0]["finish_reason"] == "length"
    assert obj["usage"]["completion_tokens"] == 6
    _, _, body = client.request("POST", "/v1/completions", {"prompt": ["a b", "c"], "max_tokens": 2})
    obj = json.loads(body)
    assert len(obj["choices"][0]["text"].split()) == 2
    assert obj["usage"]["prompt_tokens"] == 3


def test_absent_limit_uses_the_configured_default(client):
    _, _, chunks = client.request("POST", "/v1/completions", {"prompt": "x", "stream": True})
    assert len(sse_payloads(chunks)) == 5 + 1


def test_keep_alive_serves_two_requests_on_one_connection(client):
    for _ in range(2):
        status, headers, chunks = client.request(
            "POST", "/v1/chat/completions", {**CHAT, "stream": True, "max_tokens": 2}
        )
        assert status == 200
        assert headers.get("connection") != "close"
        assert sse_payloads(chunks)[-1] == b"[DONE]"
    status, _, _ = client.request("GET", "/health")
    assert status == 200


def test_pipelined_requests_are_answered_in_order(client):
    client.send("POST", "/v1/completions", {"prompt": "x", "stream": True, "max_tokens": 3})
    client.send("GET", "/v1/models")
    _, _, chunks = client.response()
    assert len(sse_payloads(chunks)) == 3 + 1
    status, _, body = client.response()
    assert status == 200
    assert json.loads(body)["data"][0]["id"] == "llmload-sim"


def test_connection_close_is_honoured(client):
    status, headers, _ = client.request("GET", "/health", headers={"Connection": "close"})
    assert status == 200
    assert headers["connection"] == "close"
    assert client.rfile.read() == b""  # server closed


def test_client_going_away_mid_stream_does_not_disturb_the_server(sim):
    c = RawClient(sim.url)
    c.send("POST", "/v1/completions", {"prompt": "x", "stream": True, "max_tokens": 100000})
    c.rfile.readline()
    c.close()
    time.sleep(0.05)
    c2 = RawClient(sim.url)
    try:
        assert c2.request("GET", "/health")[0] == 200
    finally:
        c2.close()
    deadline = time.monotonic() + 2
    while sim.server.engine.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sim.server.engine.running == 0


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/v1/chat/completions", b"{not json", 400),
        ("POST", "/v1/chat/completions", b"[1, 2]", 400),
        ("POST", "/v1/chat/completions", {"model": "m"}, 400),
        ("POST", "/v1/chat/completions", {**CHAT, "max_tokens": 0}, 400),
        ("POST", "/v1/completions", {"prompt": "x", "stream": "yes"}, 400),
        ("POST", "/v1/completions", {"max_tokens": 3}, 400),
        ("POST", "/v1/nope", {}, 404),
        ("GET", "/", None, 404),
        ("GET", "/v1/chat/completions", None, 405),
    ],
)
def test_errors_answer_the_openai_error_shape(client, method, path, body, status):
    got, headers, raw = client.request(method, path, body)
    assert got == status
    assert headers["content-type"] == "application/json"
    err = json.loads(raw)["error"]
    assert err["code"] == status
    assert err["message"]
    assert err["type"]
    assert client.request("GET", "/health")[0] == 200  # the connection is still usable


def test_models_and_health(client):
    status, _, body = client.request("GET", "/v1/models")
    assert status == 200
    assert json.loads(body)["data"][0]["id"] == "llmload-sim"
    status, _, body = client.request("GET", "/health")
    assert status == 200


def test_zero_itl_sends_every_token_at_once_still_one_event_per_chunk():
    with run_in_thread(SimConfig(port=0, ttft_ms=0, itl_ms=0)) as server:
        c = RawClient(server.url)
        try:
            _, _, chunks = c.request("POST", "/v1/chat/completions", {**CHAT, "stream": True, "max_tokens": 50})
        finally:
            c.close()
    assert len(sse_payloads(chunks)) == 1 + 50 + 1


def test_config_validation_and_flags():
    import argparse

    with pytest.raises(ConfigError, match="ttft"):
        SimConfig(ttft_ms=-1)
    with pytest.raises(ConfigError, match="itl"):
        SimConfig(itl_ms=-0.5)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--port", "0", "--ttft-ms", "50", "--itl-ms", "5", "--model", "x"]))
    assert cfg == SimConfig(port=0, ttft_ms=50, itl_ms=5, model="x")
    with pytest.raises(ConfigError):
        config_from_args(parser.parse_args(["--itl-ms", "-1"]))


def test_module_help_works():
    out = subprocess.run([sys.executable, "-m", "llmload.sim", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert "--ttft-ms" in out.stdout


def test_process_timing_single_stream_and_clean_exit():
    """Client-measured TTFT and mean ITL follow the schedule; SIGTERM exits 0."""
    with start_sim_process(["--ttft-ms", "100", "--itl-ms", "10"]) as proc:
        assert proc.url.startswith("http://127.0.0.1:")
        c = RawClient(proc.url)
        try:
            t0 = time.perf_counter()
            c.send("POST", "/v1/chat/completions", {**CHAT, "stream": True, "max_tokens": 51})
            _, _, chunks = c.response()
        finally:
            c.close()
        times = [t for t, data in chunks if b'"content":"' in data and b'"role"' not in data]
        assert len(times) == 51
        ttft = times[0] - t0
        mean_itl = (times[-1] - times[0]) / 50
        assert 0.070 <= ttft <= 0.130, ttft
        assert 0.008 <= mean_itl <= 0.012, mean_itl
        pid = proc.pid
        assert proc.stop() == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_expect_100_continue_is_answered(sim):
    c = RawClient(sim.url)
    try:
        body = json.dumps({"prompt": "x", "max_tokens": 2}).encode()
        c.sock.sendall(
            b"POST /v1/completions HTTP/1.1\r\nHost: s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
            % len(body)
        )
        assert c.rfile.readline().startswith(b"HTTP/1.1 100")
        assert c.rfile.readline() == b"\r\n"
        c.sock.sendall(body)
        status, _, raw = c.response()
        assert status == 200
        assert json.loads(raw)["usage"]["completion_tokens"] == 2
    finally:
        c.close()


def test_http10_request_gets_its_answer_then_close(sim):
    c = RawClient(sim.url)
    try:
        c.sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        status, headers, _ = c.response()
        assert status == 200
        assert headers["connection"] == "close"
        assert c.rfile.read() == b""
    finally:
        c.close()


def test_start_sim_process_reports_a_child_that_cannot_start():
    from llmload.sim import SimStartError

    with pytest.raises(SimStartError, match="exited"):
        start_sim_process(["--port", "0", "--itl-ms", "-1"], timeout=20)


def test_sim_child_dies_with_the_process_that_started_it(tmp_path):
    """A killed parent (e.g. a killed test run) does not leave a simulator behind."""
    script = (
        "import sys\n"
        "from llmload.sim import start_sim_process\n"
        "p = start_sim_process()\n"
        "print(p.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        child = int(parent.stdout.readline())
        os.kill(child, 0)  # alive
    finally:
        parent.kill()
        parent.wait()
        parent.stdin.close()
        parent.stdout.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(child, 9)
    pytest.fail("simulator child survived its parent")


def test_stamp_chunks_puts_the_send_time_on_content_chunks_only(client):
    """``--stamp-chunks``: every content chunk carries ``llmload_sent_ns`` on the host's monotonic clock; off by default."""
    import argparse

    from llmload.sim.config import config_to_args

    _, _, plain = client.request("POST", "/v1/chat/completions", {**CHAT, "stream": True, "max_tokens": 3})
    assert all(b"llmload_sent_ns" not in p for p in sse_payloads(plain))  # the module's sim: default off
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--port", "0", "--ttft-ms", "5", "--itl-ms", "2", "--stamp-chunks"]))
    assert cfg.stamp_chunks
    assert not SimConfig().stamp_chunks
    assert "--stamp-chunks" in config_to_args(cfg)
    assert "--stamp-chunks" not in config_to_args(SimConfig())
    with start_sim_process(cfg) as proc:  # another process: its stamps must be comparable with ours
        c = RawClient(proc.url)
        try:
            t0 = time.perf_counter_ns()
            chat = {**CHAT, "stream": True, "max_tokens": 20, "stream_options": {"include_usage": True}}
            _, _, chunks = c.request("POST", "/v1/chat/completions", chat)
            _, _, comp = c.request("POST", "/v1/completions", {"prompt": "a b", "stream": True, "max_tokens": 4})
        finally:
            c.close()
    events = [json.loads(p) for p in sse_payloads(chunks)[:-1]]
    role, content, usage = events[0], events[1:-1], events[-1]
    assert "llmload_sent_ns" not in role
    assert "llmload_sent_ns" not in usage
    assert len(content) == 20
    assert [e["choices"][0]["finish_reason"] for e in content] == [None] * 19 + ["length"]
    sent = [e["llmload_sent_ns"] for e in content]
    arrived = [t for t, _ in chunks[1:21]]
    assert all(type(s) is int for s in sent)
    assert sent == sorted(sent)
    assert sent[0] >= t0
    for s, t in zip(sent, arrived, strict=True):
        assert s <= t * 1e9 + 1_000  # sent before it arrived (1 µs for float rounding of perf_counter())
        assert t * 1e9 - s < 1e9
    comp_events = [json.loads(p) for p in sse_payloads(comp)[:-1]]
    assert len(comp_events) == 4
    assert all(type(e["llmload_sent_ns"]) is int and e["choices"][0]["text"] for e in comp_events)
