"""Agent classes: conversations whose model answers with tool calls, the client runs the tools and sends results.

A conversation class (``turns``) becomes an agent with ``tools``::

    [[classes]]
    name = "agent"
    weight = 1
    turns = 6                                    # requests (model calls) per session
    input_tokens = 200                           # each new user message (after a text answer)
    output_tokens = [150, 150, 150, 1000]        # per turn: max_tokens of turn 1, 2, ...; the last repeats
    tools = [{type = "function", function = {name = "search", parameters = {type = "object"}}}]
    tool_calls = {per_turn = 1, result_tokens = 300, latency_s = {dist = "exponential", mean = 2}}
    fanout = {every = 3, agents = 2}             # optional: sub-agents (llmload.workload.fanout)

``tools`` are JSON-schema tool definitions in OpenAI's form (``{type = "function", function =
{name, description, parameters}}``; the short form ``{name, description, parameters}`` is
accepted and sent in the long one), sent with every request of the class. ``tool_calls``
(optional): ``per_turn`` the tool calls one tool turn runs at once (1: ``parallel_tool_calls
= false`` is sent; more: ``true``), ``result_tokens`` each synthetic tool result's size (an
int or a distribution; default 300), ``latency_s`` each tool's run time (a duration; default 0;
parallel calls wait for the slowest). ``output_tokens`` may be a list: turn k asks for its
k-th entry (each an int or a distribution), turns past its end for the last one.

An :class:`AgentSession` is a :class:`~llmload.workload.conversation.Session` whose turns
also carry the tools. When the server answered a turn with tool calls (the user passes them
to :meth:`AgentSession.next_turn`), the next turn appends the assistant's tool-call message
and one ``role: tool`` message per call (``tool_call_id``, a synthetic result of
``result_tokens`` words) instead of a new user message, so the context grows by the results;
a text answer is followed by a new user message as in any conversation. Before a turn that
follows tool calls the user waits :meth:`AgentSession.tool_wait_s` (holding its slot, as it
does for think time). Tool results and tool latencies are drawn from the session's own RNG
(seeded from the user's at the session's start), so which answers were tool calls changes
only those draws and the user messages that follow text answers. A dataset class replays its
records' user turns after text answers (turn k: the record's k-th); after a tool turn it asks
for the previous turn's length unless ``output_tokens`` says otherwise.

With ``fanout`` (:mod:`llmload.workload.fanout`), :attr:`AgentSession.fanout_due` says when the
user is to run :meth:`AgentSession.children` before the next turn, which it then produces with
their answers (``next_turn(..., delegated=...)``): ``delegate`` tool calls and their results.

:class:`AgentTurn` is what an agent turn's :class:`~llmload.metrics.record.RequestRecord`
carries (``record.agent``) for the ``agents`` part of the statistics
(:mod:`llmload.metrics.parts.agents`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.conversation import ClassPlan, Session, history_images, one_text
from llmload.workload.datasets import estimate_tokens
from llmload.workload.distributions import Distribution, Duration, Fixed, parse_distribution, parse_duration
from llmload.workload.fanout import DELEGATE, DELEGATE_TOOL, Delegation, FanoutSpec, parse_fanout
from llmload.workload.lean_random import LeanRandom
from llmload.workload.prompts import synthetic_prompt
from llmload.workload.request_types import RequestSample

__all__ = ["AgentSession", "AgentSpec", "AgentTurn", "ToolCall", "parse_agent"]

_TOOL_CALLS_KEYS = ("per_turn", "result_tokens", "latency_s")
_NO_CALLS: tuple[ToolCall, ...] = ()
_FUNCTION_KEYS = ("name", "description", "parameters", "strict")
_DEFAULT_RESULT_TOKENS = 300


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """A class's agent settings (see the module docstring); ``output_tokens`` None: the class's own for every turn."""

    tools: tuple[dict[str, Json], ...]
    per_turn: int = 1
    result_tokens: Distribution = Fixed(_DEFAULT_RESULT_TOKENS)
    latency_s: Duration = Duration("fixed", 0.0)
    output_tokens: tuple[Distribution, ...] | None = None
    fanout: FanoutSpec | None = None

    def out(self, turn: int) -> Distribution | None:
        """Turn ``turn`` (≥ 1)'s output length: the list's entry, its last past the end; None without a list."""
        per = self.output_tokens
        return None if per is None else per[min(turn, len(per)) - 1]

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"tools": [dict(t) for t in self.tools],
                             "tool_calls": {"per_turn": self.per_turn, "result_tokens": self.result_tokens.to_dict(),
                                            "latency_s": self.latency_s.to_dict()}}  # fmt: skip
        if self.output_tokens is not None:
            d["output_tokens"] = [o.to_dict() for o in self.output_tokens]
        if self.fanout is not None:
            d["fanout"] = self.fanout.to_dict()
        return d

    def child(self) -> AgentSpec:
        """A child session's settings: no ``delegate`` tool, no fan-out, the ``fanout`` table's per-turn lengths."""
        fan = self.fanout
        assert fan is not None
        tools = tuple(t for t in self.tools if _name(t) != DELEGATE)
        out = fan.output_tokens if fan.output_tokens is not None else self.output_tokens
        return replace(self, tools=tools, output_tokens=out, fanout=None)


def parse_agent(c: dict[str, Json], where: str) -> tuple[AgentSpec | None, Any]:
    """A class table's agent settings, and its ``output_tokens`` for the class (a list's first entry).

    ``where`` is the class (``profile 'x': classes[2]``). None when the class has no ``tools``;
    :class:`~llmload.errors.ProfileError` (one line naming the field) on a bad value.
    """
    out = c.get("output_tokens")
    if "tools" not in c:
        if "fanout" in c:
            raise ProfileError(f"{where}.fanout: sub-agents need an agent class; add tools = [...] (and turns)")
        if "tool_calls" in c:
            raise ProfileError(f"{where}.tool_calls: needs tools = [...] (the tool definitions the model may call)")
        if isinstance(out, list):
            raise ProfileError(f"{where}.output_tokens: a per-turn list needs an agent class (tools = [...]); "
                               "give an int or a distribution")  # fmt: skip
        return None, out
    if "turns" not in c:
        raise ProfileError(f"{where}.tools: an agent class is a conversation; add turns = N (requests per session)")
    tools = _parse_tools(c["tools"], f"{where}.tools")
    fanout = None
    if "fanout" in c:
        synthetic = not isinstance(c.get("prompt"), dict)  # a table: a dataset (checked by the profile)
        at = f"{where} (class {c.get('name')!r}).fanout"  # a sub-agent setting names its class outright
        fanout = parse_fanout(c["fanout"], at, synthetic=synthetic, turns=c["turns"])
        if all(_name(t) != DELEGATE for t in tools):
            tools += (DELEGATE_TOOL,)
    per_turn, result, latency = _parse_tool_calls(c.get("tool_calls", {}), f"{where}.tool_calls")
    per: tuple[Distribution, ...] | None = None
    if isinstance(out, list):
        if not out:
            raise ProfileError(f"{where}.output_tokens: the per-turn list is empty; give one length per turn")
        per = tuple(parse_distribution(o, f"{where}.output_tokens[{i}]") for i, o in enumerate(out))
        out = out[0]
    return AgentSpec(tools, per_turn, result, latency, per, fanout), out


def _name(tool: dict[str, Json]) -> str:
    """A tool definition's name (OpenAI's long form, as parsed)."""
    fn = tool["function"]
    return str(fn["name"]) if isinstance(fn, dict) else ""


def _parse_tools(raw: Any, where: str) -> tuple[dict[str, Json], ...]:
    if not isinstance(raw, list) or not raw:
        raise ProfileError(f"{where}: expected a non-empty list of tool definitions, got {raw!r}")
    tools: list[dict[str, Json]] = []
    names: dict[str, int] = {}
    for i, t in enumerate(raw):
        fn = _parse_function(t, f"{where}[{i}]")
        name = str(fn["name"])
        if name in names:
            at = f"{where}[{i}]" + (".function" if "function" in t else "")
            raise ProfileError(f"{at}.name: duplicate tool name {name!r} (also {where}[{names[name]}])")
        names[name] = i
        tools.append({"type": "function", "function": fn})
    return tuple(tools)


def _parse_function(t: Any, at: str) -> dict[str, Json]:
    """One tool definition's function table (long or short form)."""
    if not isinstance(t, dict):
        raise ProfileError(f"{at}: expected a table {{type = \"function\", function = {{name, parameters}}}}, got {t!r}")
    if "function" in t or "type" in t:
        if t.get("type") != "function":
            raise ProfileError(f"{at}.type: expected \"function\", got {t.get('type')!r}")
        if set(t) - {"type", "function"}:
            raise ProfileError(f"{at}: unknown key {sorted(set(t) - {'type', 'function'})[0]!r}; allowed: type, function")
        fn, at = t.get("function"), f"{at}.function"
    else:
        fn = t
    if not isinstance(fn, dict):
        raise ProfileError(f"{at}: expected a table with name and parameters, got {fn!r}")
    for key in fn:
        if key not in _FUNCTION_KEYS:
            raise ProfileError(f"{at}.{key}: unknown key; allowed keys: {', '.join(_FUNCTION_KEYS)}")
    name = fn.get("name")
    if not isinstance(name, str) or not name or not all(ch.isalnum() or ch in "_-" for ch in name) or len(name) > 64:
        raise ProfileError(f"{at}.name: expected a tool name of letters, digits, _ and - (1 to 64), got {name!r}")
    if not isinstance(fn.get("parameters", {}), dict):
        raise ProfileError(f"{at}.parameters: expected a JSON-schema table, got {fn['parameters']!r}")
    if not isinstance(fn.get("description", ""), str):
        raise ProfileError(f"{at}.description: must be a string, got {fn['description']!r}")
    return dict(fn)


def _parse_tool_calls(raw: Any, where: str) -> tuple[int, Distribution, Duration]:
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a table {{per_turn, result_tokens, latency_s}}, got {raw!r}")
    for key in raw:
        if key not in _TOOL_CALLS_KEYS:
            raise ProfileError(f"{where}.{key}: unknown key; allowed keys: {', '.join(_TOOL_CALLS_KEYS)}")
    per_turn = raw.get("per_turn", 1)
    if isinstance(per_turn, bool) or not isinstance(per_turn, int) or not 1 <= per_turn <= 128:
        raise ProfileError(f"{where}.per_turn: must be an integer in 1..128 (tool calls per tool turn), got {per_turn!r}")
    result = parse_distribution(raw.get("result_tokens", _DEFAULT_RESULT_TOKENS), f"{where}.result_tokens")
    latency = parse_duration(raw.get("latency_s", 0.0), f"{where}.latency_s") if "latency_s" in raw else Duration("fixed", 0.0)
    return per_turn, result, latency


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an answer, as the adapter assembled it from the stream."""

    id: str
    name: str
    arguments: str


class AgentTurn:
    """What an agent turn's record carries (``record.agent``) for the statistics.

    ``session_start_ns``: the session's first request's start stamp (0: this request starts it);
    ``session_tokens``: input + output tokens of the session's earlier turns; ``last``: the
    session's last turn; ``waited_s``: the tool wait before this request (0: none); ``calls``:
    the tool calls the answer held (set when the stream ends; None: a text answer); ``results``: the tokens of each
    tool result this request sends (after tool calls; () otherwise); ``spec``: the class's :class:`AgentSpec` on a
    session's first turn (None on the others), for ``--records-jsonl`` (:mod:`llmload.metrics.dump`). Fan-out
    (:mod:`llmload.workload.fanout`): ``child`` a turn of a child session; ``children`` the
    children whose answers this turn carries (0: none) and ``fanout_s`` how long the parent
    waited for them.
    """

    __slots__ = ("calls", "child", "children", "fanout_s", "last", "results", "session_start_ns", "session_tokens",
                 "spec", "waited_s")  # fmt: skip

    def __init__(self, session_start_ns: int = 0, session_tokens: int = 0, last: bool = False, waited_s: float = 0.0,
                 results: tuple[int, ...] = (), spec: AgentSpec | None = None, *, child: bool = False,
                 children: int = 0, fanout_s: float = 0.0) -> None:  # fmt: skip
        self.session_start_ns = session_start_ns
        self.session_tokens = session_tokens
        self.last = last
        self.waited_s = waited_s
        self.calls: tuple[ToolCall, ...] | None = None
        self.results = results
        self.spec = spec
        self.child = child
        self.children = children
        self.fanout_s = fanout_s


class AgentSession(Session):
    """A conversation of an agent class (see the module docstring)."""

    __slots__ = ("_delegated", "_last_out", "_results", "_spec", "_tool_rng", "child", "started_ns", "tokens")

    def __init__(self, plan: ClassPlan, rng: random.Random, spec: AgentSpec, *, child: bool = False) -> None:
        super().__init__(plan, rng)
        self._spec = spec
        self._tool_rng = LeanRandom(rng.getrandbits(64))  # 8 bytes, not a Mersenne Twister's 2.5 KB per session
        self._last_out = 1  # the last turn's max_tokens (a dataset class's length after a tool turn)
        self._delegated: Delegation | None = None  # the fan-out the turn just produced carries
        self.child = child  # a child session of a fan-out
        self.started_ns = 0  # the first request's start stamp, once sent
        self.tokens = 0  # input + output tokens of the turns sent so far
        self._results: tuple[int, ...] = ()  # the last turn's tool results' tokens (() when it sent none)

    def next_turn(self, previous_reply: str | None = None, reply_tokens: int | None = None,
                  tool_calls: tuple[ToolCall, ...] | None = None, delegated: Delegation | None = None) -> RequestSample:  # fmt: skip
        """The next turn: after ``tool_calls`` (the last answer's) or a fan-out (``delegated``: its children's
        answers), their results; else as any conversation."""
        if delegated is None and (not tool_calls or self.turn == 0):
            sample = super().next_turn(previous_reply, reply_tokens)
            self._results = ()
        else:
            sample = self._after_tools(previous_reply or "", reply_tokens, tool_calls or _NO_CALLS, delegated)
        self._delegated = delegated
        spec = self._spec
        per = spec.out(sample.turn)
        out = self._last_out = self._plan.capped(per.sample(self._rng)) if per is not None else sample.max_tokens
        # a child's last allowed turn must answer in text: its answer is what the parent gets (llmload.workload.fanout)
        choice = "none" if self.child and self.done else None
        return replace(sample, max_tokens=out, tools=spec.tools, parallel_tool_calls=spec.per_turn > 1, tool_choice=choice)

    def _after_tools(self, reply: str, reply_tokens: int | None, calls: tuple[ToolCall, ...],
                     delegated: Delegation | None) -> RequestSample:  # fmt: skip
        if self.done:
            raise RuntimeError(f"session of class {self.class_name!r} is over after {self.turns} turns")
        k = self.turn + 1
        rng = self._tool_rng
        answers = delegated.answers if delegated is not None else ()
        if answers:  # the fan-out's delegate calls, after the answer's own (llmload.workload.fanout)
            calls += tuple(ToolCall(f"call_{k}_d{i}", DELEGATE, f'{{"task": "subtask {i}"}}') for i in range(1, len(answers) + 1))
        message: dict[str, Json] = {"role": "assistant", "content": reply or None, "tool_calls": [
            {"id": c.id or f"call_{k}_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(calls)]}  # fmt: skip
        self._messages.append(message)  # type: ignore[arg-type]
        added = reply_tokens if reply_tokens is not None else estimate_tokens(reply)
        own = len(calls) - len(answers)
        sizes: list[int] = []
        for i, c in enumerate(calls):
            if i < own:
                n = self._spec.result_tokens.sample(rng)
                text = synthetic_prompt(rng, n)
            else:
                text, n = answers[i - own].text, answers[i - own].tokens
            self._messages.append({"role": "tool", "tool_call_id": c.id or f"call_{k}_{i}", "content": text})
            added += n
            sizes.append(n)
        self._results = tuple(sizes)
        self._context += added
        self.turn = k
        last = k >= self.turns
        think = self._plan.think_time
        self.think_time_s = 0.0 if last or think is None else think.sample(self._rng)
        plan = self._plan
        out = plan.capped(plan.output_tokens.sample(self._rng)) if plan.output_tokens is not None else self._last_out
        return RequestSample(plan.name, one_text(self._messages), self._context, out, tuple(self._messages), k,
                             images=history_images(self._messages) if plan.images is not None else None)  # fmt: skip

    def tool_wait_s(self, calls: tuple[ToolCall, ...]) -> float:
        """How long the tools of ``calls`` run (drawn per call; parallel calls: the slowest)."""
        latency = self._spec.latency_s
        waits = [latency.sample(self._tool_rng) for _ in calls]
        return max(waits) if waits else 0.0

    def agent_turn(self, waited_s: float) -> AgentTurn:
        """The :class:`AgentTurn` of the turn just produced (after :meth:`next_turn`)."""
        d = self._delegated
        spec = self._spec if self.turn == 1 else None
        if d is None:
            return AgentTurn(self.started_ns, self.tokens, self.done, waited_s, self._results, spec, child=self.child)
        return AgentTurn(self.started_ns, self.tokens, self.done, waited_s, self._results, spec, children=len(d.answers),
                         fanout_s=d.waited_s)  # fmt: skip

    @property
    def fanout_due(self) -> bool:
        """Whether the class's sub-agents run before the next turn (after turn ``every``, ``2 * every``, ...)."""
        fan = self._spec.fanout
        return fan is not None and self.turn > 0 and fan.due(self.turn, self.turns)

    @property
    def fanouts(self) -> int:
        """The fan-outs due so far in this session, the one due now included."""
        fan = self._spec.fanout
        return 0 if fan is None else self.turn // fan.every

    def children(self) -> list[AgentSession]:
        """The child sessions of the fan-out due now (:mod:`llmload.workload.fanout`), seeded from this session's
        tool RNG: the class's plan less its think time, with the ``fanout`` table's turns and lengths."""
        spec, plan = self._spec, self._plan
        fan = spec.fanout
        if fan is None:
            raise RuntimeError(f"class {self.class_name!r} has no fanout")
        out = fan.output_tokens[0] if fan.output_tokens is not None else plan.output_tokens
        turns = fan.turns if fan.turns is not None else plan.turns
        inp = fan.input_tokens if fan.input_tokens is not None else plan.input_tokens
        child = replace(plan, turns=turns, input_tokens=inp, output_tokens=out, think_time=None, agent=spec.child())
        rng = self._tool_rng
        return [AgentSession(child, LeanRandom(rng.getrandbits(64)), child.agent, child=True)  # type: ignore[arg-type]
                for _ in range(fan.agents)]  # fmt: skip

    def took(self, start_ns: int, input_tokens: int, output_tokens: int) -> None:
        """A turn was sent (its start stamp) and answered (its tokens)."""
        if not self.started_ns:
            self.started_ns = start_ns
        self.tokens += input_tokens + output_tokens
