"""Agent classes in predict: sessions whose answers are tool calls as the simulator's are, tool waits, sub-agents.

An agent class (:mod:`llmload.workload.agent`) is a conversation whose requests carry ``tools``.
The simulator answers such a request with tool calls with probability ``--tool-call-share``
(``tool_choice`` ``"auto"``; :mod:`llmload.sim.tools`), drawn from one seeded RNG in the order
the requests arrive; :class:`ToolAnswers` draws the same way (its own RNG, one ``random()`` per
request, then with ``parallel_tool_calls: false`` the one tool called, ``randrange``): with
``per_turn > 1`` every offered tool is called once, else one, and never more calls than the
answer has tokens (:class:`~llmload.sim.tool_events.CallPlan`). ``--tool-call-share`` of
predict sets the share: the simulator's default unless told (a real model's: its run's
``tool_turn`` / (``tool_turn`` + ``answer_turn``) requests).

An :class:`AgentTokens` session follows :class:`~llmload.workload.agent.AgentSession` in token
counts: after an answer of tool calls, the next turn (after the slowest call's ``latency_s``
draw, the session holding its user) re-sends the history, the answer's tokens and one result of
``result_tokens`` per call, no new user message (no images); after a text answer a user message
follows the think time, as in any conversation (:mod:`llmload.capacity.session_replay`). Turn k
asks for ``output_tokens``' k-th entry (a list), else the class's length. Fan-out
(:mod:`llmload.workload.fanout`, run as :mod:`llmload.users.sub_agents` runs it): after turn k,
for k a multiple of ``every`` below the session's turns, ``agents`` child sessions start at once
(:func:`fan_out`; the class's prefix, prompts and images, the ``fanout`` table's turns and
lengths, no think time, no ``delegate`` tool), each an agent loop to its first text answer or its
last turn; the parent's own tool calls run meanwhile; when the last child ended (and the parent's
tools), the next turn carries the own results and each child's answer (its tokens; 0 when it
ended on tool calls; a failed child's error text). Every request's record carries its
:class:`~llmload.workload.agent.AgentTurn`, so the ``agent`` figures (turn kinds, tool waits,
sessions, fan-out) come out of a prediction as out of a run.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from llmload.capacity.session_replay import PromptTokens, Requests, Session, Turn
from llmload.workload.agent import AgentSpec, AgentTurn
from llmload.workload.fanout import ChildAnswer

__all__ = ["RECORD_BASE_NS", "AgentTokens", "ToolAnswers", "fan_out", "new_session"]

#: A predicted record's clock: virtual time t is ``RECORD_BASE_NS + t * 1e9`` ns (0 means "unset" for a stamp).
RECORD_BASE_NS = 10**9


class ToolAnswers:
    """Which answers are tool calls, drawn as the simulator draws them (module docstring)."""

    def __init__(self, share: float, seed: int) -> None:
        self.share, self.rng = share, random.Random(f"tool calls {seed}")

    def decide(self, spec: AgentSpec, max_tokens: int) -> tuple[str, ...]:
        """The tools an answer of ``max_tokens`` to a request of ``spec``'s class calls (none: a text answer)."""
        names = [str(t["function"]["name"]) for t in spec.tools]  # type: ignore[index,call-overload]
        if not names or self.rng.random() >= self.share:  # no tools offered: a text answer, nothing drawn
            return ()
        called = names if spec.per_turn > 1 else [names[self.rng.randrange(len(names))]]
        return tuple(called[: max(1, min(len(called), max_tokens))])


class AgentTokens(Session):
    """One agent session (or a sub-agent's) in token counts; the driver sets ``reply``, ``calls`` (the last answer's
    tool calls) and ``waited_s`` before :meth:`next_turn`, and calls :meth:`took` after each answered turn."""

    __slots__ = ("agent", "calls", "child", "cls", "delegated", "fanout_s", "fanouts", "last_out", "results",
                 "started", "tokens", "waited_s")  # fmt: skip

    def __init__(self, source: Requests, cls: int, spec: Any = None, *, child: bool = False) -> None:
        super().__init__(source, cls, spec)
        self.cls, self.child, self.agent = cls, child, self.spec.agent
        self.calls, self.results = 0, ()
        self.delegated: tuple[int, ...] | None = None  # the children's answers the next turn carries
        self.waited_s, self.fanout_s, self.fanouts = 0.0, 0.0, 0
        self.last_out, self.started, self.tokens = 1, -1.0, 0

    def next_turn(self) -> Turn:
        spec, rng = self.spec, self.source.rng
        if self.turn == 0 or (not self.calls and self.delegated is None):
            t = super().next_turn()
            self.results = ()
        else:  # after tool calls (or a fan-out): their results, no user message
            own = tuple(self.agent.result_tokens.sample(rng) for _ in range(self.calls))
            self.results = (*own, *(self.delegated or ()))
            self.context += self.reply + sum(self.results)
            k = self.turn = self.turn + 1
            self.think_s = 0.0 if k >= self.turns or spec.think is None else spec.think.sample(rng)
            out = spec.output.sample(rng) if spec.output is not None else self.last_out
            tokens = PromptTokens(self.head, self.head_len, self.own, self.context)
            t = Turn(spec.name, self.context, out if spec.cap is None else min(out, spec.cap), tokens, k)
        per = self.agent.out(t.turn)
        if per is not None:
            out = per.sample(rng)
            t = replace(t, max_tokens=out if spec.cap is None else min(out, spec.cap))
        self.last_out = t.max_tokens
        return t

    def agent_turn(self) -> AgentTurn:
        """The record's :class:`AgentTurn` of the turn just produced (its ``calls`` set when it is answered)."""
        start = 0 if self.started < 0 else RECORD_BASE_NS + int(self.started * 1e9)
        spec = self.agent if self.turn == 1 else None
        d, self.delegated = self.delegated, None
        if d is None:
            return AgentTurn(start, self.tokens, self.done, self.waited_s, self.results, spec, child=self.child)
        return AgentTurn(start, self.tokens, self.done, self.waited_s, self.results, spec, children=len(d),
                         fanout_s=self.fanout_s)  # fmt: skip

    def took(self, t: float, prompt: int, output: int) -> None:
        """A turn sent at ``t`` (s) was answered: its prompt and output tokens."""
        if self.started < 0:
            self.started = t
        self.tokens += prompt + output

    def tool_wait(self) -> float:
        """How long the last answer's ``calls`` run (the slowest)."""
        latency, rng = self.agent.latency_s, self.source.rng
        return max((latency.sample(rng) for _ in range(self.calls)), default=0.0)

    @property
    def fanout_due(self) -> bool:
        fan = self.agent.fanout
        return fan is not None and not self.child and self.turn > 0 and fan.due(self.turn, self.turns)

    def children(self) -> list[AgentTokens]:
        """The sub-agent sessions of the fan-out due now (:mod:`llmload.workload.fanout`)."""
        spec, fan = self.spec, self.agent.fanout
        out = fan.output_tokens[0] if fan.output_tokens is not None else spec.output
        kid = replace(spec, turns=spec.turns if fan.turns is None else fan.turns,
                      input=spec.input if fan.input_tokens is None else fan.input_tokens, output=out,
                      think=None, agent=self.agent.child())  # fmt: skip
        return [AgentTokens(self.source, self.cls, kid, child=True) for _ in range(fan.agents)]


def new_session(source: Requests) -> Session:
    """The next class's session (an :class:`AgentTokens` for an agent class)."""
    cls = source.mix.next()
    return AgentTokens(source, cls) if source.classes[cls].agent is not None else Session(source, cls)


def fan_out(host: Any, parent: AgentTokens, sid: str, step: int, alive: Callable[[], bool],
            resume: Callable[[], None]) -> None:  # fmt: skip
    """Run the fan-out due after ``parent``'s last turn (module docstring) on ``host`` (the driver: ``loop``,
    ``send``), then ``resume()`` at once the last child and the parent's own tools are done."""
    loop = host.loop
    kids = parent.children()
    parent.fanouts += 1
    t0, own = loop.time(), parent.tool_wait()
    answers, left = [0] * len(kids), [len(kids)]

    def finish(i: int, tokens: int) -> None:
        answers[i] = tokens
        left[0] -= 1
        if not left[0]:
            loop.call_at(max(t0 + own, loop.time()), done)

    def done() -> None:
        parent.delegated, parent.waited_s, parent.fanout_s = tuple(answers), own, loop.time() - t0
        resume()

    def turn(i: int, kid: AgentTokens) -> None:
        if not alive():  # the run ended, or the user's step is over: no new child turn (the parent stops too)
            finish(i, ChildAnswer.failed("stopped").tokens)
            return
        t = kid.next_turn()
        # a child's last allowed turn goes with tool_choice "none" (llmload.workload.agent): a text answer, no draw
        host.send(step, lambda s: answered(i, kid, s), t, session=f"{sid}.f{parent.fanouts}.{i + 1}",
                  agent=kid.agent_turn(), tools=None if kid.done else kid.agent)  # fmt: skip

    def answered(i: int, kid: AgentTokens, s: Any) -> None:
        if s.error or not s.done:
            finish(i, ChildAnswer.failed(f"http_{s.status}" if s.status != 200 else "stream_error").tokens)
            return
        kid.took(s.t, s.prompt, len(s.times))
        kid.reply, kid.calls = len(s.times), len(s.calls)
        if not s.calls or kid.done:  # the final answer: its text (none after tool calls)
            finish(i, 0 if s.calls else len(s.times))
            return
        kid.waited_s = kid.tool_wait()
        loop.call_later(kid.waited_s, turn, i, kid)

    for i, kid in enumerate(kids):
        turn(i, kid)
