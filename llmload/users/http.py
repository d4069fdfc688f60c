"""Reading a streamed HTTP body as it arrives (the one place that touches geventhttpclient internals).

Locust's ``FastHttpSession.iter_lines()`` and ``FastResponse.iter_content(n)`` block until
``n`` bytes have arrived (geventhttpclient's ``read(n)`` loops until it has them): measured
TTFT 500 ms for a true 2 ms (shared/research/locust.md §3). geventhttpclient's
``readline`` returns as soon as one line is buffered, which is what SSE and NDJSON need;
for raw text streams :meth:`BodyReader.read_some` returns whatever bytes have arrived.

Both reach into ``FastResponse._response`` (an ``HTTPSocketPoolResponse``) and its
``_body_buffer``/``_sock``; ``tests/unit/users/test_http.py`` pins that behaviour, and
pyproject pins geventhttpclient < 3.
"""

from __future__ import annotations

import functools
from typing import Any

from geventhttpclient.response import HTTPConnectionClosed

__all__ = ["BodyReader"]


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
