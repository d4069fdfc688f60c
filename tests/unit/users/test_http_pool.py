"""BodyReader: lines and raw bytes as they arrive, and no reuse of half-read connections."""

from __future__ import annotations

import gevent
import pytest
from gevent.event import Event
from gevent.server import StreamServer
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError
from locust.contrib.fasthttp import FastHttpSession
from locust.env import Environment

from llmload.users.http_pool import BodyReader, IdleSockets, install_keepalive, take_reconnects

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@pytest.fixture
def server():
    """A server that plays a scripted list of (delay_s | Event, bytes) per request; None closes the socket.

    An ``Event`` instead of a delay makes the server wait until the test sets it.
    """
    script: list = []
    connections = []

    def handle(sock, _addr):
        connections.append(sock)
        while True:
            if not sock.recv(65536):
                return
            for delay, data in list(script):
                if isinstance(delay, Event):
                    delay.wait()
                else:
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
    more = Event()  # the server sends the rest only once the client has read the first event
    script[:] = [(0, HEAD), (0, chunk(b"data: a\n\n")), (more, chunk(b"data: b\n\n") + b"0\r\n\r\n")]
    reader = BodyReader(open_stream(session))
    # A reader that waited for a buffer to fill would block here for ever (the guard fails the test).
    with gevent.Timeout(10, AssertionError("the first line was not returned before the rest was sent")):
        first = [reader.readline(), reader.readline()]
    assert first == [b"data: a\n", b"\n"] and not more.is_set()
    more.set()
    rest = []
    while line := reader.readline():
        rest.append(line)
    assert rest == [b"data: b\n", b"\n"]
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


# -- pooled connections: Keep-Alive limits and the one retry on a stale connection -----------


class Scripted:
    """A server that answers each request by a rule of (connection index, request index on it).

    ``rule(conn, nth) -> "ok" | "drop" | "partial"``: a complete answer (with ``keep_alive``
    as its Keep-Alive header), the request read and the connection closed without a byte, or
    half a status line and then the close.
    """

    def __init__(self, rule, keep_alive: str | None = None) -> None:
        self.rule, self.keep_alive = rule, keep_alive
        self.connections = 0
        self.requests = 0
        self.seen: list[dict] = []  # each request's header fields
        self.srv = StreamServer(("127.0.0.1", 0), self.handle)
        self.srv.start()
        self.url = f"http://127.0.0.1:{self.srv.server_port}"

    def handle(self, sock, _addr):
        conn = self.connections
        self.connections += 1
        buf, nth = b"", 0
        while True:
            while b"\r\n\r\n" not in buf:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
            head, _, rest = buf.partition(b"\r\n\r\n")
            fields = dict(h.partition(b":")[::2] for h in head.split(b"\r\n")[1:])
            self.seen.append(fields)
            length = int({k.lower(): v for k, v in fields.items()}[b"content-length"])
            while len(rest) < length:
                rest += sock.recv(65536)
            buf = rest[length:]
            self.requests += 1
            action = self.rule(conn, nth)
            nth += 1
            if action == "drop":
                sock.close()
                return
            if action == "partial":
                sock.sendall(b"HTTP/1.1 20")
                sock.close()
                return
            ka = f"Keep-Alive: {self.keep_alive}\r\n".encode() if self.keep_alive else b""
            sock.sendall(b"HTTP/1.1 200 OK\r\n" + ka + b"Content-Length: 2\r\n\r\nok")

    def session(self, clock=None):
        s = FastHttpSession(self.url, request_event=Environment().events.request, user=None)
        install_keepalive(s, **({"clock": clock} if clock else {}))
        return s

    def stop(self):
        self.srv.stop()


@pytest.fixture
def scripted():
    servers = []

    def start(rule, keep_alive=None):
        s = Scripted(rule, keep_alive)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


def post(session):
    """One request read to its end; returns (status, error)."""
    resp = open_stream(session)
    if resp.status_code:
        reader = BodyReader(resp)
        while reader.read_some():
            pass
    return resp.status_code, getattr(resp, "error", None)


def test_a_request_on_a_connection_the_server_closed_is_sent_again_once_on_a_fresh_one(scripted):
    srv = scripted(lambda conn, nth: "ok" if nth == 0 else "drop")  # as llama.cpp after a stream
    session = srv.session()
    assert post(session) == (200, None) and take_reconnects() == 0
    for _ in range(3):
        assert post(session) == (200, None)
        assert take_reconnects() == 1
    assert take_reconnects() == 0  # taken
    assert (srv.connections, srv.requests) == (4, 7)  # 4 answered + 3 dropped


def test_a_fresh_connection_closed_before_an_answer_is_not_retried(scripted):
    srv = scripted(lambda conn, nth: "drop")
    status, error = post(srv.session())
    assert status == 0 and isinstance(error, HTTPConnectionClosed)
    assert take_reconnects() == 0
    assert srv.requests == 1


def test_the_retry_happens_once(scripted):
    srv = scripted(lambda conn, nth: "ok" if conn == 0 and nth == 0 else "drop")
    session = srv.session()
    assert post(session) == (200, None)
    status, error = post(session)  # reused: dropped; fresh: dropped too -> the error stands
    assert status == 0 and isinstance(error, HTTPConnectionClosed)
    assert take_reconnects() == 1
    assert srv.requests == 3


def test_no_retry_once_a_byte_of_the_answer_arrived(scripted):
    srv = scripted(lambda conn, nth: "ok" if nth == 0 else "partial")
    session = srv.session()
    assert post(session) == (200, None)
    status, error = post(session)
    assert status == 0 and isinstance(error, HTTPParseError) and not isinstance(error, HTTPConnectionClosed)
    assert take_reconnects() == 0
    assert srv.requests == 2


def test_announced_max_requests_opens_a_new_connection_without_a_retry(scripted):
    srv = scripted(lambda conn, nth: "ok" if nth < 2 else "drop", keep_alive="timeout=5, max=2")
    session = srv.session()
    for _ in range(5):
        assert post(session) == (200, None)
        assert take_reconnects() == 0
    assert (srv.connections, srv.requests) == (3, 5)


def test_announced_idle_timeout_opens_a_new_connection_without_a_retry(scripted):
    now = [0.0]
    srv = scripted(lambda conn, nth: "ok", keep_alive="timeout=5, max=100")
    session = srv.session(clock=lambda: now[0])
    assert post(session) == (200, None)
    now[0] += 3.9
    assert post(session) == (200, None)
    assert srv.connections == 1  # reused under timeout - margin
    now[0] += 4.0
    assert post(session) == (200, None)
    assert take_reconnects() == 0
    assert srv.connections == 2  # idle 4 s >= 5 - 1: closed by the client, not reused


def test_users_sharing_one_pool_count_their_own_retries(scripted):
    from geventhttpclient.client import HTTPClientPool

    srv = scripted(lambda conn, nth: "ok" if nth == 0 else "drop")
    shared = HTTPClientPool(concurrency=4)
    results = {}

    def user(name, rounds):
        s = FastHttpSession(srv.url, request_event=Environment().events.request, user=None, client_pool=shared)
        install_keepalive(s)
        n = 0
        for _ in range(rounds):
            assert post(s) == (200, None)
            n += take_reconnects()
            gevent.sleep(0.01)
        results[name] = n

    gevent.joinall([gevent.spawn(user, "a", 3), gevent.spawn(user, "b", 4)], raise_error=True)
    assert sum(results.values()) == srv.requests - 7  # every dropped request was sent again, once
    assert all(n >= 1 for n in results.values())
    shared.close()


def test_an_address_host_connects_without_gevents_resolver(scripted, monkeypatch):
    """127.0.0.1 needs no lookup: new connections skip gevent's thread-pool resolver (2 000 at once queued there)."""
    import gevent.socket

    def no_resolver(*a, **k):
        raise AssertionError("gevent's resolver was asked")

    monkeypatch.setattr(gevent.socket, "getaddrinfo", no_resolver)
    srv = scripted(lambda conn, nth: "ok")
    assert post(srv.session()) == (200, None) and post(srv.session()) == (200, None)  # two pools, two connections


# -- idle memory: the pool's idle sockets in a list, not a gevent LifoQueue -------------------


def test_idle_sockets_is_a_lifo_that_never_waits():
    from gevent.queue import Empty

    q = IdleSockets()
    assert q.empty() and q.qsize() == 0
    with pytest.raises(Empty):
        q.get(block=False)
    q.put("a")
    q.put("b")
    assert q.qsize() == 2 and q.get(block=False) == "b" and q.get(block=False) == "a" and q.empty()


def _pool(session):
    """geventhttpclient's ConnectionPool under this session's KeepAliveClient and KeepAlivePool."""
    from geventhttpclient.url import URL

    return session.client.clientpool.get_client(URL(session.base_url))._inner._connection_pool._inner


def test_a_users_pool_keeps_its_idle_socket_in_a_list_and_reuses_it(scripted):
    srv = scripted(lambda conn, nth: "ok")
    session = srv.session()
    for _ in range(3):
        assert post(session) == (200, None)
    inner = _pool(session)
    assert type(inner._socket_queue) is IdleSockets and inner._socket_queue.qsize() == 1  # idle, pooled
    assert srv.connections == 1  # one keep-alive connection carried the three requests


def test_a_shared_pool_still_bounds_its_connections(scripted):
    """The semaphore (the pool's size) still limits sockets out at once when users share one pool."""
    from geventhttpclient.client import HTTPClientPool

    srv = scripted(lambda conn, nth: "ok")
    shared = HTTPClientPool(concurrency=2)

    def user():
        s = FastHttpSession(srv.url, request_event=Environment().events.request, user=None, client_pool=shared)
        install_keepalive(s)
        for _ in range(3):
            assert post(s) == (200, None)
            gevent.sleep(0)

    gevent.joinall([gevent.spawn(user) for _ in range(6)], raise_error=True)
    assert srv.requests == 18 and srv.connections == 2  # never more than the pool's size
    from geventhttpclient.url import URL

    inner = shared.get_client(URL(srv.url))._connection_pool._inner
    assert type(inner._socket_queue) is IdleSockets and inner._socket_queue.qsize() == 2
    shared.close()


def test_an_idle_user_holds_no_lane(scripted):
    """The per-greenlet lane lives from a request's checkout to take_reconnects(), which the user calls at its end."""
    from llmload.users import http_pool

    srv = scripted(lambda conn, nth: "ok" if nth == 0 else "drop")
    session = srv.session()
    assert post(session) == (200, None)
    assert gevent.getcurrent() in http_pool._LANES
    assert take_reconnects() == 0 and gevent.getcurrent() not in http_pool._LANES
    assert post(session) == (200, None)  # dropped, sent again on a fresh connection
    assert take_reconnects() == 1 and gevent.getcurrent() not in http_pool._LANES
    assert take_reconnects() == 0


def test_two_hosts_keep_their_own_client_and_connection(scripted):
    """``--host URL1,URL2``: requests alternate between hosts, each host's keep-alive connection is reused."""
    a, b = scripted(lambda conn, nth: "ok"), scripted(lambda conn, nth: "ok")
    session = a.session()
    for _ in range(3):
        for srv in (a, b):
            resp = session.request("POST", srv.url + "/s", data=b"{}", stream=True, catch_response=True)
            assert resp.status_code == 200
            reader = BodyReader(resp)
            while reader.read_some():
                pass
    assert (a.connections, a.requests, b.connections, b.requests) == (1, 3, 1, 3)
    clients = session.client.clientpool
    assert len({id(w) for w in clients._wrapped.values()}) == 2  # one wrapper per host, kept


def test_users_share_one_dict_of_client_arguments(scripted):
    srv = scripted(lambda conn, nth: "ok")
    one, two = srv.session(), srv.session()
    assert one.client.clientpool._inner.client_args is two.client.clientpool._inner.client_args
    assert post(one) == (200, None) and post(two) == (200, None)


def test_users_with_equal_default_headers_share_them_and_still_send_them(scripted):
    srv = scripted(lambda conn, nth: "ok")
    one, two = srv.session(), srv.session()
    other = FastHttpSession(srv.url, request_event=Environment().events.request, user=None,
                            headers={"User-Agent": "mine"})  # fmt: skip
    install_keepalive(other)
    for s in (one, two, other):
        assert post(s) == (200, None)
    assert one.client.default_headers is two.client.default_headers
    assert _pool_client(one).default_headers is _pool_client(two).default_headers
    assert other.client.default_headers is not one.client.default_headers
    agents = [f[b"User-Agent"].strip() for f in srv.seen]
    assert agents[2] == b"mine" and agents[0] == agents[1] != b"mine"


def _pool_client(session):
    from geventhttpclient.url import URL

    return session.client.clientpool.get_client(URL(session.base_url))._inner
