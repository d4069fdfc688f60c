"""A port for a server a test starts itself, outside the kernel's ephemeral range.

``bind(("127.0.0.1", 0))`` hands out a port from the ephemeral range (32768-60999 here), and
then releases it: between that and the server's own bind, any outgoing connection on the box
(the suite makes thousands: simulators, Prometheus, Chromium, a C++ build's downloads) may be
given the same port as its local end, and the server fails with "Address already in use" (a
``--processes`` master did once in a fresh-clone ``make test``). Ports below the ephemeral
range are never handed to outgoing connections, so only another listener can take one: a
random pick among ~12 000, checked free, makes that a one-in-thousands coincidence between
two tests starting at the same instant instead of a function of the box's traffic.
"""

from __future__ import annotations

import random
import socket

__all__ = ["free_port"]

_LOW, _HIGH = 20000, 32000  # below Linux's default ip_local_port_range (32768-60999)
_rng = random.SystemRandom()


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(v) for v in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now and no outgoing connection will be given."""
    eph_lo, eph_hi = _ephemeral_range()
    for _ in range(200):
        port = _rng.randrange(_LOW, _HIGH)
        if eph_lo <= port <= eph_hi:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {_LOW}-{_HIGH} outside the ephemeral range {eph_lo}-{eph_hi}")
