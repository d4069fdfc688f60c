"""BodyReader: lines and raw bytes as they arrive, and no reuse of half-read connections."""

from __future__ import annotations

import time

import gevent
import pytest
from gevent.server import StreamServer
from geventhttpclient.response import HTTPParseError
from locust.contrib.fasthttp import FastHttpSession
from locust.env import Environment

from llmload.users.http import BodyReader

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@pytest.fixture
def server():
    """A server that plays a scripted list of (delay_s, bytes) per request; None closes the socket."""
    script: list = []
    connections = []

    def handle(sock, _addr):
        connections.append(sock)
        while True:
            if not sock.recv(65536):
                return
            for delay, data in list(script):
                gevent.sleep(delay)
                if data is None:
                    sock.close()
                    return
                sock.sendall(data)

    srv = StreamServer(("127.0.0.1", 0), handle)
    srv.start()
    session = FastHttpSession(f"http://127.0.0.1:{srv.server_port}", request_event=Environment().events.request, user=None)
    yield script, session, connections
    srv.stop()


def open_stream(session):
    return session.request("POST", "/s", data=b"{}", stream=True, catch_response=True, headers={"Accept-Encoding": "identity"})


def test_lines_arrive_when_sent_not_when_a_buffer_fills(server):
    script, session, _ = server
    script[:] = [(0, HEAD), (0.1, chunk(b"data: a\n\n")), (0.2, chunk(b"data: b\n\n") + b"0\r\n\r\n")]
    reader = BodyReader(open_stream(session))
    t0 = time.perf_counter()
    seen = []
    while line := reader.readline():
        seen.append((line, round(time.perf_counter() - t0, 2)))
    assert [s[0] for s in seen] == [b"data: a\n", b"\n", b"data: b\n", b"\n"]
    assert 0.08 <= seen[0][1] <= 0.15  # the first line came after 0.1 s, not with the last
    assert seen[2][1] >= 0.28
    assert reader.complete


def test_read_some_returns_each_raw_chunk(server):
    script, session, _ = server
    raw_head = HEAD.replace(b"text/event-stream", b"text/plain")
    script[:] = [(0, raw_head), (0.05, chunk(b"Hello")), (0.05, chunk(b" world")), (0, b"0\r\n\r\n")]
    reader = BodyReader(open_stream(session))
    parts = []
    while data := reader.read_some():
        parts.append(data)
    assert parts == [b"Hello", b" world"]


def test_a_cut_stream_raises_a_connection_error(server):
    script, session, _ = server
    script[:] = [(0, HEAD), (0, chunk(b"data: a\n\n")), (0.05, None)]
    reader = BodyReader(open_stream(session))

    def read_all():
        while reader.readline():
            pass

    with pytest.raises(HTTPParseError):
        read_all()


def test_connection_is_reused_after_a_complete_body_and_not_after_discard(server):
    script, session, connections = server
    script[:] = [(0, HEAD + chunk(b"data: a\n\n") + b"0\r\n\r\n")]
    for _ in range(2):
        reader = BodyReader(open_stream(session))
        while reader.readline():
            pass
    assert len(connections) == 1  # keep-alive reuse
    script[:] = [(0, HEAD + chunk(b"data: a\n\n")), (0.3, chunk(b"data: b\n\n") + b"0\r\n\r\n")]
    reader = BodyReader(open_stream(session))
    reader.readline()  # half read
    reader.discard()
    reader = BodyReader(open_stream(session))
    assert reader.readline() == b"data: a\n"  # a fresh connection, not the half-read one
    assert len(connections) == 2
