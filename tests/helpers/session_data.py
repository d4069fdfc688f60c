"""A ladder over agent sessions, built from request records as a run records them, then analysed.

Class ``agent``: sessions of 4 turns (3 tool turns, then an answer), each turn a record with
its turn number and :class:`~llmload.workload.agent.AgentTurn`; each step holds
``sessions x 5`` sessions' turns. TTFT per step is given (ms); with ``slo_ms`` the run has the
SLO ``ttft_ms <= slo_ms``. ``chat``: the same turns as a plain conversation (no agent figures). ``single`` adds a single-request class (then the run is over users).
``fanout``: each session's turn 2 is followed by a sub-agent's one-turn child session.
"""

from __future__ import annotations

from dataclasses import replace

from llmload.analysis import analyze
from llmload.ladder import StepWindow
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder
from llmload.metrics.slo import SLO
from llmload.results import RunSetup, build_result
from llmload.results.model import RunResult
from llmload.workload.agent import AgentTurn, ToolCall

T0 = 1_800_000_000.0
MS = 1_000_000
TURNS = 4


def _record(
    cls: str, step: int, ttft: float, turn: int, start_ms: int, session_start_ms: int, agent: bool, chat: bool = False
) -> RequestRecord:
    r = RequestRecord(cls, input_tokens=100 * turn, max_tokens=4)
    r.start_ns = start_ms * MS
    r.chunk_ns = [r.start_ns + int((ttft + 10 * k) * MS) for k in range(4)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.outcome, r.step = "ok", step
    if chat:  # a plain conversation's turn
        r.turn = turn
    elif agent:
        r.turn = turn
        r.agent = AgentTurn(session_start_ms * MS, 0, last=turn == TURNS, waited_s=0.5 if turn > 1 else 0.0)
        if turn < TURNS:
            r.agent.calls = (ToolCall("c1", "search", "{}"),)
    return r


def session_result(
    ttfts: dict[int, float],
    slo_ms: float | None = None,
    single: bool = False,
    chat: bool = False,
    coder_slo_ms: float | None = None,
    fanout: bool = False,
) -> RunResult:
    """A ladder of ``{users: TTFT ms}`` steps over agent sessions (module docstring; ``chat``: plain conversations,
    no agent turns; ``coder_slo_ms``: a second agent class, ``coder``, with its own SLO ``ttft_ms``), analysed."""
    recorder = Recorder()
    coder = [] if coder_slo_ms is None else [{"name": "coder", "weight": 1, "slo": {"ttft_ms": coder_slo_ms}}]
    if slo_ms is not None:
        own = {"coder": SLO(ttft_ms=coder_slo_ms)} if coder else {}
        recorder.set_slos({"agent": SLO(ttft_ms=slo_ms), **own}, SLO(ttft_ms=slo_ms))
    windows = []
    for step, (users, ttft) in enumerate(ttfts.items()):
        for session in range(users * 5):
            begin = session * 10_000
            for turn in range(1, TURNS + 1):
                # one session in ten is slower: the TTFT p99 sits above the p50
                slow = 3.0 if session % 10 == 9 else 1.0
                recorder.add(_record("agent", step, ttft * slow, turn, begin + turn * 2000, begin + 2000, True, chat))
                if fanout and turn == 2:  # a sub-agent's one turn (llmload.workload.fanout) before turn 3
                    child = _record("agent", step, ttft, 1, begin + turn * 2000 + 500, 0, True)
                    child.agent = AgentTurn(child=True)
                    recorder.add(child)
                if coder:
                    recorder.add(_record("coder", step, ttft, turn, begin + turn * 2000, begin + 2000, True))
                if single:
                    recorder.add(_record("chat", step, ttft, 0, begin, 0, False))
        t = T0 + 30 * step
        windows.append(StepWindow(step, users, t, t + 5, t + 25))
    steps = {int(k): MetricSet.from_wire(w) for k, w in recorder.drain_steps().items()}
    classes = [{"name": "agent", "weight": 1}, *coder] + ([{"name": "chat", "weight": 1}] if single else [])
    setup = {"api": "openai-chat", "model": "m"} | ({"slo": {"ttft_ms": slo_ms}} if slo_ms is not None else {})
    result = build_result(
        recorder.snapshot(), duration_s=30.0 * len(ttfts), users_max=max(ttfts), weights={c["name"]: 1 for c in classes},
        windows=windows, step_metrics=steps, setup=RunSetup.from_summary(setup, {"name": "p", "classes": classes}),
        slos=slo_ms is not None,
    )  # fmt: skip
    return replace(result, judgement=analyze(result))
