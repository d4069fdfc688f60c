"""When a pooled HTTP connection may carry another request: the server's ``Keep-Alive`` word.

A server that will close its connections says how: ``Keep-Alive: timeout=5, max=100``
(llama.cpp's cpp-httplib, Apache, many proxies). A request written on a connection the
server is closing fails before any response byte, so a connection is not reused when:

* it has been idle for ``timeout − margin`` seconds or longer (idle = since its last
  response ended and it went back to the pool), with ``margin = min(1 s, timeout / 4)``:
  the server's idle clock started a little earlier (when it wrote the last byte), and
  ``timeout`` is often rounded down to whole seconds;
* it has carried ``max`` requests. ``max`` is read as requests per connection, as
  cpp-httplib sends it (the same value on every response). A server that counts down
  instead (Apache: the requests left) makes llmload end a connection earlier than needed:
  a new connection, never an error.

The latest response's header holds (no header: no limit). A close the server never
announced is not foreseeable: :mod:`llmload.users.http_pool` sends such a request again, once,
on a fresh connection. Pure logic with an injectable clock; the pool in
:mod:`llmload.users.http_pool` applies it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["MARGIN_MAX_S", "MARGIN_SHARE", "Connection", "KeepAlivePolicy", "parse_keep_alive"]

#: The idle margin is ``min(MARGIN_MAX_S, timeout × MARGIN_SHARE)`` seconds.
MARGIN_MAX_S = 1.0
MARGIN_SHARE = 0.25


def parse_keep_alive(value: str | list[str] | None) -> tuple[float | None, int | None]:
    """``(timeout_s, max_requests)`` from a ``Keep-Alive`` header value; ``None`` for what it lacks.

    Parameters may come in any order and case, with spaces; unknown parameters, and
    values that are not non-negative numbers, are ignored. A header sent twice arrives
    as a list: both are read, the last value of a parameter wins.
    """
    if not value:
        return None, None
    text = ",".join(value) if isinstance(value, list) else value
    timeout: float | None = None
    max_requests: int | None = None
    for part in text.split(","):
        name, sep, raw = part.partition("=")
        if not sep:
            continue
        name, raw = name.strip().lower(), raw.strip().strip('"')
        try:
            if name == "timeout":
                t = float(raw)
                if t >= 0 and t == t and t != float("inf"):
                    timeout = t
            elif name == "max":
                m = int(raw)
                if m >= 0:
                    max_requests = m
        except ValueError:
            continue
    return timeout, max_requests


class Connection:
    """What the client knows of one pooled connection."""

    __slots__ = ("header", "idle_since", "max_requests", "served", "timeout_s")

    def __init__(self) -> None:
        self.served = 0  # responses read to their end on it
        self.idle_since = 0.0  # clock() when it last went back to the pool
        self.timeout_s: float | None = None
        self.max_requests: int | None = None
        self.header: str | list[str] | None = None  # the last Keep-Alive value read

    def announce(self, header: str | list[str] | None) -> None:
        """Take the limits of a response's ``Keep-Alive`` header (absent: no limits)."""
        if header != self.header:  # servers repeat the same value: parse it once per connection
            self.header = header
            self.timeout_s, self.max_requests = parse_keep_alive(header)


class KeepAlivePolicy:
    """Decides whether a pooled :class:`Connection` may carry the next request."""

    __slots__ = ("clock",)

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock

    def returned(self, conn: Connection) -> None:
        """A response ended and the connection went back to the pool."""
        conn.served += 1
        conn.idle_since = self.clock()

    def reusable(self, conn: Connection) -> bool:
        """False when the server said it closes this connection by now (see the module docstring)."""
        if conn.max_requests is not None and conn.served >= conn.max_requests:
            return False
        timeout = conn.timeout_s
        if timeout is not None:
            margin = min(MARGIN_MAX_S, timeout * MARGIN_SHARE)
            if self.clock() - conn.idle_since >= timeout - margin:
                return False
        return True
