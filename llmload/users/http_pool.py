"""The HTTP layer under Locust's FastHttpSession: pooled connections, retry, streamed bodies.

This is the one module that touches geventhttpclient internals.

**Connections.** :func:`install_keepalive` puts :class:`KeepAliveClients` in place of the
session's ``HTTPClientPool``: every ``HTTPClient`` it hands out has its connection pool
wrapped in a :class:`KeepAlivePool`, which knows, per socket, how many requests it carried,
since when it is idle and what the server's ``Keep-Alive`` header announced
(:mod:`llmload.users.keepalive`), and closes a pooled connection the server said it would
close instead of reusing it. :class:`KeepAliveClient` sends a request again, **once**, on a
fresh connection, when it failed before any response byte (geventhttpclient's
``HTTPConnectionClosed``: closed or reset before the status line) on a connection that had
carried an earlier request: the server closed it while the request was on its way (llama.cpp
closes after every streamed response, despite ``Keep-Alive: timeout=5, max=100``). Never once
a byte of the answer arrived, never on a fresh connection. geventhttpclient itself retries
only idempotent methods, and every LLM request is a POST. :func:`take_reconnects` tells the
user how many times its last request was sent again (0 or 1). The request's timing is not
reset: TTFT and E2E run from the first send, since the user waited through both.

**Idle memory.** geventhttpclient's ``ConnectionPool`` keeps its idle sockets in a gevent
``LifoQueue`` (two deques of waiters: 1.2 KB), one per user since each user has its own pool;
it never waits on it (its semaphore bounds the sockets out, so a ``put`` always fits and every
``get`` is non-blocking). :class:`KeepAlivePool` puts an :class:`IdleSockets` list there
instead: the same LIFO order, ~60 bytes, and the semaphore (the concurrency limit) untouched.
The wrappers have slots, :class:`KeepAliveClients` keeps its one host's client without a
table, and the users' equal ``HTTPClientPool`` arguments are one dict, their equal default
headers (the agent's and each ``HTTPClient``'s, which geventhttpclient only copies or merges
from) one ``Headers`` each (~0.3 KB apiece per user). A script that changes a session's
``default_headers`` in place after it started would change them for every user with the same
ones: set them on the class (Locust's ``default_headers``) instead.

**Bodies.** Locust's ``FastHttpSession.iter_lines()`` and ``FastResponse.iter_content(n)`` block until
``n`` bytes have arrived (geventhttpclient's ``read(n)`` loops until it has them): measured
TTFT 500 ms for a true 2 ms (shared/research/locust.md §3). geventhttpclient's
``readline`` returns as soon as one line is buffered, which is what SSE and NDJSON need;
for raw text streams :meth:`BodyReader.read_some` returns whatever bytes have arrived.

Internals used: ``FastResponse._response`` (an ``HTTPSocketPoolResponse``) and its
``_body_buffer``/``_sock``, ``HTTPClient._connection_pool``, ``LocustUserAgent.clientpool``;
``tests/unit/users/test_http_pool.py`` pins that behaviour, and pyproject pins
geventhttpclient < 3.
"""

from __future__ import annotations

import _socket
import functools
import ipaddress
import socket
import time
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from gevent import getcurrent
from gevent.queue import Empty, LifoQueue
from geventhttpclient.response import HTTPConnectionClosed

from llmload.users.keepalive import Connection, KeepAlivePolicy

__all__ = [
    "BodyReader", "IdleSockets", "KeepAliveClient", "KeepAliveClients", "KeepAlivePool", "install_keepalive",
    "take_reconnects",
]  # fmt: skip


class _Lane:
    """Per greenlet (one user): the connection its last request took, and retries."""

    __slots__ = ("conn", "fresh", "reconnects", "reused")

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.reused = False  # that connection had carried an earlier request
        self.fresh = False  # the next checkout must open a new connection
        self.reconnects = 0  # requests sent again since the last take_reconnects()


# Keyed by greenlet: a pool shared by several users (Locust's class-level ``client_pool``)
# hands sockets to many greenlets, and a greenlet can switch between checkout and failure.
_LANES: WeakKeyDictionary[Any, _Lane] = WeakKeyDictionary()
# Per socket: its Connection. One for every pool of the process (a socket belongs to one pool): a
# WeakKeyDictionary costs ~0.7 KB, and each user has its own pool.
_CONNS: WeakKeyDictionary[Any, Connection] = WeakKeyDictionary()


def _lane() -> _Lane:
    g = getcurrent()
    lane = _LANES.get(g)
    if lane is None:
        lane = _LANES[g] = _Lane()
    return lane


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _numeric_addrinfo(host: str, port: int, family: int) -> list[Any]:
    """``getaddrinfo`` of an IP address, in this thread: geventhttpclient's ``_resolve`` for an address host.

    geventhttpclient resolves the host at each new connection through gevent's resolver, a pool of
    10 threads: 2 000 users connecting at once queued there, and their first requests' TTFT (which
    runs from the send) held ~1 s of that queue. An address needs no lookup (``AI_NUMERICHOST``: none
    is made), so the answer is the same, at once; host names still go to gevent's resolver.
    """
    flags = socket.AI_NUMERICHOST  # the C function below: Locust patches socket's, which is gevent's
    return _socket.getaddrinfo(host.strip("[]"), port, family, socket.SOCK_STREAM, socket.SOL_TCP, flags)


class IdleSockets(list):
    """A pool's idle sockets, last returned first out: what ``ConnectionPool`` asks of its ``LifoQueue``.

    ``ConnectionPool`` calls ``empty()``, ``get(block=False)`` and ``put(sock)`` only, its
    semaphore keeping the count within the pool's size; a plain list does that without the
    queue's waiter deques (module docstring, *Idle memory*).
    """

    __slots__ = ()

    def empty(self) -> bool:
        return not self

    def qsize(self) -> int:
        return len(self)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if not self:
            raise Empty  # ConnectionPool only takes without waiting, and only after empty() said no
        return self.pop()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        self.append(item)


def take_reconnects() -> int:
    """How many times this greenlet's requests were sent again since the last call (then 0).

    The user calls it as each request ends; its lane goes with it (a next request makes a new
    one), so that an idle user holds none, except one whose next checkout must open a fresh
    connection.
    """
    g = getcurrent()
    lane = _LANES.get(g)
    if lane is None:
        return 0
    n = lane.reconnects
    if lane.fresh:
        lane.reconnects = 0
    else:
        del _LANES[g]
    return n


class KeepAlivePool:
    """One geventhttpclient ``ConnectionPool`` that honours ``Keep-Alive`` limits and tracks reuse.

    Sockets come from and go back to the wrapped pool (which also drops sockets the server
    visibly closed while they were idle); this layer closes, at checkout, a pooled socket
    whose announced limits are reached, and at return one that has carried ``max`` requests.
    """

    __slots__ = ("_conns", "_inner", "_policy", "size")

    def __init__(self, inner: Any, policy: KeepAlivePolicy) -> None:
        self._inner = inner
        self._policy = policy
        self._conns = _CONNS
        self.size = inner.size
        queue = getattr(inner, "_socket_queue", None)
        if queue is not None and type(queue) is LifoQueue and queue.empty():  # geventhttpclient's: a light list instead (docstring)
            inner._socket_queue = IdleSockets()
        host = getattr(inner, "_connection_host", None)
        if isinstance(host, str) and _is_ip(host):  # no lookup to do: answered here, not by gevent's thread pool
            family = socket.AF_INET if getattr(inner, "disable_ipv6", False) else 0
            inner._resolve = functools.partial(_numeric_addrinfo, host, inner._connection_port, family)

    def get_socket(self) -> Any:
        lane = _lane()
        fresh, lane.fresh = lane.fresh, False
        inner, conns = self._inner, self._conns
        while True:
            sock = inner.get_socket()
            conn = conns.get(sock)
            if conn is None:  # opened just now
                conn = conns[sock] = Connection()
                lane.conn, lane.reused = conn, False
                return sock
            if not fresh and self._policy.reusable(conn):
                lane.conn, lane.reused = conn, True
                return sock
            del conns[sock]
            inner.release_socket(sock)  # closed: the next one pooled, or a new connection

    def return_socket(self, sock: Any) -> None:
        conn = self._conns.get(sock)
        if conn is not None:
            self._policy.returned(conn)
            if conn.max_requests is not None and conn.served >= conn.max_requests:
                self.release_socket(sock)
                return
        self._inner.return_socket(sock)

    def release_socket(self, sock: Any) -> None:
        self._conns.pop(sock, None)
        self._inner.release_socket(sock)

    def close(self) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KeepAliveClient:
    """One geventhttpclient ``HTTPClient`` with the stale-connection retry (module docstring)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any, policy: KeepAlivePolicy) -> None:
        if not isinstance(inner._connection_pool, KeepAlivePool):
            inner._connection_pool = KeepAlivePool(inner._connection_pool, policy)
            inner.default_headers = _shared_headers(inner.default_headers)
        self._inner = inner

    def request(self, method: str, request_uri: str, body: Any = b"", headers: Any = None) -> Any:
        inner = self._inner
        try:
            resp = inner.request(method, request_uri, body=body, headers=headers)
        except HTTPConnectionClosed:  # closed or reset before any response byte
            lane = _lane()
            if not lane.reused:
                raise
            lane.fresh = True
            lane.reconnects += 1
            resp = inner.request(method, request_uri, body=body, headers=headers)
        conn = _lane().conn
        if conn is not None:
            conn.announce(resp.get("keep-alive"))
        return resp

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KeepAliveClients:
    """Stands in for geventhttpclient's ``HTTPClientPool`` (one ``HTTPClient`` per host:port)."""

    __slots__ = ("_inner", "_last", "_policy", "_wrapped")

    def __init__(self, inner: Any, policy: KeepAlivePolicy) -> None:
        self._inner = inner
        self._policy = policy
        self._last: KeepAliveClient | None = None  # the one host most users talk to: no table for it
        self._wrapped: dict[int, KeepAliveClient] | None = None  # the others (``--host URL1,URL2``)
        args = getattr(inner, "client_args", None)
        if type(args) is dict:  # every user's HTTPClientPool has the same arguments: one dict for them all
            inner.client_args = _shared_args(args)

    def get_client(self, url: Any) -> KeepAliveClient:
        client = self._inner.get_client(url)
        last = self._last
        if last is not None and last._inner is client:
            return last
        wrapped = self._wrapped
        if wrapped is None:
            wrapped = self._wrapped = {}
        if last is not None:
            wrapped[id(last._inner)] = last
        w = wrapped.get(id(client))
        if w is None or w._inner is not client:
            w = wrapped[id(client)] = KeepAliveClient(client, self._policy)
        self._last = w
        return w

    def close(self) -> None:
        self._inner.close()
        self._last = self._wrapped = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


_ARGS: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
_HEADERS: list[Any] = []  # distinct default Headers, shared by the users that have equal ones


def _shared_headers(headers: Any) -> Any:
    """An equal ``Headers`` already in use (read only: geventhttpclient copies or merges from it), else this one."""
    for h in _HEADERS:
        if type(h) is type(headers) and h == headers:
            return h
    if len(_HEADERS) < 16:
        _HEADERS.append(headers)
    return headers


def _shared_args(args: dict[str, Any]) -> dict[str, Any]:
    """One dict for every equal set of ``HTTPClientPool`` arguments (read only, to make each host's client)."""
    try:
        key = tuple(sorted(args.items()))
        return _ARGS.setdefault(key, args) if len(_ARGS) < 64 else args
    except TypeError:  # an unhashable or unorderable value: keep the user's own
        return args


def install_keepalive(session: Any, clock: Callable[[], float] = time.monotonic) -> None:
    """Route a Locust ``FastHttpSession``'s requests through :class:`KeepAliveClients` (idempotent)."""
    agent = session.client  # LocustUserAgent
    if not isinstance(agent.clientpool, KeepAliveClients):
        agent.clientpool = KeepAliveClients(agent.clientpool, KeepAlivePolicy(clock))
        agent.default_headers = _shared_headers(agent.default_headers)


class BodyReader:
    """Incremental reader over one streamed response.

    ``readline`` returns one line including its ``\\n`` (``b""`` at the end of the body);
    ``read_some`` returns the bytes available now, waiting only when none are.
    :meth:`discard` closes the connection so that a half-read stream is never reused.
    """

    __slots__ = ("_raw", "_sock", "readline")

    def __init__(self, response: Any) -> None:
        raw = response._response
        self._raw = raw
        self._sock = raw._sock  # kept to close it even after geventhttpclient released it
        self.readline = functools.partial(raw.readline, b"\n")

    @property
    def complete(self) -> bool:
        """Whether the whole HTTP message has been received (the connection is reusable)."""
        return bool(self._raw.message_complete)

    def read_some(self) -> bytes:
        raw = self._raw
        buf = raw._body_buffer
        while not buf:
            if raw.message_complete:
                return b""
            sock = raw._sock
            if sock is None:
                raise HTTPConnectionClosed("connection closed.")
            try:
                data = sock.recv(raw.block_size)
                if not data:
                    raise HTTPConnectionClosed("connection closed before the end of the body")
                raw.feed(data)
            except BaseException:
                raw.release()
                raise
        out = bytes(buf)
        del buf[:]
        return out

    def discard(self) -> None:
        """Close the socket: the body was not read to its end, so it must not be reused."""
        sock = self._sock
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        try:
            self._raw.release()  # hands the (now closed) socket back; the pool drops closed ones
        except Exception:
            pass
