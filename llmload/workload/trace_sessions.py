"""Sessions in a trace: the optional keys that make trace entries the turns of one recorded session.

A Mooncake-format entry (:mod:`llmload.workload.traces`) with a ``turn`` key is one turn of a
conversation or agent session (without ``turn`` the keys below are ignored, as any other key); ``llmload trace from-records`` (:mod:`llmload.workload.trace_records`)
writes them from a run's ``--records-jsonl``::

    {"timestamp": 0, "input_length": 212, "output_length": 150, "session": "3.1", "turn": 1, "user_tokens": 200,
     "tool_calls": ["search"], "tools": [{"type": "function", "function": {"name": "search", "parameters": {}}}]}
    {"timestamp": 1840.5, "input_length": 530, "output_length": 150, "session": "3.1", "turn": 2, "wait_ms": 1502.3,
     "tool_results": [300]}

==========================  ========================================================================================
key                         meaning
==========================  ========================================================================================
``turn``                    the turn's index in its session: 1, 2, ... in the order of the file (an int ≥ 1)
``session``                 with ``turn``: the session's id (a non-empty string); its entries are its turns
``wait_ms``                 turn ≥ 2: how long after the previous turn's answer ended this one was sent (the tool
                            run, or the user's think time), ms ≥ 0 (default 0)
``user_tokens``             the tokens of the user message this turn sends (turn 1, and every turn after a text
                            answer); an int ≥ 1
``tool_results``            the turn after an answer of tool calls: the tokens of each call's result (ints ≥ 1),
                            one per call of that answer (instead of ``user_tokens``)
``tool_calls``              the names of the tool calls the recorded answer to this turn held (absent: a text
                            answer, or the turn failed)
``tools``                   turn 1 only: the tool definitions (OpenAI's form) every turn of the session sends
``parallel_tool_calls``     turn 1 only: sent with the tools (default false)
==========================  ========================================================================================

A replay (:mod:`llmload.workload.replay_session`) sends turn 1 at its ``timestamp`` and every
later turn ``wait_ms`` after the previous turn's answer ended: the later turns' timestamps are
what the recording saw, not a schedule. Bad input is one :class:`~llmload.errors.ProfileError`
line naming the file, the line and the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmload.errors import ProfileError
from llmload.jsonvalue import Json

__all__ = ["SESSION_KEYS", "SessionTurn", "check_turn", "parse_turn", "session_groups"]

#: The keys an entry may hold as a session's turn.
SESSION_KEYS = ("session", "turn", "wait_ms", "user_tokens", "tool_results", "tool_calls", "tools", "parallel_tool_calls")


@dataclass(frozen=True, slots=True)
class SessionTurn:
    """An entry's place in its session and what the turn sends (see the module docstring)."""

    session: str
    turn: int
    wait_ms: float = 0.0
    user_tokens: int = 0
    tool_results: tuple[int, ...] = ()
    tool_calls: tuple[str, ...] = ()
    tools: tuple[Mapping[str, Json], ...] = ()
    parallel_tool_calls: bool = False

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"session": self.session, "turn": self.turn}
        if self.wait_ms:
            w = round(self.wait_ms, 3)
            d["wait_ms"] = int(w) if w == int(w) else w
        if self.user_tokens:
            d["user_tokens"] = self.user_tokens
        if self.tool_results:
            d["tool_results"] = list(self.tool_results)
        if self.tool_calls:
            d["tool_calls"] = list(self.tool_calls)
        if self.tools:
            d["tools"] = [dict(t) for t in self.tools]
            if self.parallel_tool_calls:
                d["parallel_tool_calls"] = True
        return d


def parse_turn(obj: Mapping[str, Json], where: str) -> SessionTurn | None:
    """An entry's session keys; None when it has no ``turn``: a single request, whose other keys are ignored (as
    before sessions existed: a trace may keep a ``session`` of its own as metadata)."""
    if "turn" not in obj:
        return None
    session = obj.get("session")
    if not isinstance(session, str) or not session:
        raise ProfileError(f"{where}: session must be a non-empty string (the session's id), got {session!r}")
    turn = obj.get("turn")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        raise ProfileError(f"{where}: turn must be an int ≥ 1 (the turn's index in session {session!r}), got {turn!r}")
    wait = obj.get("wait_ms", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not math.isfinite(wait) or wait < 0:
        raise ProfileError(f"{where}: wait_ms must be a number of milliseconds ≥ 0, got {wait!r}")
    user = obj.get("user_tokens", 0)
    if isinstance(user, bool) or not isinstance(user, int) or user < 0:
        raise ProfileError(f"{where}: user_tokens must be an int ≥ 1 (the new user message's tokens), got {user!r}")
    results = _ints(obj.get("tool_results", []), "tool_results", where)
    calls = obj.get("tool_calls", [])
    if not isinstance(calls, list) or not all(isinstance(c, str) and c for c in calls):
        raise ProfileError(f"{where}: tool_calls must be a list of tool names (strings), got {calls!r}")
    tools = obj.get("tools", [])
    if not isinstance(tools, list) or not all(_tool_name(t) for t in tools):
        raise ProfileError(f"{where}: tools must be a list of tool definitions "
                           '({"type": "function", "function": {"name": ..., "parameters": {...}}}), got ' + repr(tools)[:80])  # fmt: skip
    parallel = obj.get("parallel_tool_calls", False)
    if not isinstance(parallel, bool):
        raise ProfileError(f"{where}: parallel_tool_calls must be true or false, got {parallel!r}")
    return SessionTurn(session, turn, float(wait), user, results, tuple(calls), tuple(tools), parallel)


def _ints(raw: Json, key: str, where: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(not isinstance(n, bool) and isinstance(n, int) and n >= 1 for n in raw):
        raise ProfileError(f"{where}: {key} must be a list of token counts (ints ≥ 1), got {raw!r}")
    return tuple(raw)


def _tool_name(t: Json) -> bool:
    fn = t.get("function") if isinstance(t, Mapping) else None
    return isinstance(fn, Mapping) and isinstance(fn.get("name"), str) and bool(fn["name"])


def check_turn(turn: SessionTurn, previous: SessionTurn | None, first: SessionTurn | None, where: str) -> None:
    """``turn`` follows ``previous`` (its session's turn before it in the file, None: the first seen; ``first``: the
    session's turn 1), or one line."""
    s = f"session {turn.session!r}"
    if previous is None:
        if turn.turn != 1:
            raise ProfileError(f"{where}: {s} starts at turn {turn.turn}; a session's first entry is its turn 1")
    elif turn.turn != previous.turn + 1:
        raise ProfileError(f"{where}: {s} turn {turn.turn} follows its turn {previous.turn}; a session's turns are 1, 2, "
                           "... in time order, each once (records of two runs in one file?)")  # fmt: skip
    if turn.turn > 1 and (turn.tools or turn.parallel_tool_calls):
        raise ProfileError(f"{where}: {s} turn {turn.turn}: tools belong to turn 1 (they are sent with every turn)")
    asked = len(previous.tool_calls) if previous is not None else 0
    if len(turn.tool_results) != asked:
        what = f"answer held {asked} tool call{'s' * (asked != 1)}" if asked else "answer was text"
        raise ProfileError(f"{where}: {s} turn {turn.turn} sends {len(turn.tool_results)} tool results, but the "
                           f"previous {what}; give one tool_results entry per call")  # fmt: skip
    if not asked and turn.user_tokens < 1:
        raise ProfileError(f"{where}: {s} turn {turn.turn} needs user_tokens ≥ 1 (the user message it sends)")
    if asked and turn.user_tokens:
        raise ProfileError(f"{where}: {s} turn {turn.turn} answers tool calls: give tool_results, not user_tokens")
    if turn.tool_calls and not (first or turn).tools:
        raise ProfileError(f"{where}: {s} turn {turn.turn} has tool_calls, but its turn 1 gives no tools (the "
                           "definitions the session sent)")  # fmt: skip


def session_groups(turns: Sequence[SessionTurn | None]) -> tuple[tuple[int, ...], dict[int, tuple[int, ...]]]:
    """The arrivals of entries whose session parts are ``turns`` (indexes: single entries and sessions' first turns),
    and each session's entry indexes in turn order, by the index of its first."""
    arrivals: list[int] = []
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(turns):
        if t is None:
            arrivals.append(i)
            continue
        group = groups.get(t.session)
        if group is None:
            arrivals.append(i)
            group = groups[t.session] = []
        group.append(i)
    return tuple(arrivals), {g[0]: tuple(g) for g in groups.values()}
