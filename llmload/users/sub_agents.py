"""Sub-agent fan-out, run by a user: child sessions as greenlets beside the parent, which waits for them all.

What a fan-out is and how the parent's next turn carries the children's answers is in
:mod:`llmload.workload.fanout`; this module runs one (:func:`fan_out`) for an
:class:`~llmload.users.llm_user.LLMUser` whose agent session is due one
(:attr:`~llmload.workload.agent.AgentSession.fanout_due`):

* each child session runs in a greenlet of its own, spawned at once, inside the Locust user:
  its requests go through the user's own :meth:`send` (its HTTP client, whose pool holds up to
  10 connections, the watchdog's deadlines, Locust's statistics and llmload's records), each
  record marked as a child turn (``AgentTurn.child``) with the child's session id
  ``<parent session>.f<n>.<i>`` (the parent's n-th fan-out, its i-th child);
* a child is an agent loop: it runs its tool calls (waiting their latency, as the parent does; no
  think time) until the model answers in text, its final answer, or its ``turns`` requests are
  sent (its last is sent with ``tool_choice`` ``"none"``, so the model answers in text: that answer is its). A failed turn ends the child (its record is the
  class's error, as any), and the parent gets an error result for it; a bug raised in a child is
  logged and treated the same: neither ends the parent;
* the parent, meanwhile, runs its own tool calls of the same turn (if any), then waits for every
  child (``fanout_s``: from the children's start to the last one's end, recorded on the parent's
  next turn), keeping its slot: its session stays in flight and its user stays busy;
* stopping: a forced stop (the end of ``-t``, a quit) kills the parent's greenlet, which kills
  its children at once (a child's request in flight ends ``interrupted``, as any); a graceful
  stop (``--stop-timeout``) lets the children's requests in flight finish and start no new
  turn, then stops the user before the parent's next turn.
"""

from __future__ import annotations

import logging
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol

import gevent
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_STOPPING

from llmload.workload.fanout import ChildAnswer, Delegation

if TYPE_CHECKING:
    from llmload.metrics.record import RequestRecord
    from llmload.workload.agent import AgentSession, AgentTurn
    from llmload.workload.request_types import RequestSample

__all__ = ["Parent", "fan_out", "run_child"]

log = logging.getLogger(__name__)


class Parent(Protocol):
    """What a fan-out needs of its user (:class:`~llmload.users.llm_user.LLMUser`)."""

    _state: str | None  # Locust's User._state
    _session_id: str

    def send(self, sample: RequestSample, *, turn: int = 0, keep_reply: bool = False, session: str = "",
             agent: AgentTurn | None = None) -> RequestRecord: ...  # fmt: skip


def fan_out(user: Parent, session: AgentSession, reply: tuple[str, int, Any]) -> tuple[RequestSample, float]:
    """Run the fan-out due after ``session``'s last turn (answered ``reply``: text, tokens, tool calls or None).

    Returns the parent's next turn, which carries the children's answers (and the results of the
    reply's own tool calls), and how long those tool calls ran (0 when none), measured as the user
    measures a tool wait. Raises :class:`~locust.exception.StopUser` when a graceful stop came meanwhile.
    """
    text, tokens, calls = reply
    children = session.children()
    base = f"{user._session_id}.f{session.fanouts}"
    t0 = perf_counter()
    group = [gevent.spawn(run_child, user, child, f"{base}.{i}") for i, child in enumerate(children, 1)]
    tool_s = 0.0
    try:
        if calls:  # the parent's own tools run beside its children
            gevent.sleep(session.tool_wait_s(calls))
            tool_s = perf_counter() - t0
        gevent.joinall(group)
    finally:
        running = [g for g in group if not g.dead]
        if running:  # the parent was stopped: so are its children
            gevent.killall(running)
    waited = perf_counter() - t0
    if user._state == LOCUST_STATE_STOPPING:
        raise StopUser()
    answers = tuple(g.value if isinstance(g.value, ChildAnswer) else ChildAnswer.failed("client_error") for g in group)
    return session.next_turn(text, tokens, calls, delegated=Delegation(answers, waited)), tool_s


def run_child(user: Parent, child: AgentSession, session_id: str) -> ChildAnswer:
    """One child session, turn by turn through ``user.send``, to its end; its final answer (never raises but
    for the greenlet being killed)."""
    reply: tuple[str, int, Any] | None = None
    try:
        while not child.done:
            if user._state == LOCUST_STATE_STOPPING:
                return ChildAnswer.failed("stopped")
            waited = 0.0
            if reply is not None and reply[2]:
                t0 = perf_counter()
                gevent.sleep(child.tool_wait_s(reply[2]))
                waited = perf_counter() - t0
                if user._state == LOCUST_STATE_STOPPING:
                    return ChildAnswer.failed("stopped")
            sample = child.next_turn() if reply is None else child.next_turn(*reply)
            agent = child.agent_turn(waited)
            rec = user.send(sample, turn=sample.turn, keep_reply=True, session=session_id, agent=agent)
            child.took(rec.start_ns, rec.input_tokens, rec.output_tokens)
            if rec.outcome != "ok":
                return ChildAnswer.failed(rec.error_kind or rec.outcome)
            reply = (rec.reply_text or "", rec.output_tokens, agent.calls)
            if not agent.calls:  # answered in text: the sub-agent's final answer
                break
    except Exception:  # a bug in an adapter or in llmload: send counted it; the parent goes on without this child
        log.exception("sub-agent session %s failed", session_id)
        return ChildAnswer.failed("client_error")
    assert reply is not None
    return ChildAnswer(reply[0], reply[1] if reply[0] else 0)
