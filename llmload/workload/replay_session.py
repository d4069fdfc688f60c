"""A trace's recorded session, replayed: its turns in order, each after the previous one's answer and its wait.

``--trace`` with sessions (:mod:`llmload.workload.trace_sessions`): the dispatcher releases a
session's turn 1 at its ``timestamp / speedup``, and the user that takes it replays the whole
session (:meth:`ReplaySession.run`), holding its slot as a live conversation or agent does:

* turn ``k ≥ 2`` is sent ``wait_ms / speedup`` after turn ``k - 1``'s answer ended (the recorded
  tool run or think time; the later turns' timestamps are not used), in the order of the file;
* what each turn sends is built as a live session builds it (OpenAI chat messages, which the
  adapter turns into its API's shape: ``role: tool`` with ``tool_call_id``, Responses
  ``function_call_output``, Anthropic ``tool_result``): turn 1 a user message of ``user_tokens``
  words; then the answer the server gave to the previous turn (its text, as a live client
  re-sends it) and either a new user message of ``user_tokens`` words, or — when the recorded
  answer held tool calls — the assistant's tool calls and one ``role: tool`` result of each
  ``tool_results`` size. The calls are the ones the server made in this replay (id, name,
  arguments) where it made as many; else the trace's names, with ids ``call_<turn>_<i>`` and
  arguments ``{}``: the recorded structure is replayed whatever the server answers now;
* ``max_tokens`` is the entry's ``output_length`` (at most ``--max-tokens-cap``); the session's
  ``tools`` go with every turn; words are unique to the request (the user's RNG);
* a turn that fails ends the session (nothing to continue from), as in a live session; the test's
  end cuts it.

A replayed agent session's turns carry an :class:`~llmload.workload.agent.AgentTurn`, so the
``agent`` figures (per turn kind, tool waits, sessions) come out of a replay as out of the
recorded run. Records carry ``session`` (the trace's id), ``turn`` and ``arrival_index`` (the
turn's entry index), so a record joins its entry.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from llmload.jsonvalue import Json
from llmload.workload.agent import AgentSpec, AgentTurn, ToolCall
from llmload.workload.conversation import one_text
from llmload.workload.prompts import synthetic_prompt
from llmload.workload.request_types import RequestSample
from llmload.workload.trace_sessions import SessionTurn

__all__ = ["ReplaySession"]


class ReplaySession:
    """One session of a trace: :meth:`next_turn` builds each turn, :meth:`run` replays them all (module docstring).

    ``entries``: the session's entries in turn order (each with its :class:`SessionTurn`), ``indexes`` their
    indexes in the trace; ``on_end``: called once when :meth:`run` returns, however it ends.
    """

    __slots__ = ("_cap", "_class", "_context", "_entries", "_indexes", "_messages", "_on_end", "_rng", "_speedup",
                 "_spec", "id", "tokens", "turn")  # fmt: skip

    def __init__(self, entries: Sequence[Any], indexes: Sequence[int], rng: random.Random, class_name: str, *,
                 speedup: float = 1.0, cap: int | None = None, on_end: Callable[[], None] = lambda: None) -> None:  # fmt: skip
        first: SessionTurn = entries[0].turn
        self._entries, self._indexes, self._rng, self._class = entries, indexes, rng, class_name
        self._speedup, self._cap, self._on_end = speedup, cap, on_end
        self._spec = AgentSpec(tuple(dict(t) for t in first.tools), 2 if first.parallel_tool_calls else 1) if first.tools else None
        self._messages: list[dict[str, Json]] = []
        self._context = 0
        self.id = first.session
        self.turn = 0  # turns produced so far
        self.tokens = 0  # input + output tokens of the turns answered so far

    @property
    def done(self) -> bool:
        return self.turn >= len(self._entries)

    @property
    def entry_index(self) -> int:
        """The trace index of the turn just produced."""
        return self._indexes[self.turn - 1]

    @property
    def wait_s(self) -> float:
        """The wait before the next turn: its ``wait_ms``, at the replay's speed (0 when done)."""
        return 0.0 if self.done else self._entries[self.turn].turn.wait_ms / 1000.0 / self._speedup

    def next_turn(self, reply: str | None = None, reply_tokens: int = 0, calls: Sequence[ToolCall] | None = None) -> RequestSample:
        """The next turn's request; ``reply``/``reply_tokens``/``calls``: the server's answer to the previous turn."""
        if self.done:
            raise RuntimeError(f"session {self.id!r} is over after {self.turn} turns")
        entry = self._entries[self.turn]
        t: SessionTurn = entry.turn
        k = self.turn = self.turn + 1
        messages, rng = self._messages, self._rng
        if k > 1:
            previous: SessionTurn = self._entries[k - 2].turn
            added = reply_tokens
            if t.tool_results:
                got = list(calls or ())
                made = got if len(got) == len(t.tool_results) else []
                ids = [c.id or f"call_{k}_{i}" for i, c in enumerate(made)] or [f"call_{k}_{i}" for i in range(len(t.tool_results))]
                messages.append({"role": "assistant", "content": reply or None, "tool_calls": [
                    {"id": ids[i], "type": "function", "function": {"name": made[i].name if made else previous.tool_calls[i],
                                                                    "arguments": made[i].arguments if made else "{}"}}
                    for i in range(len(ids))]})  # fmt: skip
                for i, n in enumerate(t.tool_results):
                    messages.append({"role": "tool", "tool_call_id": ids[i], "content": synthetic_prompt(rng, n)})
                    added += n
            else:
                messages.append({"role": "assistant", "content": reply or ""})
            self._context += added
        if not t.tool_results:
            messages.append({"role": "user", "content": synthetic_prompt(rng, t.user_tokens)})
            self._context += t.user_tokens
        out = entry.output_length if self._cap is None else min(entry.output_length, self._cap)
        spec = self._spec
        return RequestSample(self._class, one_text(messages), self._context, out, tuple(messages) if k > 1 else None, k,  # type: ignore[arg-type]
                             spec.tools if spec is not None else None, spec is not None and spec.per_turn > 1)  # fmt: skip

    def run(self, send: Callable[..., Any], think: Callable[[float], None], intended_ns: int) -> None:
        """Replay every turn: ``send(sample, **fields) -> record`` (:meth:`LLMUser.send
        <llmload.users.llm_user.LLMUser.send>`), ``think(seconds)`` the user's idle wait; turn 1 is timed from
        ``intended_ns`` (its arrival), the later ones from their sending. Ends at a failed turn."""
        try:
            reply: tuple[str, int, Any] | None = None
            started_ns = 0
            while not self.done:
                waited = 0.0
                if reply is not None and (wait := self.wait_s) > 0:
                    t0 = perf_counter()
                    think(wait)
                    waited = perf_counter() - t0
                sample = self.next_turn(*reply) if reply is not None else self.next_turn()
                agent = None
                if self._spec is not None:
                    tool_wait = waited if self._entries[self.turn - 1].turn.tool_results else 0.0
                    agent = AgentTurn(started_ns, self.tokens, self.done, tool_wait, self._entries[self.turn - 1].turn.tool_results,
                                      self._spec if self.turn == 1 else None)  # fmt: skip
                rec = send(sample, turn=sample.turn, keep_reply=not self.done, intended_ns=intended_ns,
                           arrival_index=self.entry_index, session=self.id, agent=agent)  # fmt: skip
                intended_ns = 0
                if rec.outcome != "ok":
                    return
                started_ns = started_ns or rec.start_ns
                self.tokens += rec.input_tokens + rec.output_tokens
                reply = (rec.reply_text or "", rec.output_tokens, agent.calls if agent is not None else None)
        finally:
            self._on_end()
