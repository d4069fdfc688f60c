"""LLMUser's outcome state machine: ok, each error kind, interrupted, drain — one request each against a
scripted in-process server, with a fake load context and a watchdog on a clock the test moves.

Every request ends in exactly one ``finish`` with one outcome (``requests = ok + errors +
interrupted``); deadlines are fired by shifting the watchdog's clock and running one scan, so
nothing here waits for wall-clock time.
"""

from __future__ import annotations

import socket
import time

import gevent
import orjson
import pytest
from gevent.event import Event
from gevent.server import StreamServer
from locust.env import Environment

from llmload import redact
from llmload.adapters.base import AdapterConfig, Framing, RequestSpec
from llmload.adapters.openai_chat import OpenAIChatAdapter
from llmload.config.backoff import BackoffSpec
from llmload.errors import CLIENT_ERROR
from llmload.metrics.record import RequestRecord
from llmload.users import LLMUser
from llmload.users.context import attach, context_of
from llmload.users.deadlines import DRAIN_S, Deadlines, Watchdog
from llmload.workload import WorkloadSampler, load_profile

S = 1_000_000_000
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
END = b"0\r\n\r\n"
HOLD = "hold"  # the server stops sending (and keeps the connection open) until the test ends


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(obj: dict | str) -> bytes:
    data = obj if isinstance(obj, str) else orjson.dumps(obj).decode()
    return chunk(f"data: {data}\n\n".encode())


def token(text: str, finish: str | None = None) -> bytes:
    return event({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]})


DONE = event("[DONE]")
THREE = [token("a"), token("b"), token("c", finish="length")]


class Clock:
    """The real ``perf_counter_ns`` (what requests are stamped with) plus a shift the test adds, or a time it sets."""

    def __init__(self) -> None:
        self.shift = 0
        self.at: int | None = None

    def __call__(self) -> int:
        return self.at if self.at is not None else time.perf_counter_ns() + self.shift


class Context:
    """A :class:`~llmload.users.context.LoadContext` that keeps what the user finished."""

    def __init__(self, limits: Deadlines, adapter=None) -> None:
        self.clock = Clock()
        self.watchdog = Watchdog(limits, clock=self.clock)
        self.adapter = adapter or OpenAIChatAdapter(AdapterConfig(model="m"))
        self.sse_parser = "fast"
        self.steady_step: int | None = 2
        self.finished: list[RequestRecord] = []
        self.error_backoff = BackoffSpec(None, None)  # off unless a test turns it on
        self.backoffs: list[tuple[RequestRecord, float]] = []
        self.tickets: list | None = None  # open loop: the tickets take_ticket() hands out (None: closed loop)
        self.warmup_asked: list[int] = []  # the stamps starts_in_warmup() was asked at (one per request)
        self.warmup_left = 0  # this many requests more are in the warm-up

    def starts_in_warmup(self, now_ns: int) -> bool:
        self.warmup_asked.append(now_ns)
        self.warmup_left -= 1
        return self.warmup_left >= 0

    @property
    def open_loop(self) -> bool:
        return self.tickets is not None

    def take_ticket(self):
        return self.tickets.pop(0)

    def ticket_sample(self, ticket, sampler: WorkloadSampler):
        return sampler.sample(ticket.class_index)

    def new_sampler(self) -> WorkloadSampler:
        return WorkloadSampler(load_profile("default"), seed=1, user_index=0, max_tokens_cap=3)

    def headers_for(self, spec: RequestSpec) -> dict[str, str]:
        return {**spec.headers, "X-Test": "1"}

    def framing_for(self, content_type: str | None) -> Framing | None:
        return Framing.from_content_type(content_type, None) if content_type else self.adapter.default_framing

    def backed_off(self, rec: RequestRecord, seconds: float) -> None:
        self.backoffs.append((rec, seconds))

    def finish(self, rec: RequestRecord) -> None:
        self.finished.append(rec)


class Server:
    """Answers every request with ``script`` (bytes, :data:`HOLD`, or None = close the socket)."""

    def __init__(self) -> None:
        self.script: list = []
        self.sent = Event()  # the script ran up to a HOLD (or its end)
        self.requests: list[bytes] = []
        self.srv = StreamServer(("127.0.0.1", 0), self._handle)
        self.srv.start()
        self.url = f"http://127.0.0.1:{self.srv.server_port}"

    def _read_request(self, sock: socket.socket) -> bool:
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                return False
            buf += data
        head, _, body = buf.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
        while len(body) < length:
            body += sock.recv(65536)
        self.requests.append(head + b"\r\n\r\n" + body)
        return True

    def _handle(self, sock: socket.socket, _addr) -> None:
        while self._read_request(sock):
            for step in self.script:
                if step is None:
                    self.sent.set()
                    sock.close()
                    return
                if step == HOLD:
                    self.sent.set()
                    gevent.sleep(3600)
                sock.sendall(step)
            self.sent.set()

    def stop(self) -> None:
        self.srv.stop(timeout=1)


class User(LLMUser):
    host = "http://127.0.0.1:9"  # set per test


@pytest.fixture
def rig():
    made = []

    def make(script: list, limits: Deadlines | None = None, adapter=None, host: str | None = None):
        server = Server()
        server.script = script
        ctx = Context(limits or Deadlines(), adapter)
        env = Environment(user_classes=[User], host=host or server.url)
        attach(env, ctx)
        User.host = host or server.url
        user = User(env)
        user.on_start()
        made.append((server, ctx, user))
        return server, ctx, user

    yield make
    for server, ctx, user in made:
        ctx.watchdog.stop()
        user.client.client.clientpool.close()
        server.stop()


def run(user: User) -> gevent.Greenlet:
    return gevent.spawn(user.generate)


def settle(g: gevent.Greenlet) -> None:
    g.join(10)
    assert g.dead


def wait_for(condition) -> None:
    """Yield to the loop until ``condition()`` holds (it is state, not time, that the test waits for)."""
    for _ in range(100_000):
        if condition():
            return
        gevent.sleep(0.001)
    raise AssertionError("condition never held")


def fire(ctx: Context, seconds: float) -> None:
    """Move the watchdog's clock ``seconds`` ahead and run one scan where the hub timer runs it."""
    ctx.clock.shift += int(seconds * S)
    gevent.get_hub().loop.run_callback(ctx.watchdog.tick)
    gevent.sleep(0)


def fire_at(ctx: Context, ns: int) -> None:
    """Set the watchdog's clock to ``ns`` and run one scan where the hub timer runs it."""
    ctx.clock.at = ns
    gevent.get_hub().loop.run_callback(ctx.watchdog.tick)
    gevent.sleep(0)


def only(ctx: Context) -> RequestRecord:
    assert len(ctx.finished) == 1, ctx.finished  # one outcome per request, always
    rec = ctx.finished[0]
    assert ctx.watchdog.in_flight == 0 and rec.end_ns >= rec.start_ns > 0
    return rec


def test_ok_records_every_token_the_step_and_the_headers(rig):
    server, ctx, user = rig([HEAD, *THREE, DONE, END])
    settle(run(user))
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind, rec.status) == ("ok", None, 200)
    assert rec.output_tokens == 3 and len(rec.chunk_ns) == 3 and rec.finish_reason == "length"
    assert rec.step == 2 and rec.max_tokens == 3 and rec.reconnects == 0
    assert b"X-Test: 1" in server.requests[0] and b'"stream":true' in server.requests[0]
    assert rec.warmup is False and ctx.warmup_asked == [rec.start_ns]  # asked once, at its start


def test_a_request_that_starts_in_the_warmup_is_marked_once_at_its_start(rig):
    _, ctx, user = rig([HEAD, *THREE, DONE, END])
    ctx.warmup_left = 1
    settle(run(user))
    rec = only(ctx)
    assert rec.outcome == "ok" and rec.warmup is True and ctx.warmup_asked == [rec.start_ns]


@pytest.mark.parametrize(
    ("script", "kind", "message"),
    [
        ([b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 16\r\n\r\n{\"error\":\"boom\"}"], "http_500",
         "boom"),  # the server's own message
        ([HEAD, token("a"), None], "stream_disconnected", "connection lost after 1 token"),
        ([HEAD, chunk(b"data: {not json\n\n"), DONE, END], "malformed_chunk", ""),
        ([HEAD, token("a"), event({"error": {"message": "overloaded"}}), END], "server_error", "overloaded"),
        ([HEAD, token("a"), DONE, END], "stream_truncated", "after 1 of 3 tokens"),
        ([HEAD, DONE, END], "empty_response", "no content"),
    ],
)  # fmt: skip
def test_each_server_fault_is_one_error_of_its_kind(rig, script, kind, message):
    _, ctx, user = rig(script)
    settle(run(user))
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind) == ("error", kind)
    assert message in rec.error_message


def test_an_error_body_gives_the_servers_message_and_a_429_its_retry_after(rig):
    body = b'{"error": {"message": "maximum context length is 32768 tokens", "code": 429}}'
    head = b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 0\r\n"
    _, ctx, user = rig([head + b"Content-Length: %d\r\n\r\n" % len(body) + body])
    ctx.error_backoff = BackoffSpec(0.001, 0.002)
    settle(run(user))
    rec = only(ctx)
    assert (rec.error_kind, rec.error_message, rec.retry_after_s) == ("http_429", "maximum context length is 32768 tokens", 0.0)
    assert [(r, s > 0) for r, s in ctx.backoffs] == [(rec, True)]  # one wait after the error, reported
    assert user._backoff.errors_in_a_row == 1


KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
ECHO = b'{"error": {"message": "Incorrect API key provided: %s."}}' % KEY.encode()


@pytest.mark.parametrize(
    "script",
    [
        [b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(ECHO), ECHO)],  # a gateway's 401
        [HEAD, token("a"), event({"error": {"message": f"upstream refused Bearer {KEY[:20]}"}}), END],  # mid-stream
    ],
)  # fmt: skip
def test_a_key_the_server_echoes_never_reaches_the_record(rig, script):
    """Some gateways echo the key they refuse: the record (whence summary, console, reports) holds it masked."""
    redact.remember(KEY)
    _, ctx, user = rig(script)
    settle(run(user))
    rec = only(ctx)
    assert rec.outcome == "error" and redact.MASK in rec.error_message
    assert KEY[:8] not in rec.error_message and KEY[-8:] not in rec.error_message


def test_a_success_resets_the_backoff_and_waits_nothing(rig):
    _, ctx, user = rig([HEAD, *THREE, DONE, END])
    ctx.error_backoff = BackoffSpec(0.001, 0.002)
    user._backoff.errors_in_a_row = 3
    settle(run(user))
    assert only(ctx).outcome == "ok" and ctx.backoffs == [] and user._backoff.errors_in_a_row == 0


def test_backoff_off_waits_nothing_after_an_error(rig):
    _, ctx, user = rig([b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"])
    settle(run(user))
    rec = only(ctx)
    assert rec.error_kind == "http_500" and rec.error_message == "HTTP 500 (no message in the body)"
    assert ctx.backoffs == []


def test_a_repeated_content_type_header_reads_its_last_value(rig):
    """geventhttpclient gives a repeated header as a list (it failed the request as client_error, a traceback)."""
    twice = HEAD.replace(b"Content-Type: text/event-stream\r\n", b"Content-Type: text/plain\r\nContent-Type: text/event-stream\r\n")
    _, ctx, user = rig([twice, *THREE, DONE, END])
    settle(run(user))
    assert only(ctx).outcome == "ok"


def test_a_web_page_on_a_200_is_wrong_content_type(rig):
    page = b"<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>"
    _, ctx, user = rig([b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(page) + page])
    settle(run(user))
    rec = only(ctx)
    assert rec.error_kind == "wrong_content_type"
    assert "Content-Type text/html, expected text/event-stream: wrong --host or --endpoint-path?" in rec.error_message
    assert "Welcome to nginx!" in rec.error_message


def test_no_server_is_a_connection_error(rig):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    _, ctx, user = rig([], host=f"http://127.0.0.1:{port}")
    settle(run(user))
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind, rec.status) == ("error", "connection", 0)


@pytest.mark.parametrize(
    ("limits", "script", "tokens", "shift_s", "kind"),
    [
        (Deadlines(ttft=1.0), [HEAD, HOLD], 0, 1.01, "ttft_timeout"),
        (Deadlines(stall=1.0), [HEAD, token("a"), HOLD], 1, 1.01, "stall_timeout"),
        (Deadlines(total=5.0), [HEAD, token("a"), token("b"), HOLD], 2, 5.01, "total_timeout"),
        (Deadlines(ttft=1.0), [HOLD], 0, 1.01, "ttft_timeout"),  # no headers yet: the socket is dropped
    ],
)
def test_a_passed_deadline_is_its_own_error_kind(rig, limits, script, tokens, shift_s, kind):
    server, ctx, user = rig(script, limits)
    g = run(user)
    server.sent.wait(10)
    wait_for(lambda: any(len(f.record.chunk_ns) >= tokens and f.record.start_ns for f in ctx.watchdog.flights))
    r = next(iter(ctx.watchdog.flights)).record
    since = r.chunk_ns[-1] if kind == "stall_timeout" else r.start_ns  # what the deadline runs from
    # The watchdog's clock set from the request's own stamp: a busy box's real time between the stamp and
    # the scan cannot move it (20 ms of slack on the real clock once failed a 2-core run).
    fire_at(ctx, since + int((shift_s - 0.02) * S))
    assert not ctx.finished  # not yet past the deadline
    fire_at(ctx, since + int(shift_s * S))
    settle(g)
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind) == ("error", kind) and "no progress within" in rec.error_message
    assert len(rec.chunk_ns) == tokens and rec.output_tokens == tokens  # what arrived is kept


def test_the_end_of_the_test_interrupts_a_request_neither_ok_nor_error(rig):
    server, ctx, user = rig([HEAD, token("a"), HOLD])
    g = run(user)
    server.sent.wait(10)
    wait_for(lambda: any(f.record.chunk_ns for f in ctx.watchdog.flights))
    g.kill(block=True)  # Locust stops a user by killing its greenlet
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind) == ("interrupted", None) and rec.output_tokens == 1


def test_a_missing_http_terminator_after_done_is_drained_without_changing_the_outcome(rig):
    server, ctx, user = rig([HEAD, *THREE, DONE, HOLD])
    g = run(user)
    server.sent.wait(10)
    wait_for(lambda: any(f.draining for f in ctx.watchdog.flights))
    fire(ctx, DRAIN_S + 0.01)
    settle(g)
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind) == ("ok", None) and rec.output_tokens == 3


class BrokenAdapter(OpenAIChatAdapter):
    def feed(self, state, data, event=""):
        raise RuntimeError("adapter bug")


def test_a_bug_in_an_adapter_is_a_client_error_and_still_shows_its_traceback(rig):
    _, ctx, user = rig([HEAD, token("a"), DONE, END], adapter=BrokenAdapter(AdapterConfig(model="m")))
    g = run(user)
    g.join(10)
    assert isinstance(g.exception, RuntimeError)  # Locust shows it; the request is still counted
    rec = only(ctx)
    assert (rec.outcome, rec.error_kind) == ("error", CLIENT_ERROR) and "adapter bug" in rec.error_message


def test_without_llmload_a_user_says_how_to_turn_it_on():
    with pytest.raises(RuntimeError, match=r"llmload.plugin.activate\(locust.events\)"):
        context_of(Environment(user_classes=[User]))


def test_open_loop_sends_the_tickets_class_timed_from_its_intended_send_time(rig):
    from llmload.arrivals.dispatcher import Ticket

    server, ctx, user = rig([HEAD, *THREE, DONE, END])
    intended = time.perf_counter_ns() - 250_000_000  # the schedule said 250 ms ago: the ticket waited
    ctx.tickets = [Ticket(index=7, class_index=2, intended_ns=intended, lag_ns=0, waited=True)]
    settle(run(user))
    rec = only(ctx)
    assert rec.outcome == "ok" and rec.class_name == "long"  # the default profile's third class
    assert rec.intended_ns == intended and rec.start_ns - intended >= 250_000_000
    from llmload.metrics.definitions import ttft_s

    assert ttft_s(rec) >= 0.25 and ctx.tickets == []


def test_open_loop_a_traces_session_is_replayed_by_the_user_that_took_its_ticket(rig):
    import random

    from llmload.arrivals.dispatcher import Ticket
    from llmload.workload.replay_session import ReplaySession
    from llmload.workload.trace_sessions import SessionTurn
    from llmload.workload.traces import TraceEntry

    server, ctx, user = rig([HEAD, *THREE, DONE, END])
    tools = ({"type": "function", "function": {"name": "search", "parameters": {}}},)
    ended = []
    entry = TraceEntry(0.0, 9, 3, (), SessionTurn("s-1", 1, user_tokens=9, tools=tools))
    session = ReplaySession([entry], (5,), random.Random(1), "trace", on_end=lambda: ended.append(1))
    ctx.ticket_sample = lambda ticket, sampler: session
    intended = time.perf_counter_ns()
    ctx.tickets = [Ticket(index=5, class_index=0, intended_ns=intended, lag_ns=0, waited=False)]
    settle(run(user))
    rec = only(ctx)
    assert (rec.outcome, rec.class_name, rec.session, rec.turn, rec.arrival_index) == ("ok", "trace", "s-1", 1, 5)
    assert rec.intended_ns == intended and rec.agent is not None and rec.agent.last and ended == [1]
    assert b'"tools":[{"type":"function","function":{"name":"search"' in server.requests[0]
