"""--host URL1,URL2,...: each request goes to the next target in turn; a failed one names its target."""

from __future__ import annotations

import socket

from locust.env import Environment

from llmload.users.context import attach
from tests.unit.users.test_llm_user import DONE, END, HEAD, THREE, Context, Deadlines, Server, User, run, settle


def test_requests_go_round_robin_over_the_targets_and_a_failed_one_names_its_target():
    a, b = Server(), Server()
    a.script = b.script = [HEAD, *THREE, DONE, END]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there once the block ends
    host = f"{a.url}, {b.url}/,{dead}"
    ctx = Context(Deadlines())
    env = Environment(user_classes=[User], host=host)
    attach(env, ctx)
    User.host = host
    users = [User(env), User(env)]  # two users share the process's turn: 6 requests, 2 to each target
    try:
        for u in users:
            u.on_start()
        for i in range(6):
            settle(run(users[i % 2]))
        assert len(a.requests) == 2 and len(b.requests) == 2
        assert [r.outcome for r in ctx.finished] == ["ok", "ok", "error"] * 2
        failed = ctx.finished[2]
        assert failed.error_kind == "connection" and failed.error_message.endswith(f"(target {dead})")
        assert a.requests[0].startswith(b"POST /v1/chat/completions HTTP/1.1")
    finally:
        ctx.watchdog.stop()
        for u in users:
            u.client.client.clientpool.close()
        a.stop()
        b.stop()


def test_one_host_is_locusts_base_url_as_before():
    server = Server()
    server.script = [HEAD, *THREE, DONE, END]
    ctx = Context(Deadlines())
    env = Environment(user_classes=[User], host=server.url)
    attach(env, ctx)
    User.host = server.url
    user = User(env)
    try:
        user.on_start()
        settle(run(user))
        assert user._targets is None and ctx.finished[0].outcome == "ok" and len(server.requests) == 1
    finally:
        ctx.watchdog.stop()
        user.client.client.clientpool.close()
        server.stop()
