"""lighten(): a cookie jar made at the first cookie, Locust's task queue as a list; cookies still kept and sent."""

from __future__ import annotations

from http.cookiejar import CookieJar

import gevent
import pytest
from gevent.server import StreamServer
from locust import FastHttpUser, constant, task
from locust.env import Environment
from locust.user.task import DefaultTaskSet

from llmload.users.idle_footprint import LazyCookieJar, TaskQueue, lighten


class CookieServer:
    """Answers every request; sets ``Set-Cookie`` on the requests whose index is in ``set_on``; records Cookie headers."""

    def __init__(self, set_on: set[int], header: bytes = b"Set-Cookie") -> None:
        self.set_on, self.header = set_on, header
        self.cookies: list[bytes | None] = []
        self.srv = StreamServer(("127.0.0.1", 0), self.handle)
        self.srv.start()
        self.url = f"http://127.0.0.1:{self.srv.server_port}"

    def handle(self, sock, _addr):
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = {k.strip().lower(): v.strip() for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])}
            n = len(self.cookies)
            self.cookies.append(lines.get(b"cookie"))
            extra = self.header + b": sid=abc%d; Path=/\r\n" % n if n in self.set_on else b""
            sock.sendall(b"HTTP/1.1 200 OK\r\n" + extra + b"Content-Length: 2\r\n\r\nok")

    def stop(self) -> None:
        self.srv.stop()


@pytest.fixture
def cookie_server():
    servers = []

    def start(set_on, header=b"Set-Cookie"):
        servers.append(CookieServer(set_on, header))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def make_user(url: str) -> FastHttpUser:
    class U(FastHttpUser):
        host = url
        wait_time = constant(0)

        @task
        def t(self):
            pass

    user = U(Environment(user_classes=[U]))
    user._taskset_instance = DefaultTaskSet(user)  # as User.run() makes it, before on_start
    return user


def get(user: FastHttpUser) -> None:
    resp = user.client.get("/")
    assert resp.status_code == 200, resp.error


def test_no_jar_until_a_cookie_arrives_then_cookies_are_kept_and_sent(cookie_server):
    srv = cookie_server({2})
    user = make_user(srv.url)
    lighten(user)
    jar = user.client.cookiejar
    assert isinstance(jar, LazyCookieJar) and user.client.client.cookiejar is jar  # the agent uses the same one
    get(user)
    get(user)
    assert not jar.made and len(jar) == 0 and list(jar) == []  # no cookie yet: no jar held
    get(user)  # this answer sets sid=abc2
    assert jar.made and [c.value for c in jar] == ["abc2"]
    get(user)
    assert srv.cookies == [None, None, None, b"sid=abc2"]  # sent back as a CookieJar would


@pytest.mark.parametrize("header", [b"set-cookie", b"SET-COOKIE"])
def test_any_spelling_of_the_header_makes_the_jar(cookie_server, header):
    srv = cookie_server({0}, header)
    user = make_user(srv.url)
    lighten(user)
    get(user)
    get(user)
    assert srv.cookies == [None, b"sid=abc0"]


def test_the_rest_of_the_jar_interface_makes_the_jar():
    jar = LazyCookieJar()
    jar.clear()  # CookieJar's own method, through the real jar
    assert jar.made and isinstance(jar.jar, CookieJar)


def test_task_queue_keeps_the_deque_order_with_the_real_taskset(cookie_server):
    user = make_user(cookie_server(set()).url)
    lighten(user)
    ts = user._taskset_instance
    assert type(ts._task_queue) is TaskQueue
    order = []
    ts.schedule_task(lambda u: order.append("b"))
    ts.schedule_task(lambda u: order.append("a"), first=True)
    ts.schedule_task(lambda u: order.append("c"))
    while ts._task_queue:
        ts.execute_next_task()
    assert order == ["a", "b", "c"]


def test_a_jar_with_cookies_or_a_busy_queue_is_left_alone(cookie_server):
    srv = cookie_server({0})
    user = make_user(srv.url)
    get(user)  # the plain CookieJar holds sid=abc0 now
    user._taskset_instance.schedule_task(lambda u: None)
    jar, queue = user.client.cookiejar, user._taskset_instance._task_queue
    lighten(user)
    assert user.client.cookiejar is jar and user._taskset_instance._task_queue is queue


def test_a_lightened_user_runs_its_tasks(cookie_server):
    """A real Locust run loop over the list queue: the task runs again and again."""
    srv = cookie_server(set())
    runs = []

    class U(FastHttpUser):
        host = srv.url
        wait_time = constant(0)

        def on_start(self):
            lighten(self)

        @task
        def t(self):
            runs.append(type(self._taskset_instance._task_queue))
            get(self)

    user = U(Environment(user_classes=[U]))
    g = gevent.spawn(user.run)
    gevent.sleep(0.2)
    g.kill()
    assert len(runs) >= 3 and set(runs) == {TaskQueue} and len(srv.cookies) == len(runs)
