"""Sub-agent fan-out of an agent class: every few turns the session hands tasks to parallel child sessions.

An agent class (:mod:`llmload.workload.agent`) may add::

    fanout = {every = 3, agents = 2}                 # after turns 3, 6, ...: 2 sub-agents at once
    fanout = {every = 3, agents = 2, turns = 2, input_tokens = 100, output_tokens = [50, 200]}

``every`` and ``agents`` are required positive integers (``agents`` at most
:data:`MAX_AGENTS`: the requests of one Locust user share its connection pool of that many
connections, so more would queue in the client). The optional keys shape each child session:
``turns`` (the most requests of a child session, an int or a distribution; default the class's),
``input_tokens`` (the child's opening message: the task it is given; default the class's;
synthetic classes only) and ``output_tokens`` (an int, a distribution or a per-turn list;
default the class's). A child is an agent session of the same class otherwise: the class's
tools (less the ``delegate`` tool), ``tool_calls`` (tool turns, result sizes and latencies),
prefix, prompt source and images, with no think time and no fan-out of its own (sub-agents do not spawn
sub-agents, as in Claude Code's Task tool). It runs as an agent loop does: tool turn after tool
turn until the model answers in text (the final answer; no person sends it a next message), or
until its ``turns`` requests are sent: its last allowed request is sent with ``tool_choice``
``"none"`` (the tools still defined, as the history's tool calls need them) so that the model
answers in text, and that answer is the child's.

**When.** After the parent's turn k, for k a multiple of ``every`` and k < the session's turns
(a next turn must take the answers), and only when turn k succeeded: the user starts
``agents`` child sessions at once, runs the parent's own tool calls of turn k meanwhile (if
any), waits for every child to finish (holding its slot: its session stays in flight), and
only then sends turn k + 1.

**The shape, as agent frameworks use it.** OpenAI's Agents SDK (``agent.as_tool()``),
LangGraph's supervisor and Claude Code's ``Task`` tool all delegate the same way: the parent
model calls a tool, the sub-agent runs in a fresh context of its own, and its final answer
comes back as that call's *tool result*. So turn k's answer is taken as the delegating one:
turn k + 1 appends the assistant message of turn k with its own tool calls (if any) plus one
``delegate`` call per child (``id`` ``call_<k>_d<i>``, arguments ``{"task": "subtask <i>"}``),
then one ``role: tool`` message per call: the synthetic results of turn k's own calls, and
per child its final answer (the text of its last turn's reply, as received; a child whose
session failed gives ``error: sub-agent failed (<kind>)``, as frameworks hand the model an
error result). The parent's context (``input_tokens``) grows by turn k's answer, its tool
results and each child's answer tokens (the server's count of that last reply). The adapters
send this in each API's own tool shape (Responses ``function_call`` /
``function_call_output``, Messages ``tool_use`` / ``tool_result``). The ``delegate`` tool's
definition (:data:`DELEGATE_TOOL`) is added to the parent's ``tools`` unless the class names
one itself, since a real parent is offered the tool it calls; should the model call it of its
own accord, that call is answered like any other tool call (a synthetic result, no child).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.datasets import estimate_tokens
from llmload.workload.distributions import Distribution, parse_distribution

__all__ = ["DELEGATE", "DELEGATE_TOOL", "MAX_AGENTS", "ChildAnswer", "Delegation", "FanoutSpec", "parse_fanout"]

#: The name of the tool the parent calls to delegate.
DELEGATE = "delegate"
#: Its definition, added to the parent's tools (OpenAI's long form).
DELEGATE_TOOL: dict[str, Json] = {"type": "function", "function": {
    "name": DELEGATE, "description": "Hand a task to a sub-agent; returns its final answer.",
    "parameters": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}}}  # fmt: skip
#: The most children of one fan-out: a Locust user's connection pool (FastHttpUser ``concurrency``).
MAX_AGENTS = 10
_KEYS = ("every", "agents", "turns", "input_tokens", "output_tokens")


@dataclass(frozen=True, slots=True)
class FanoutSpec:
    """A class's ``fanout`` table (see the module docstring); None fields: the class's own."""

    every: int
    agents: int
    turns: Distribution | None = None
    input_tokens: Distribution | None = None
    output_tokens: tuple[Distribution, ...] | None = None

    def due(self, turn: int, turns: int) -> bool:
        """Whether the children run after turn ``turn`` (≥ 1) of a session of ``turns``."""
        return turn % self.every == 0 and turn < turns

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"every": self.every, "agents": self.agents}
        if self.turns is not None:
            d["turns"] = self.turns.to_dict()
        if self.input_tokens is not None:
            d["input_tokens"] = self.input_tokens.to_dict()
        if self.output_tokens is not None:
            d["output_tokens"] = [o.to_dict() for o in self.output_tokens]
        return d


def parse_fanout(raw: Any, where: str, *, synthetic: bool, turns: Any) -> FanoutSpec:
    """A class's ``fanout`` table; ``where`` names it (``profile 'x': classes[0].fanout``).

    ``synthetic``: the class draws synthetic prompts (``input_tokens`` allowed); ``turns``: the
    class's raw ``turns`` (an int there: ``every`` must leave a turn after the fan-out).
    :class:`~llmload.errors.ProfileError` (one line naming the key) on a bad value.
    """
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a table {{every = N, agents = M}}, got {raw!r}")
    for key in raw:
        if key not in _KEYS:
            raise ProfileError(f"{where}.{key}: unknown key; allowed keys: {', '.join(_KEYS)}")
    every = _positive(raw, "every", where, "fan out after every N-th turn")
    agents = _positive(raw, "agents", where, "child sessions started at once")
    if agents > MAX_AGENTS:
        raise ProfileError(f"{where}.agents: at most {MAX_AGENTS} (one user's connection pool), got {agents}")
    if isinstance(turns, int) and not isinstance(turns, bool) and every >= turns:
        raise ProfileError(f"{where}.every: {every} leaves no turn after a fan-out in sessions of {turns} turns; "
                           f"give every < turns")  # fmt: skip
    child_turns = parse_distribution(raw["turns"], f"{where}.turns") if "turns" in raw else None
    inp = None
    if "input_tokens" in raw:
        if not synthetic:
            raise ProfileError(f"{where}.input_tokens: a dataset class's children open with its records; remove it")
        inp = parse_distribution(raw["input_tokens"], f"{where}.input_tokens")
    out = None
    if "output_tokens" in raw:
        o = raw["output_tokens"]
        items = o if isinstance(o, list) else [o]
        if not items:
            raise ProfileError(f"{where}.output_tokens: the per-turn list is empty; give one length per turn")
        at = (lambda i: f"{where}.output_tokens[{i}]") if isinstance(o, list) else (lambda i: f"{where}.output_tokens")
        out = tuple(parse_distribution(x, at(i)) for i, x in enumerate(items))
    return FanoutSpec(every, agents, child_turns, inp, out)


def _positive(raw: dict[str, Any], key: str, where: str, what: str) -> int:
    if key not in raw:
        raise ProfileError(f"{where}: missing {key!r}; give fanout = {{every = N, agents = M}}")
    v = raw[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ProfileError(f"{where}.{key}: must be a positive integer ({what}), got {v!r}")
    return v


@dataclass(frozen=True, slots=True)
class ChildAnswer:
    """What one child session hands back: its final answer's text and tokens; ``ok`` False: it failed."""

    text: str
    tokens: int
    ok: bool = True

    @classmethod
    def failed(cls, kind: str) -> ChildAnswer:
        """A child whose session failed (``kind``: the error kind of its failed turn)."""
        text = f"error: sub-agent failed ({kind})"
        return cls(text, estimate_tokens(text), False)


@dataclass(frozen=True, slots=True)
class Delegation:
    """A fan-out as the parent's next turn takes it: the children's answers (in order) and how long it waited (s)."""

    answers: tuple[ChildAnswer, ...]
    waited_s: float
