"""A trace's recorded sessions on the virtual clock, replayed as ``llmload run --trace`` replays them.

A trace may hold sessions (:mod:`llmload.workload.trace_sessions`): a live replay
(:mod:`llmload.workload.replay_session`) sends a session's turn 1 at its ``timestamp / speedup``
(an arrival like a single entry, held by the ``-u`` cap for the whole session) and turn
``k >= 2`` ``wait_ms / speedup`` after turn ``k - 1``'s answer ended, not at its timestamp. Its
prompt re-sends the history: turn ``k - 1``'s prompt, the answer the server gave it (its tokens),
then either a user message of ``user_tokens`` or one result per recorded tool call
(``tool_results``); ``max_tokens`` is the entry's ``output_length`` (at most
``--max-tokens-cap``). A failed turn ends the session. :class:`TraceSession` is that in token
counts (turn 1: its ``user_tokens``, else its ``input_length``); :func:`run_session` replays one
on the driver. The prompt's tokens are the session's own (:class:`~llmload.capacity.session_replay.PromptTokens`),
so each turn's history is a prefix-cache hit as in the live replay (whose words are unique to the
request, so a session's ``hash_ids`` are not used). A session with ``tools`` is an agent's: each
record carries an :class:`~llmload.workload.agent.AgentTurn` (its tool wait, results) whose
calls are the ones the trace recorded for that turn (the live replay's are the server's; it
replays the recorded structure either way), so the ``agent`` figures come out as from the replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmload.capacity.agent_session import RECORD_BASE_NS
from llmload.capacity.session_replay import PromptTokens, Turn
from llmload.workload.agent import AgentSpec, AgentTurn
from llmload.workload.trace_sessions import SessionTurn
from llmload.workload.traces import TraceEntry

__all__ = ["SESSION_KEY_BASE", "TraceSession", "TurnPlan", "run_session", "trace_session"]

#: Session ``i``'s tokens are ``(SESSION_KEY_BASE + i) << 32 | k``: never a trace block's (``hash_id * 512 + j``).
SESSION_KEY_BASE = 1 << 24


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """One recorded turn: the tokens it adds after the previous answer (its user message or its tool results), its
    ``max_tokens``, the wait before it (s, at the replay's speed), its tool results and the calls recorded for it."""

    added: int
    max_tokens: int
    wait_s: float = 0.0
    results: tuple[int, ...] = ()
    calls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceSession:
    """A recorded session: its id, its turns, its tools (an agent's), and the key of its tokens."""

    id: str
    turns: tuple[TurnPlan, ...]
    key: int
    spec: AgentSpec | None = None


def trace_session(entries: list[TraceEntry], index: int, speedup: float, cap: int | None) -> TraceSession:
    """The session of ``entries`` (its turns in order; ``index``: the session's place in the trace)."""
    plans = []
    for k, e in enumerate(entries):
        t: SessionTurn = e.turn  # type: ignore[assignment]
        out = e.output_length if cap is None else min(e.output_length, cap)
        if k == 0:
            added = t.user_tokens or e.input_length
        else:
            added = sum(t.tool_results) if t.tool_results else t.user_tokens
        plans.append(TurnPlan(added, out, t.wait_ms / 1000.0 / speedup if k else 0.0, t.tool_results, t.tool_calls))
    first: SessionTurn = entries[0].turn  # type: ignore[assignment]
    spec = AgentSpec(tuple(dict(x) for x in first.tools), 2 if first.parallel_tool_calls else 1) if first.tools else None
    return TraceSession(first.session, tuple(plans), SESSION_KEY_BASE + index, spec)


def run_session(host: Any, ts: TraceSession, cls: str, step: int, intended: float, done: Callable[[Any], None]) -> None:
    """Replay ``ts`` on ``host`` (the driver: ``loop``, ``send``); ``done(sent)`` once, after its last turn or a failed
    one (the session's slot is free then). Turn 1 was due at ``intended``."""
    loop = host.loop
    state = _State()

    def turn() -> None:
        k = state.k
        plan = ts.turns[k]
        state.context += plan.added
        n = state.context
        agent = None
        if ts.spec is not None:
            start = 0 if state.started < 0 else RECORD_BASE_NS + int(state.started * 1e9)
            agent = AgentTurn(start, state.tokens, k + 1 == len(ts.turns), state.waited if plan.results else 0.0,
                              plan.results, ts.spec if k == 0 else None)  # fmt: skip
        s = host.send(step, answered, Turn(cls, n, plan.max_tokens, PromptTokens(0, 0, ts.key, n), k + 1),
                      intended if k == 0 else None, ts.id, agent=agent)  # fmt: skip
        s.calls = plan.calls if agent is not None else ()

    def answered(s: Any) -> None:
        state.k += 1
        if s.error or not s.done or state.k >= len(ts.turns):
            done(s)
            return
        if state.started < 0:
            state.started = s.t
        state.tokens += s.prompt + len(s.times)
        state.context += len(s.times)  # the answer, re-sent with the history
        state.waited = ts.turns[state.k].wait_s
        loop.call_later(state.waited, turn)

    turn()


class _State:
    """A replayed session's progress: turns answered, context and tokens so far, its start, the last wait."""

    __slots__ = ("context", "k", "started", "tokens", "waited")

    def __init__(self) -> None:
        self.k, self.context, self.tokens, self.started, self.waited = 0, 0, 0, -1.0, 0.0
