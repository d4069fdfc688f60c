"""Workloads on the virtual clock: closed-loop users or open-loop arrivals, ladder steps, K replicas.

:func:`drive` runs a :class:`Workload` through ``replicas`` engine models
(:class:`~llmload.sim.batching.BatchingEngine`) sharing one
:class:`~llmload.sim.virtual.VirtualLoop` behind a round-robin or least-loaded router, and
returns one :class:`Sent` per request: when it was sent (and intended, open loop), its class and
lengths, its token times, the error that ended it. Closed loop: each step's users each send the
next request when the last one ended (users above a lower step's count stop after their
request); a user of a conversation class sends its session's next turn when the last one ended
plus its think time (an agent's: its tool wait, or its sub-agents first: :mod:`llmload.capacity.agent_session`),
its prompt holding the history (:mod:`llmload.capacity.session_replay`), and starts a new session after the
last turn or a failed one. Open loop: each step's rate, ``constant``,
``poisson`` or ``gamma`` gaps, or a trace's own times and lengths (``trace``; a recorded session turn after
turn: :mod:`llmload.capacity.trace_turns`); arrivals beyond the
``-u`` cap wait in the client, and those still waiting at the end are never sent
(:attr:`Drive.unsent`). Deterministic for a seed; no waiting.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llmload.capacity.agent_session import AgentTokens, ToolAnswers, fan_out, new_session
from llmload.capacity.session_replay import ClassSpec, Requests, Session, Turn
from llmload.capacity.trace_turns import run_session
from llmload.config.flags import flag
from llmload.sim.api import ApiError
from llmload.sim.batching import BatchingEngine
from llmload.sim.params import EngineParams
from llmload.sim.tools import DEFAULT_TOOL_CALL_SHARE
from llmload.sim.virtual import VirtualLoop
from llmload.workload.agent import ToolCall

__all__ = ["Arrival", "ClassSpec", "Drive", "Sent", "StepSpec", "Workload", "drive", "drive_run"]


@dataclass(frozen=True, slots=True)
class StepSpec:
    users: int
    duration_s: float
    warmup_s: float
    rate: float | None = None  # open loop: requests/s


@dataclass(frozen=True, slots=True)
class Arrival:
    """One request of a replayed trace: when it is due (s), its lengths, and its prompt's tokens (the
    prefix cache sees equal leading blocks as equal prompts: a trace's repeated ``hash_ids``)."""

    t: float
    prompt: int
    max_tokens: int
    tokens: Sequence[Any] = ()
    session: Any = None  # a recorded session (llmload.capacity.trace_turns.TraceSession): its turns follow


@dataclass(frozen=True, slots=True)
class Workload:
    classes: tuple[ClassSpec, ...]
    steps: tuple[StepSpec, ...]
    arrival: str = "closed"  # closed | constant | poisson | gamma | trace
    burstiness: float = flag("burstiness").default
    seed: int = 0
    max_in_flight: int = 0  # open loop: -u, the cap on requests in flight (0: none)
    trace: tuple[Arrival, ...] = ()  # arrival "trace": the entries, in time order (one class, the first)
    trace_replay: Any = None  # the summary's ``arrival.trace`` block (results.model.TraceReplay)
    tool_call_share: float = DEFAULT_TOOL_CALL_SHARE  # agent classes: the share of answers that are tool calls


@dataclass
class Sent:
    t: float
    cls: str
    prompt: int
    max_tokens: int
    step: int
    times: list[float] = field(default_factory=list)
    error: str = ""
    status: int = 200
    done: bool = False
    intended: float | None = None  # open loop: when it was due (it waited in the client for the -u cap)
    turn: int = 0  # its turn in its conversation (0: a single-request class)
    session: str = ""  # its conversation: "<user>.<n>", the user's n-th
    user: int = -1  # closed loop: the user that sent it
    seq: Any = None  # the engine's handle (its prefix-cache hit: seq.cached_tokens)
    agent: Any = None  # an agent turn's AgentTurn (llmload.capacity.agent_session), put on its record
    calls: tuple[str, ...] = ()  # an agent turn: the tools its answer calls (none: a text answer)


@dataclass(frozen=True, slots=True)
class Drive:
    """What a drive sent, and (open loop) when each arrival still held by the -u cap at the end was due."""

    sent: list[Sent]
    unsent: list[float]


class _Sink:
    __slots__ = ("loop", "on_done", "sent")

    def __init__(self, loop: VirtualLoop, sent: Sent, on_done: Any) -> None:
        self.loop, self.sent, self.on_done = loop, sent, on_done

    def emit(self, n: int, finished: bool) -> None:
        self.sent.times.extend([self.loop.time()] * n)
        if finished:
            self.sent.done = True
            self.on_done(self.sent)

    def fail(self, message: str) -> None:
        self.sent.error, self.sent.status = message, 500 if not self.sent.times else 200
        self.sent.done = True
        self.on_done(self.sent)


class _Router:
    def __init__(self, engines: list[BatchingEngine], policy: str) -> None:
        self.engines, self.policy, self.i = engines, policy, 0
        self.load = [0] * len(engines)

    def pick(self) -> int:
        if self.policy == "least-loaded":
            return min(range(len(self.engines)), key=lambda k: (self.load[k], (k - self.i) % len(self.engines)))
        k, self.i = self.i, (self.i + 1) % len(self.engines)
        return k


class _Driver:
    """One drive: the loop, the engines behind their router, the class mix and every request sent."""

    def __init__(self, params: EngineParams, w: Workload, replicas: int, router: str) -> None:
        self.w, self.loop = w, VirtualLoop()
        self.engines = [BatchingEngine(params, self.loop) for _ in range(replicas)]  # type: ignore[arg-type]
        self.route = _Router(self.engines, router)
        self.rng = random.Random(w.seed)
        self.requests = Requests(w.classes, self.rng, w.seed)
        self.tools = ToolAnswers(w.tool_call_share, w.seed)
        self.out: list[Sent] = []
        self.held: deque[tuple[float, int, Arrival | None]] = deque()  # open loop: arrivals the -u cap holds
        self.bounds, t = [], 0.0
        for s in w.steps:
            self.bounds.append((t, t + s.duration_s))
            t += s.duration_s
        self.end = t

    def send(self, step: int, on_done: Any, turn: Turn, intended: float | None = None, session: str = "",
             user: int = -1, agent: Any = None, tools: Any = None) -> Sent:  # fmt: skip
        """Send ``turn``; ``user``: the closed loop's user that sends it; ``agent``/``tools``: an agent turn's
        AgentTurn and its class's AgentSpec (its answer's tool calls drawn now, as the simulator draws them when
        the request arrives)."""
        loop, route = self.loop, self.route
        sent = Sent(loop.time(), turn.cls, max(1, turn.prompt), max(1, turn.max_tokens), step, intended=intended,
                    turn=turn.turn, session=session, user=user, agent=agent)  # fmt: skip
        if tools is not None:
            sent.calls = self.tools.decide(tools, sent.max_tokens)
        self.out.append(sent)
        k = route.pick()
        route.load[k] += 1

        def finished(s: Sent) -> None:
            route.load[k] -= 1
            if s.agent is not None and not s.error:  # as the client assembles them from the stream
                s.agent.calls = tuple(ToolCall(f"call_sim{i}", n, "{}") for i, n in enumerate(s.calls)) or None
            on_done(s)

        try:
            sent.seq = self.engines[k].submit(_Sink(loop, sent, finished), sent.max_tokens, sent.prompt, turn.tokens)
        except ApiError as e:
            sent.error, sent.status, sent.done = e.message, e.status, True
            loop.call_soon(finished, sent)
        return sent

    def closed(self) -> None:
        """Each step's users send their next request (or turn, after its think time) when the last one ended
        (users above it stop)."""
        loop, w, state = self.loop, self.w, {"step": 0, "users": 0}
        sessions: dict[int, Session] = {}
        started = [0] * max(s.users for s in w.steps)  # sessions each user started (their ids)

        def user(uid: int) -> None:
            if loop.time() >= self.end or uid >= state["users"]:
                return
            session = sessions.get(uid)
            if session is None:
                session = sessions[uid] = new_session(self.requests)
                started[uid] += 1
            sid = f"{uid}.{started[uid]}" if session.spec.conversation else ""
            turn = session.next_turn()
            agent = isinstance(session, AgentTokens)
            self.send(state["step"], lambda s: ended(uid, session, s), turn, session=sid, user=uid,
                      agent=session.agent_turn() if agent else None, tools=session.agent if agent else None)  # type: ignore[attr-defined]  # fmt: skip

        def ended(uid: int, session: Session, s: Sent) -> None:
            if s.error or not s.done or session.done:  # no reply to continue from, or the last turn
                sessions.pop(uid, None)
                loop.call_soon(user, uid)
                return
            session.reply = len(s.times)
            if isinstance(session, AgentTokens):  # tool calls: their wait; a fan-out: its children first
                session.took(s.t, s.prompt, len(s.times))
                session.calls, session.waited_s = len(s.calls), 0.0
                if session.fanout_due:
                    fan_out(self, session, s.session, state["step"],
                            lambda: loop.time() < self.end and uid < state["users"], lambda: user(uid))  # fmt: skip
                    return
                if s.calls:
                    session.waited_s = session.tool_wait()
                    loop.call_later(session.waited_s, user, uid)
                    return
            loop.call_later(session.think_s, user, uid)

        def begin(i: int) -> None:
            before = state["users"]
            state["step"], state["users"] = i, w.steps[i].users
            for uid in range(before, w.steps[i].users):
                user(uid)

        for i, (t0, _) in enumerate(self.bounds):
            loop.call_at(t0, begin, i)

    def gap(self, rate: float) -> float:
        w, rng = self.w, self.rng
        if w.arrival == "constant":
            return 1.0 / rate
        if w.arrival == "gamma":
            k = w.burstiness
            return rng.gammavariate(k, 1.0 / (rate * k))
        return rng.expovariate(rate)

    def single(self, entry: Arrival | None) -> Turn:
        """An open loop's next request: the next class's (a single request), or a trace entry's."""
        if entry is None:
            return self.requests.session().next_turn()
        return Turn(self.w.classes[0].name, entry.prompt, entry.max_tokens, entry.tokens)

    def open(self) -> None:
        """Arrivals at each step's rate (or a trace's times); beyond -u in flight they wait in the client, sent
        as slots free."""
        loop, w = self.loop, self.w
        waiting = self.held  # arrivals held in the client by the -u cap (at the end: never sent)
        flight = [0]

        def done(_: Sent) -> None:
            flight[0] -= 1
            # after the run's end the held ones stay unsent; a trace replay sends every entry (as llmload run)
            if waiting and (loop.time() < self.end or w.arrival == "trace"):
                go(*waiting.popleft())

        def go(due: float, i: int, entry: Arrival | None = None) -> None:
            flight[0] += 1
            if entry is not None and entry.session is not None:  # a recorded session holds its slot to its end
                run_session(self, entry.session, w.classes[0].name, i, due, done)
                return
            self.send(i, done, self.single(entry), due)

        def admit(i: int, entry: Arrival | None = None) -> None:
            if w.max_in_flight and flight[0] >= w.max_in_flight:
                waiting.append((loop.time(), i, entry))
            else:
                go(loop.time(), i, entry)

        def arrive(i: int) -> None:
            if loop.time() >= self.bounds[i][1] - 1e-9:  # (a sum of constant gaps lands a hair early)
                return
            admit(i)
            loop.call_later(self.gap(w.steps[i].rate or 1.0), arrive, i)

        if w.arrival == "trace":
            for e in w.trace:
                loop.call_at(e.t, admit, 0, e)
            return
        for i, (t0, _) in enumerate(self.bounds):
            loop.call_at(t0, arrive, i)


def drive_run(
    params: EngineParams, w: Workload, replicas: int = 1, router: str = "round-robin", drain_s: float = 0.0
) -> Drive:
    """Every request the workload sends, with what the engines answered (see the module docstring), and the
    arrivals the -u cap still held at the end (never sent).

    ``drain_s``: how long after the last step the requests in flight may still finish (a ladder
    waits for them, up to the request timeout); nothing new is sent then."""
    d = _Driver(params, w, replicas, router)
    if w.arrival == "closed":
        d.closed()
    else:
        d.open()
    d.loop.run(d.end + drain_s)
    return Drive(d.out, [due for due, _, _ in d.held])


def drive(
    params: EngineParams, w: Workload, replicas: int = 1, router: str = "round-robin", drain_s: float = 0.0
) -> list[Sent]:
    """Every request the workload sends (:func:`drive_run`'s ``sent``)."""
    return drive_run(params, w, replicas, router, drain_s).sent


def step_bounds(w: Workload) -> list[tuple[float, float, float]]:
    """(start, steady_from, end) of each step, seconds."""
    out, t = [], 0.0
    for s in w.steps:
        out.append((t, t + s.warmup_s, t + s.duration_s))
        t += s.duration_s
    return out
