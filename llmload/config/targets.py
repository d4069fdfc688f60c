"""Several targets behind one ``--host``: ``--host URL1,URL2,...`` spreads the requests round-robin.

:func:`split_hosts` reads the flag's value (one URL, or several separated by commas; an empty
part is an error line); :func:`round_robin` is the process's shared :class:`RoundRobin` for a
``--host`` value of several URLs (None for one: Locust's base URL serves it, unchanged). Each
request takes the next target, whichever user sends it, so N users spread over K targets
as evenly as their requests do; a failed request's error names its target.
"""

from __future__ import annotations

import functools

from llmload.errors import ConfigError

__all__ = ["RoundRobin", "round_robin", "split_hosts"]


def split_hosts(host: str) -> tuple[str, ...]:
    """The URLs of ``--host`` (one, or several separated by commas), each without a trailing ``/``."""
    parts = tuple(p.strip().rstrip("/") for p in host.split(","))
    if len(parts) > 1 and not all(parts):
        raise ConfigError(f"--host {host!r}: an empty URL between commas; write --host URL1,URL2,... (round-robin)")
    return parts


class RoundRobin:
    """The next target of each request, in turn (one per process; gevent runs one greenlet at a time)."""

    __slots__ = ("_i", "urls")

    def __init__(self, urls: tuple[str, ...]) -> None:
        self.urls, self._i = urls, 0

    def next(self) -> str:
        url = self.urls[self._i]
        self._i = (self._i + 1) % len(self.urls)
        return url


@functools.cache
def round_robin(host: str) -> RoundRobin | None:
    """The shared round-robin over ``host``'s targets; None when ``host`` names one target."""
    urls = split_hosts(host)
    return RoundRobin(urls) if len(urls) > 1 else None
