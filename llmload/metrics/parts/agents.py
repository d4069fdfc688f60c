"""Agent sessions' figures per class: turns by kind (tool call or answer), tool waits, whole sessions.

A request of an agent class (:mod:`llmload.workload.agent`) carries an
:class:`~llmload.workload.agent.AgentTurn` on ``RequestRecord.agent``; other requests have
none and leave this part empty. Per turn kind (a successful turn whose answer held tool calls
is a ``tool_turn``, one that answered in text an ``answer_turn``), a
:class:`~llmload.metrics.parts.turns.TurnStats` (requests, TTFT/TPOT/E2E histograms, context =
prompt tokens, cached prompt tokens) and, for ``tool_turn``, the histogram of the tool waits
that followed (measured by the user: ``waited_s`` on the next turn's record, counted there).
Turns that failed or were cut are the class's own errors and are in neither kind.

A session is counted when its last turn ends ``ok`` (``sessions``: duration from its first
request's start to its last one's end, turns, total tokens = every turn's prompt and answer
tokens) or when a turn fails (``failed_sessions``: the session ends there); a session cut by
the end of the test is in neither. Summary key ``agent`` (absent for a class without agent
turns), its figures :class:`AgentFigures`; one console line per agent class.

Sub-agent fan-out (:mod:`llmload.workload.fanout`): the turns of child sessions
(``AgentTurn.child``) are their own kind, ``child_turn`` (so the parent's ``tool_turn`` and
``answer_turn`` keep the parent's context sizes and TTFTs), their tool waits join the tool
waits, and their sessions are counted apart (:class:`Fanouts`): ``children_started`` (child
turn 1 sent, whatever its outcome), ``children_finished`` (a child ends ``ok`` at its first
text answer or its last allowed turn) / ``children_failed`` (as ``failed_sessions`` above), ``child_requests`` (every child request sent, any
outcome), ``fanouts`` (parent turns that carried children's answers) and ``wait_ms``: per
fan-out, the time the parent waited = the last child's end − the children's start (counted on
the parent's next turn, as a tool wait is). Summary key ``agent.fanout``, absent without fan-out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from llmload.metrics.histogram import Histogram, HistogramWire
from llmload.metrics.latency import Latency
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.parts.turns import TurnResult, TurnStats, TurnStatsWire
from llmload.metrics.record import RequestRecord

__all__ = ["CHILD_KIND", "KINDS", "AgentFigures", "Agents", "AgentsWire", "FanoutResult", "Fanouts", "SessionResult",
           "Sessions"]  # fmt: skip

#: The turn kinds: an answer with tool calls, an answer in text.
KINDS = ("tool_turn", "answer_turn")
#: A child session's turn (any answer): a kind of its own.
CHILD_KIND = "child_turn"
_ALL_KINDS = (*KINDS, CHILD_KIND)
_FANOUT_COUNTERS = ("fanouts", "started", "requests")
_COUNTERS = ("sessions", "failed", "turns", "tokens", "turns_max", "tokens_max")


class SessionsWire(TypedDict, total=False):
    h: HistogramWire
    c: dict[str, int]


class Sessions:
    """Ended sessions of one class: their durations, turns and tokens (see the module docstring)."""

    __slots__ = ("counters", "duration")

    def __init__(self) -> None:
        self.duration = Histogram()
        self.counters: dict[str, int] = dict.fromkeys(_COUNTERS, 0)

    def add(self, duration_s: float, turns: int, tokens: int) -> None:
        c = self.counters
        self.duration.record(duration_s)
        c["sessions"] += 1
        c["turns"] += turns
        c["tokens"] += tokens
        c["turns_max"] = max(c["turns_max"], turns)
        c["tokens_max"] = max(c["tokens_max"], tokens)

    def merge(self, other: Sessions) -> None:
        self.duration.merge(other.duration)
        for k, v in other.counters.items():
            self.counters[k] = max(self.counters[k], v) if k.endswith("_max") else self.counters[k] + v

    def to_wire(self) -> SessionsWire:
        return {"h": self.duration.to_wire(), "c": {k: v for k, v in self.counters.items() if v}}

    @classmethod
    def from_wire(cls, wire: SessionsWire) -> Sessions:
        s = cls()
        if "h" in wire:
            s.duration = Histogram.from_wire(wire["h"])
        for k, v in wire.get("c", {}).items():
            s.counters[k] = int(v)
        return s

    def result(self) -> SessionResult:
        c = self.counters
        n = c["sessions"]
        return SessionResult(n, c["failed"], Latency.from_histogram(self.duration), c["turns"] / n if n else None,
                             c["turns_max"], c["tokens"] / n if n else None, c["tokens_max"])  # fmt: skip


@dataclass(frozen=True, slots=True)
class SessionResult:
    """Ended sessions: ``sessions`` complete, ``failed`` ended by a failed turn; duration (ms), turns, tokens."""

    sessions: int = 0
    failed: int = 0
    duration: Latency = field(default_factory=Latency)
    turns_mean: float | None = None
    turns_max: int = 0
    tokens_mean: float | None = None
    tokens_max: int = 0

    def to_dict(self) -> dict[str, Json]:
        r = lambda x: None if x is None else round(x, 1)  # noqa: E731
        return {"sessions": self.sessions, "failed_sessions": self.failed, "duration_ms": self.duration.to_dict(),
                "turns_mean": r(self.turns_mean), "turns_max": self.turns_max, "tokens_mean": r(self.tokens_mean),
                "tokens_max": self.tokens_max}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SessionResult:
        i = lambda k: int(d.get(k) or 0)  # noqa: E731
        f = lambda k: float(d[k]) if isinstance(d.get(k), (int, float)) else None  # noqa: E731
        return cls(i("sessions"), i("failed_sessions"), Latency.from_dict(d.get("duration_ms")), f("turns_mean"),
                   i("turns_max"), f("tokens_mean"), i("tokens_max"))  # fmt: skip


class FanoutsWire(TypedDict, total=False):
    c: dict[str, int]
    w: HistogramWire
    s: SessionsWire


class Fanouts:
    """The fan-outs of one class: counts, the parents' waits, the ended child sessions (see the module docstring)."""

    __slots__ = ("children", "counters", "wait")

    def __init__(self) -> None:
        self.counters: dict[str, int] = dict.fromkeys(_FANOUT_COUNTERS, 0)
        self.wait = Histogram()
        self.children = Sessions()

    @property
    def empty(self) -> bool:
        return not any(self.counters.values())

    def merge(self, other: Fanouts) -> None:
        for k, v in other.counters.items():
            self.counters[k] += v
        self.wait.merge(other.wait)
        self.children.merge(other.children)

    def to_wire(self) -> FanoutsWire:
        return {"c": {k: v for k, v in self.counters.items() if v}, "w": self.wait.to_wire(), "s": self.children.to_wire()}

    @classmethod
    def from_wire(cls, wire: FanoutsWire) -> Fanouts:
        f = cls()
        for k, v in wire.get("c", {}).items():
            f.counters[k] = int(v)
        if "w" in wire:
            f.wait = Histogram.from_wire(wire["w"])
        if "s" in wire:
            f.children = Sessions.from_wire(wire["s"])
        return f

    def result(self) -> FanoutResult:
        c = self.counters
        return FanoutResult(c["fanouts"], c["started"], c["requests"], Latency.from_histogram(self.wait), self.children.result())


@dataclass(frozen=True, slots=True)
class FanoutResult:
    """Fan-outs: parent turns that carried answers, child sessions started, child requests, the parents' waits (ms),
    the ended child sessions (``children.sessions`` finished, ``children.failed`` failed)."""

    fanouts: int = 0
    started: int = 0
    requests: int = 0
    wait: Latency = field(default_factory=Latency)
    children: SessionResult = field(default_factory=SessionResult)

    def to_dict(self) -> dict[str, Json]:
        r = lambda x: None if x is None else round(x, 1)  # noqa: E731
        ch = self.children
        return {"fanouts": self.fanouts, "children_started": self.started, "children_finished": ch.sessions,
                "children_failed": ch.failed, "child_requests": self.requests, "wait_ms": self.wait.to_dict(),
                "child_duration_ms": ch.duration.to_dict(), "child_turns_mean": r(ch.turns_mean),
                "child_tokens_mean": r(ch.tokens_mean)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FanoutResult:
        i = lambda k: int(d.get(k) or 0)  # noqa: E731
        f = lambda k: float(d[k]) if isinstance(d.get(k), (int, float)) else None  # noqa: E731
        children = SessionResult(i("children_finished"), i("children_failed"), Latency.from_dict(d.get("child_duration_ms")),
                                 f("child_turns_mean"), 0, f("child_tokens_mean"), 0)  # fmt: skip
        return cls(i("fanouts"), i("children_started"), i("child_requests"), Latency.from_dict(d.get("wait_ms")), children)


@dataclass(frozen=True, slots=True)
class AgentFigures:
    """Per kind (``tool_turn``, ``answer_turn``, with fan-out ``child_turn``): a :class:`TurnResult`
    (``input_tokens_mean`` = context); the tool waits after tool turns (ms); the sessions; the fan-outs (None: none)."""

    key: ClassVar[str] = "agent"
    kinds: Mapping[str, TurnResult] = field(default_factory=dict)
    tool_wait: Latency = field(default_factory=Latency)
    sessions: SessionResult = field(default_factory=SessionResult)
    fanout: FanoutResult | None = None

    def to_dict(self) -> dict[str, Json]:
        if not self.kinds and not self.sessions.sessions and not self.sessions.failed:
            return {}
        block: dict[str, Json] = {k: t.to_dict() for k, t in self.kinds.items()}
        block["tool_wait_ms"] = self.tool_wait.to_dict()
        block["sessions"] = self.sessions.to_dict()
        if self.fanout is not None:
            block["fanout"] = self.fanout.to_dict()
        return {"agent": block}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AgentFigures:
        block = d.get("agent") or {}
        kinds = {k: TurnResult.from_dict(block[k] or {}) for k in _ALL_KINDS if k in block}
        fanout = FanoutResult.from_dict(block["fanout"]) if block.get("fanout") else None
        return cls(kinds, Latency.from_dict(block.get("tool_wait_ms")), SessionResult.from_dict(block.get("sessions") or {}),
                   fanout)  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        if not self.kinds and not self.sessions.sessions:
            return []
        parts = []
        for kind in KINDS:
            t = self.kinds.get(kind)
            if t is None or not t.ok:
                continue
            ttft, ctx = t.lat("ttft").p50, t.input_tokens_mean
            parts.append(f"{t.ok} {kind.replace('_', ' ')}s (TTFT p50 {_ms(ttft)}, context ~{ctx or 0:.0f} tokens)")
        if self.tool_wait.count:
            parts.append(f"tool wait p50 {_ms(self.tool_wait.p50)}")
        s = self.sessions
        if s.sessions:
            parts.append(f"{s.sessions} sessions ({s.turns_mean or 0:.1f} turns, {_ms(s.duration.p50)} and "
                         f"~{s.tokens_mean or 0:.0f} tokens each, p50/mean)")  # fmt: skip
        if s.failed:
            parts.append(f"{s.failed} ended by a failed turn")
        lines = ["agent: " + "; ".join(parts)]
        f = self.fanout
        if f is not None:
            t = self.kinds.get(CHILD_KIND)
            child_ttft = f", TTFT p50 {_ms(t.lat('ttft').p50)}" if t is not None and t.ok else ""
            lines.append(f"agent fan-out: {f.fanouts} fan-outs, waited p50 {_ms(f.wait.p50)} / p90 {_ms(f.wait.p90)}; "
                         f"{f.started} child sessions started, {f.children.sessions} finished, {f.children.failed} failed; "
                         f"{f.requests} child requests{child_ttft}")  # fmt: skip
        return lines


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1000:.2f} s" if x >= 1000 else f"{x:.0f} ms"


class AgentsWire(TypedDict, total=False):
    k: dict[str, TurnStatsWire]
    w: HistogramWire
    s: SessionsWire
    f: FanoutsWire


class Agents:
    """The agent turns of one class: per kind, the tool waits, the ended sessions."""

    __slots__ = ("fanouts", "kinds", "sessions", "tool_wait")
    key: ClassVar[str] = "agent"
    order: ClassVar[int] = 95
    figures: ClassVar[type[AgentFigures]] = AgentFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("agent_tool_turns", "Agent turns answered with tool calls", lambda p: p.count("tool_turn")),
        Exported("agent_sessions", "Agent sessions ended (complete or by a failed turn)",
                 lambda p: p.sessions.counters["sessions"] + p.sessions.counters["failed"]),
    )  # fmt: skip

    def __init__(self) -> None:
        self.kinds: dict[str, TurnStats] = {}
        self.tool_wait = Histogram()
        self.sessions = Sessions()
        self.fanouts = Fanouts()

    def count(self, kind: str) -> int:
        t = self.kinds.get(kind)
        return t.counters["ok"] if t is not None else 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        agent = rec.agent
        if agent is None:
            return
        if agent.waited_s > 0:
            self.tool_wait.record(agent.waited_s)
        fan = self.fanouts
        if agent.children:
            fan.counters["fanouts"] += 1
            fan.wait.record(agent.fanout_s)
        sessions = self.sessions
        if agent.child:
            fan.counters["requests"] += 1
            fan.counters["started"] += rec.turn == 1
            sessions = fan.children
        if rec.outcome == "error":
            sessions.counters["failed"] += 1
            return
        if rec.outcome != "ok":
            return
        kind = CHILD_KIND if agent.child else KINDS[0] if agent.calls else KINDS[1]
        t = self.kinds.get(kind)
        if t is None:
            t = self.kinds[kind] = TurnStats()
        t.add(True, seen.ttft, seen.tpot, seen.e2e, rec.input_tokens, rec.cached_prompt_tokens)
        if agent.last or agent.child and not agent.calls:  # a child ends at its first text answer
            start = agent.session_start_ns or rec.start_ns
            sessions.add((rec.end_ns - start) / 1e9, rec.turn, agent.session_tokens + rec.input_tokens + rec.output_tokens)

    def merge(self, other: Agents) -> None:
        for kind, t in other.kinds.items():
            mine = self.kinds.get(kind)
            if mine is None:
                mine = self.kinds[kind] = TurnStats()
            mine.merge(t)
        self.tool_wait.merge(other.tool_wait)
        self.sessions.merge(other.sessions)
        self.fanouts.merge(other.fanouts)

    @property
    def empty(self) -> bool:
        c = self.sessions.counters
        return not self.kinds and not self.tool_wait.count and not c["sessions"] and not c["failed"] and self.fanouts.empty

    def to_wire(self) -> AgentsWire:
        wire: AgentsWire = {"k": {k: t.to_wire() for k, t in self.kinds.items()}, "w": self.tool_wait.to_wire(),
                            "s": self.sessions.to_wire()}  # fmt: skip
        if not self.fanouts.empty:
            wire["f"] = self.fanouts.to_wire()
        return wire

    @classmethod
    def from_wire(cls, wire: AgentsWire) -> Agents:
        p = cls()
        for k, tw in wire.get("k", {}).items():
            p.kinds[k] = TurnStats.from_wire(tw)
        if "w" in wire:
            p.tool_wait = Histogram.from_wire(wire["w"])
        if "s" in wire:
            p.sessions = Sessions.from_wire(wire["s"])
        if "f" in wire:
            p.fanouts = Fanouts.from_wire(wire["f"])
        return p

    def result(self, ctx: Context) -> AgentFigures:
        kinds = {k: self.kinds[k].result() for k in _ALL_KINDS if k in self.kinds}
        fanout = None if self.fanouts.empty else self.fanouts.result()
        return AgentFigures(kinds, Latency.from_histogram(self.tool_wait), self.sessions.result(), fanout)


PART = Agents
