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

__all__ = ["KINDS", "AgentFigures", "Agents", "AgentsWire", "SessionResult", "Sessions"]

#: The turn kinds: an answer with tool calls, an answer in text.
KINDS = ("tool_turn", "answer_turn")
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


@dataclass(frozen=True, slots=True)
class AgentFigures:
    """Per kind (``tool_turn``, ``answer_turn``): a :class:`TurnResult` (``input_tokens_mean`` = context);
    the tool waits after tool turns (ms); the sessions."""

    key: ClassVar[str] = "agent"
    kinds: Mapping[str, TurnResult] = field(default_factory=dict)
    tool_wait: Latency = field(default_factory=Latency)
    sessions: SessionResult = field(default_factory=SessionResult)

    def to_dict(self) -> dict[str, Json]:
        if not self.kinds and not self.sessions.sessions and not self.sessions.failed:
            return {}
        block: dict[str, Json] = {k: t.to_dict() for k, t in self.kinds.items()}
        block["tool_wait_ms"] = self.tool_wait.to_dict()
        block["sessions"] = self.sessions.to_dict()
        return {"agent": block}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AgentFigures:
        block = d.get("agent") or {}
        kinds = {k: TurnResult.from_dict(block[k] or {}) for k in KINDS if k in block}
        return cls(kinds, Latency.from_dict(block.get("tool_wait_ms")), SessionResult.from_dict(block.get("sessions") or {}))

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
        return ["agent: " + "; ".join(parts)]


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1000:.2f} s" if x >= 1000 else f"{x:.0f} ms"


class AgentsWire(TypedDict, total=False):
    k: dict[str, TurnStatsWire]
    w: HistogramWire
    s: SessionsWire


class Agents:
    """The agent turns of one class: per kind, the tool waits, the ended sessions."""

    __slots__ = ("kinds", "sessions", "tool_wait")
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

    def count(self, kind: str) -> int:
        t = self.kinds.get(kind)
        return t.counters["ok"] if t is not None else 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        agent = rec.agent
        if agent is None:
            return
        if agent.waited_s > 0:
            self.tool_wait.record(agent.waited_s)
        if rec.outcome == "error":
            self.sessions.counters["failed"] += 1
            return
        if rec.outcome != "ok":
            return
        kind = KINDS[0] if agent.calls else KINDS[1]
        t = self.kinds.get(kind)
        if t is None:
            t = self.kinds[kind] = TurnStats()
        t.add(True, seen.ttft, seen.tpot, seen.e2e, rec.input_tokens, rec.cached_prompt_tokens)
        if agent.last:
            start = agent.session_start_ns or rec.start_ns
            self.sessions.add((rec.end_ns - start) / 1e9, rec.turn, agent.session_tokens + rec.input_tokens + rec.output_tokens)

    def merge(self, other: Agents) -> None:
        for kind, t in other.kinds.items():
            mine = self.kinds.get(kind)
            if mine is None:
                mine = self.kinds[kind] = TurnStats()
            mine.merge(t)
        self.tool_wait.merge(other.tool_wait)
        self.sessions.merge(other.sessions)

    @property
    def empty(self) -> bool:
        c = self.sessions.counters
        return not self.kinds and not self.tool_wait.count and not c["sessions"] and not c["failed"]

    def to_wire(self) -> AgentsWire:
        return {"k": {k: t.to_wire() for k, t in self.kinds.items()}, "w": self.tool_wait.to_wire(), "s": self.sessions.to_wire()}

    @classmethod
    def from_wire(cls, wire: AgentsWire) -> Agents:
        p = cls()
        for k, tw in wire.get("k", {}).items():
            p.kinds[k] = TurnStats.from_wire(tw)
        if "w" in wire:
            p.tool_wait = Histogram.from_wire(wire["w"])
        if "s" in wire:
            p.sessions = Sessions.from_wire(wire["s"])
        return p

    def result(self, ctx: Context) -> AgentFigures:
        kinds = {k: self.kinds[k].result() for k in KINDS if k in self.kinds}
        return AgentFigures(kinds, Latency.from_histogram(self.tool_wait), self.sessions.result())


PART = Agents
