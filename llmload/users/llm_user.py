"""The Locust user that streams LLM requests and times every token.

:class:`LLMUser` is a ``FastHttpUser`` (geventhttpclient: the cheapest Locust client per
token, measured in shared/research/locust.md). Each task iteration sends one request of
the workload's next class, reads the stream through :mod:`llmload.users.stream`, and
finishes the :class:`~llmload.metrics.record.RequestRecord`. Everything it needs from its
process comes from its :class:`~llmload.users.context.LoadContext`.

* outcome ``ok`` / ``error`` (with its kind, see :mod:`llmload.errors`) / ``interrupted``
  (cut by the end of the test: neither ok nor error). A connection failure is
  ``connection`` before the response headers and ``stream_disconnected`` after them;
* a request that met a stale keep-alive connection before any response byte was sent
  again once on a fresh connection by :mod:`llmload.users.http_pool`
  (``record.reconnects``); its TTFT and E2E still run from the first send;
* after a failed request the user backs off (:mod:`llmload.users.backoff_wait`,
  ``--error-backoff``): it waits before its next request, longer after each error in a
  row, at least what a 429/503's ``Retry-After`` asked for; a success resets the wait. The
  time spent is reported to the context (:meth:`LoadContext.backed_off`), per class;
* an error keeps the server's own message (:func:`llmload.users.error_body.error_message`:
  ``error.message`` of a JSON body, or the body's text, 200 characters at most); a 200
  whose content type is not a stream fails as ``wrong_content_type``;
* the record goes to every listener of ``llmload_request`` (the recorder is one);
* Locust's ``request`` event fires once with the E2E time (request_type ``E2E``, name =
  class; failures carry the error; ``--locust-ttft-rows`` adds one with TTFT) — never once
  per token. Interrupted requests fire nothing (:meth:`llmload.runtime.load_role.LoadProcess.finish`).

Errors never escape the task: a failed request is counted and the user carries on.

**Conversations.** A profile with a conversation class is driven through sessions
(:mod:`llmload.workload.conversation`): each :meth:`LLMUser.generate` call sends one turn
of the user's current session; before every turn but the first the user sleeps the
session's think time, keeping its slot (a Locust user is one session, so the concurrency
of such classes is the number of active sessions). The turn's answer text is kept only
while a next turn will re-send it (``StreamState.text_parts``, joined once at the end).
A turn that does not end ``ok`` ends its session: there is no reply to continue from.
An agent class's turn (:mod:`llmload.workload.agent`) carries its :class:`AgentTurn` on the
record; when its answer held tool calls, the user waits the tools' latency (holding its slot,
as for think time, measured as ``waited_s`` on the next turn's record) and the next turn sends
the calls and their results.
"""

from __future__ import annotations

import random
import socket
import time
from time import perf_counter, perf_counter_ns
from typing import TYPE_CHECKING, Any

import gevent
from gevent import GreenletExit
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError
from locust import constant, task
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_RUNNING, LOCUST_STATE_STOPPING, LOCUST_STATE_WAITING

from llmload.adapters.base import StreamState
from llmload.config.targets import round_robin
from llmload.config.values import public_url
from llmload.errors import (
    CLIENT_ERROR,
    ConnectError,
    StreamDisconnected,
    StreamError,
)
from llmload.metrics.definitions import settle_reasoning, settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.redact import mask
from llmload.users.backoff_wait import Backoff
from llmload.users.context import LoadContext, context_of
from llmload.users.deadlines import Deadline, Flight, Watchdog
from llmload.users.http_pool import BodyReader, install_keepalive, take_reconnects
from llmload.users.idle_footprint import lighten
from llmload.users.response_checks import check_complete, raise_for_status, raise_not_a_stream
from llmload.users.stream import consume
from llmload.users.sub_agents import fan_out
from llmload.workload.agent import AgentSession, AgentTurn, ToolCall
from llmload.workload.replay_session import ReplaySession

if TYPE_CHECKING:
    from llmload.workload.conversation import Session
    from llmload.workload.request_types import RequestSample
    from llmload.workload.sampler import WorkloadSampler

__all__ = ["LLMUser"]

_CONNECTION_ERRORS = (OSError, HTTPConnectionClosed, HTTPParseError, socket.timeout, ConnectionError)
# The jitter of every user's error backoff: unseeded, as each user's own was; one for the process, since
# a Random holds 2.5 KB of state and a user that thinks or waits for a tool should hold as little as it can.
_BACKOFF_RNG = random.Random()


class LLMUser(FastHttpUser):
    """Closed-loop LLM user: one request in flight at a time, next one right after.

    Subclass it in a locustfile (see ``locustfiles/chat_stream.py``); set ``wait_time``
    for think time between requests.
    """

    abstract = True
    wait_time = constant(0)
    # Deadlines are enforced by llmload's watchdog, so reads need no socket timeout (each
    # one costs a gevent Timeout per socket wait: ~10 % of the CPU per token, measured);
    # with every deadline off, this socket timeout is the last resort against a hung read.
    network_timeout = 3600.0
    connection_timeout = 30.0

    def __init__(self, environment) -> None:
        self._context: LoadContext = context_of(environment)
        if self._context.watchdog.limits.any:
            self.network_timeout = None  # type: ignore[assignment]  # locust says float; None: no timeout
        super().__init__(environment)
        install_keepalive(self.client)
        self._targets = round_robin(self.host) if self.host and "," in self.host else None  # --host URL1,URL2,...

    _sampler: WorkloadSampler
    _backoff: Backoff
    _session: Session | None = None
    _session_id = ""  # "<user index>.<n>": the user's n-th conversation; user indexes are unique across workers
    _sessions = 0
    _reply: tuple[str, int, Any] | None = None  # the last turn's answer text, output tokens and tool calls (agents)

    def on_start(self) -> None:
        self._sampler = self._context.new_sampler()
        self._backoff = Backoff(self._context.error_backoff, _BACKOFF_RNG)
        self._session = self._reply = None
        lighten(self)  # a cookie jar made at the first cookie, a list for Locust's task queue: less held while idle

    def _drop_connections(self) -> None:
        """Close this user's connections (only when its pool is its own, as by default)."""
        if type(self).client_pool is None:
            self.client.client.clientpool.close()

    @task
    def generate(self) -> None:
        """One unit of the workload: the next request of the mix, sent and recorded.

        What to send and when lives here (the mix, conversation turns, or an open-loop ticket;
        error backoff is decided at this level too); :meth:`send` is one request. Open loop:
        wait for the next arrival's ticket, send the request it names (a request of its class,
        or a trace entry's), timed from its intended send time. Closed loop: after a failed request the user backs off before its
        next one (an open-loop arrival is not delayed: its schedule decides when it is sent).
        """
        ctx = self._context
        if ctx.open_loop:
            ticket = self._wait_for_ticket(ctx)
            sample = ctx.ticket_sample(ticket, self._sampler)
            if isinstance(sample, ReplaySession):  # a trace's session: its turns in order (llmload.workload.replay_session)
                sample.run(self.send, self._think, ticket.intended_ns)
                return
            self.send(sample, intended_ns=ticket.intended_ns, arrival_index=ticket.index)
            return
        sampler = self._sampler
        rec = self.send(sampler.next()) if not sampler.has_conversations else self._turn()
        self._back_off(rec)

    def _back_off(self, rec: RequestRecord) -> None:
        """After ``rec``: reset the backoff on a success, sleep it after an error (reported to the context)."""
        backoff = self._backoff
        if rec.outcome == "ok":
            backoff.after_success()
            return
        if rec.outcome != "error":
            return
        ctx = self._context
        backoff.spec = ctx.error_backoff  # the web UI form may have changed it
        delay = backoff.after_error(rec.retry_after_s)
        if delay <= 0:
            return
        t0 = perf_counter()
        try:
            gevent.sleep(delay)
        finally:  # also when the test stops during the wait: the time was spent
            ctx.backed_off(rec, perf_counter() - t0)

    def _turn(self) -> RequestRecord:
        """The next turn of this user's session (a new session when none is running); its record."""
        session, last = self._session, self._reply
        waited = 0.0
        if session is None or session.done or last is None:
            session = self._session = self._sampler.start_session()
            if session.conversation:
                self._sessions += 1
                self._session_id = f"{self._sampler.user_index}.{self._sessions}"
            sample = session.next_turn()
        elif isinstance(session, AgentSession) and session.fanout_due:  # sub-agents run first (llmload.users.sub_agents)
            sample, waited = fan_out(self, session, last)
        elif last[2]:  # the answer was tool calls: run them, send the results
            t0 = perf_counter()
            self._think(session.tool_wait_s(last[2]))  # type: ignore[attr-defined]
            waited = perf_counter() - t0
            sample = session.next_turn(last[0], last[1], last[2])  # type: ignore[call-arg]
        else:
            if session.think_time_s > 0:
                self._think(session.think_time_s)
            sample = session.next_turn(last[0], last[1])
        conversation = session.conversation
        agent = session.agent_turn(waited) if isinstance(session, AgentSession) else None
        rec = self.send(sample, turn=sample.turn if conversation else 0, keep_reply=not session.done,
                        session=self._session_id if conversation else "", agent=agent)  # fmt: skip
        if agent is not None:
            session.took(rec.start_ns, rec.input_tokens, rec.output_tokens)  # type: ignore[attr-defined]
        if rec.outcome != "ok" or session.done:
            self._session = self._reply = None  # no reply to continue from, or the last turn
        else:
            calls = rec.agent.calls if rec.agent is not None else None
            self._reply = (rec.reply_text or "", rec.output_tokens, calls)  # not the record: its chunk stamps can go
        return rec

    def _think(self, seconds: float) -> None:
        """The pause before a next turn: the session keeps its user, which is idle, not in a request.

        As in Locust's own ``wait()``: a graceful stop (``--stop-timeout``, which ladders set)
        waits for running requests only, so a thinking user is stopped at once.
        """
        if self._state == LOCUST_STATE_STOPPING:
            raise StopUser()
        self._state = LOCUST_STATE_WAITING
        gevent.sleep(seconds)
        if self._state == LOCUST_STATE_STOPPING:
            raise StopUser()
        self._state = LOCUST_STATE_RUNNING

    def _wait_for_ticket(self, ctx: LoadContext):
        """The next ticket; while waiting, the user can be stopped at once, as in Locust's own ``wait()``.

        A user waiting for an arrival is idle, not in a request: Locust's graceful stop (a
        ``--stop-timeout``, which ladders set) waits for running tasks only, and stops a
        waiting user right away. Locust marks that state on ``User._state`` (``TaskSet.wait``).
        """
        if self._state == LOCUST_STATE_STOPPING:
            raise StopUser()
        self._state = LOCUST_STATE_WAITING
        ticket = ctx.take_ticket()
        if self._state == LOCUST_STATE_STOPPING:
            raise StopUser()
        self._state = LOCUST_STATE_RUNNING
        return ticket

    def send(
        self, sample: RequestSample, *, turn: int = 0, keep_reply: bool = False, intended_ns: int = 0,
        arrival_index: int = -1, session: str = "", agent: AgentTurn | None = None,
    ) -> RequestRecord:
        """Send one request, read its stream, and finish its record (never raises for a failed request).

        ``turn``: the request's turn in its conversation (0: not a conversation), and ``session`` the
        conversation's id, recorded; ``agent``: an agent class's turn (put on the record).
        ``keep_reply``: keep the answer text on ``record.reply_text`` (a next turn re-sends it).
        ``intended_ns`` (open loop): the ``perf_counter_ns()`` time the request should have
        been sent; its TTFT and E2E run from there (``metrics/definitions.py``); ``arrival_index``
        its arrival's index (recorded).
        """
        ctx = self._context
        adapter = ctx.adapter
        spec = adapter.build_request(sample)
        rec = RequestRecord(sample.class_name, sample.input_tokens, spec.max_tokens)
        rec.intended_ns = intended_ns
        rec.arrival_index = arrival_index
        rec.step = ctx.steady_step
        rec.turn, rec.session, rec.agent = turn, session, agent
        rec.user = self._sampler.user_index
        rec.batched(spec.inputs)
        rec.images, rec.request_bytes = len(sample.images or ()), len(spec.body)
        watchdog = ctx.watchdog
        flight = watchdog.register(rec)
        reader: BodyReader | None = None
        clean = False
        target = self._targets.next() if self._targets is not None else ""  # "": Locust's base URL, the one --host
        try:
            rec.start_wall_ns = time.time_ns()
            rec.start_ns = perf_counter_ns()
            rec.warmup = ctx.starts_in_warmup(rec.start_ns)  # decided once, as it starts
            resp = self.client.request(spec.method, target + spec.path, name=sample.class_name,
                                       data=spec.body,  # type: ignore[arg-type]  # locust says str | dict; bytes go as they are
                                       headers=ctx.headers_for(spec), stream=True, catch_response=True)  # fmt: skip
            rec.headers_ns = perf_counter_ns()
            rec.status = resp.status_code or 0
            if getattr(resp, "_response", None) is not None:
                reader = BodyReader(resp)
            reader = raise_for_status(resp, reader, rec)  # (the same reader: there is one from here on)
            # a repeated header comes from geventhttpclient as a list: the last one counts (as browsers read it)
            given: str | list[str] | None = resp.headers.get("content-type") if resp.headers else None
            content_type = given[-1] if isinstance(given, list) else given
            framing = ctx.framing_for(content_type)
            if framing is None:
                raise_not_a_stream(resp, content_type, reader)
            state = StreamState()
            if keep_reply:
                state.text_parts = []
            done = consume(framing, reader, adapter, state, rec, ctx.sse_parser)
            if not rec.end_ns:
                rec.end_ns = perf_counter_ns()
            _settle(rec, state, keep_reply)
            check_complete(rec, state, framing)
            rec.outcome = "ok"  # decided; what follows only keeps the connection reusable
            if done and not reader.complete:
                flight.draining = True
                _drain(reader)
            clean = reader.complete
        except Deadline as d:
            self._cut(rec, d, reader)
        except StreamError as e:
            _fail(rec, e.kind, str(e))
        except _CONNECTION_ERRORS as e:
            _fail_connection(rec, e, reader)
        except GreenletExit:
            if rec.outcome != "ok":
                rec.outcome = "interrupted"
            raise
        except Exception as e:  # a bug in an adapter or in llmload: count it, and let Locust show the traceback
            _fail(rec, CLIENT_ERROR, f"{type(e).__name__}: {e}")
            raise
        finally:
            _close(ctx, watchdog, flight, rec, reader, clean, target)
        return rec

    def _cut(self, rec: RequestRecord, d: Deadline, reader: BodyReader | None) -> None:
        """A deadline cut the request (the watchdog, :mod:`llmload.users.deadlines`)."""
        if d.kind != "drain":  # drain: the answer was complete, only the HTTP terminator never came
            _fail(rec, d.kind, f"no progress within {d.limit_s:g}s ({d.kind})")
        if reader is None:  # cut while waiting for headers: the socket is out of reach
            self._drop_connections()


def _settle(rec: RequestRecord, state: StreamState, keep_reply: bool) -> None:
    """A finished stream's state onto its record: token counts, reasoning, cache, reply, finish reason, server timing."""
    settle_token_counts(rec, state.usage_prompt_tokens, state.usage_completion_tokens)
    settle_reasoning(rec, state.first_output_chunk, state.reasoning_chunks, state.reasoning_extra_tokens,
                     state.usage_reasoning_tokens)  # fmt: skip
    rec.cached_prompt_tokens = state.usage_cached_tokens
    if keep_reply:
        rec.reply_text = state.reply_text()
    rec.finish_reason = state.finish_reason
    if state.tool_calls is not None and rec.agent is not None:
        rec.agent.calls = tuple(ToolCall(*c) for c in state.tool_calls)
    if state.server_timing is not None:
        rec.server_timing = state.server_timing
        rec.server_queue_ms = state.server_queue_ms
        rec.server_prefill_ms = state.server_prefill_ms
        rec.server_decode_ms = state.server_decode_ms


def _fail_connection(rec: RequestRecord, e: BaseException, reader: BodyReader | None) -> None:
    """A connection error: ``connection`` before the response headers, ``stream_disconnected`` after them."""
    if reader is None:
        _fail(rec, ConnectError.kind, f"{type(e).__name__}: {e}")
    else:  # the headers had arrived: the answer was cut
        n = rec.counted_tokens
        tokens = f"{n} token{'s' if n != 1 else ''}"
        _fail(rec, StreamDisconnected.kind, f"connection lost after {tokens} ({type(e).__name__}: {e})")


def _close(ctx: LoadContext, watchdog: Watchdog, flight: Flight, rec: RequestRecord, reader: BodyReader | None,
           clean: bool, target: str) -> None:
    """The end of every request, however it ended: off the watchdog, end time and tokens set, the record handed on."""
    rec.reconnects = take_reconnects()
    watchdog.unregister(flight)
    if not rec.end_ns:
        rec.end_ns = perf_counter_ns()
    if rec.outcome != "ok" and not rec.output_tokens:
        rec.output_tokens = rec.counted_tokens
    if reader is not None and not clean:
        reader.discard()
    if target and rec.outcome == "error":  # which of several targets failed
        rec.error_message = f"{rec.error_message} (target {public_url(target)})"
    ctx.finish(rec)


def _drain(reader: BodyReader) -> None:
    """After ``[DONE]``: read the HTTP terminator so the connection can be reused."""
    while reader.readline():
        pass


def _fail(rec: RequestRecord, kind: str, message: str) -> None:
    if rec.outcome == "ok":  # decided before the fault: only reading the HTTP terminator failed
        return
    rec.outcome = "error"
    rec.error_kind = kind
    rec.error_message = mask(message)  # a key the server echoed never reaches the record (llmload.redact)
