"""Pooled connections a server closes: a real Locust run against llama.cpp's keep-alive behaviour.

The faulty server's ``keepalive:<T>:<M>:<K>`` mode (see tests/servers/faulty.py) announces
``Keep-Alive: timeout=T, max=M`` and drops, unanswered, a request that arrives on a
connection past those limits, or past K requests when K > 0 (llama.cpp closes after every
streamed response, whatever it announced). A request on such a connection fails before any
response byte; the client must either not reuse the connection (the announced limits) or
send the request again, once, on a fresh connection (the unannounced close), and count it.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.helpers.harness import run_inprocess, write_tiny_profile

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tiny_profile(tmp_path_factory):
    return write_tiny_profile(tmp_path_factory.mktemp("profiles"), output_tokens=4)


def _stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/stats", timeout=5) as r:
        return json.loads(r.read())


def _run(faulty, profile, mode, **kw):
    before = _stats(faulty)
    s = run_inprocess(faulty, ["--model", mode, "--profile", profile], **kw)
    after = _stats(faulty)
    return s, {k: after[k] - before[k] for k in after}


def _accounted(o: dict) -> None:
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]


def _server_saw(server: dict, o: dict) -> None:
    """Each request reached the server once, plus once more per reconnect (an interrupted one may not have)."""
    sent = o["requests"] + o["reconnects"]
    assert sent - o["interrupted"] <= server["requests"] <= sent


def test_unannounced_close_after_every_stream_is_retried_once_and_counted(faulty, tiny_profile):
    # llama.cpp: "Keep-Alive: timeout=5, max=100", yet the connection closes after each stream.
    s, server = _run(faulty, tiny_profile, "keepalive:5:100:1", users=2, seconds=2.0)
    o = s["overall"]
    _accounted(o)
    assert o["errors"] == 0, s["errors_by_kind"]
    assert o["ok"] >= 20
    # Every dropped request was sent again on a fresh connection, and only those (a request
    # cut by the end of the test may have been dropped before it could see it and retry).
    assert server["dropped"] >= o["ok"] // 2
    assert o["reconnects"] <= server["dropped"] <= o["reconnects"] + o["interrupted"]
    assert s["classes"]["tiny"]["reconnects"] == o["reconnects"]
    _server_saw(server, o)


def test_announced_max_requests_closes_the_connection_before_the_server_does(faulty, tiny_profile):
    s, server = _run(faulty, tiny_profile, "keepalive:5:3:0", users=2, seconds=2.0)
    o = s["overall"]
    _accounted(o)
    assert o["errors"] == 0, s["errors_by_kind"]
    assert o["ok"] >= 20
    assert server["dropped"] == 0 and o["reconnects"] == 0  # foreseen: nothing had to be sent twice
    assert server["connections"] >= o["ok"] // 3  # a connection carried at most 3 requests


def test_announced_idle_timeout_closes_the_connection_before_the_server_does(faulty, tiny_profile):
    # Think time 1.1 s > timeout=1 s: the server would drop every request on a reused connection.
    s, server = _run(faulty, tiny_profile, "keepalive:1:100:0", users=1, seconds=3.0, wait_s=1.1)
    o = s["overall"]
    _accounted(o)
    assert o["errors"] == 0, s["errors_by_kind"]
    assert o["ok"] >= 2
    assert server["dropped"] == 0 and o["reconnects"] == 0
    assert server["connections"] >= o["ok"]


def test_a_failure_on_a_fresh_connection_is_not_retried(faulty, tiny_profile):
    # Every request meets a closed connection before its answer, on a connection of its own.
    s, server = _run(faulty, tiny_profile, "close_before_headers", users=2, seconds=1.0)
    o = s["overall"]
    _accounted(o)
    assert o["errors"] >= 2 and s["errors_by_kind"] == {"connection": o["errors"]}
    assert o["reconnects"] == 0
    _server_saw(server, o)


def test_a_stream_cut_after_bytes_arrived_is_never_sent_again(faulty, tiny_profile):
    # Headers and two tokens arrived, then the connection closed: an error, never a retry.
    s, server = _run(faulty, tiny_profile, "close_midstream:2", users=2, seconds=1.0)
    o = s["overall"]
    _accounted(o)
    assert o["errors"] >= 2 and s["errors_by_kind"] == {"stream_disconnected": o["errors"]}
    assert o["reconnects"] == 0
    _server_saw(server, o)
