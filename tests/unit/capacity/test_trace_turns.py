"""predict --trace with sessions: each recorded session replayed turn after turn, as the live replay does."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.drive import ClassSpec, StepSpec, Workload, drive
from llmload.capacity.engine_file import write_engine
from llmload.capacity.trace_arrivals import trace_arrivals
from llmload.capacity.trace_turns import SESSION_KEY_BASE
from llmload.sim.params import EngineParams
from llmload.workload.distributions import Fixed
from llmload.workload.replay_session import ReplaySession
from llmload.workload.trace_sessions import SessionTurn
from llmload.workload.traces import Trace, TraceEntry

TOOLS = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)
CLS = (ClassSpec("trace", 1.0, Fixed(100), Fixed(10)),)


def _session(name: str, t0: float) -> list[TraceEntry]:
    """Turn 1 answered with two tool calls; turn 2 sends their results; turn 3 a new user message."""
    return [
        TraceEntry(t0, 20, 8, (), SessionTurn(name, 1, user_tokens=20, tool_calls=("search", "lookup"), tools=TOOLS)),
        TraceEntry(t0 + 900.0, 128, 30, (), SessionTurn(name, 2, wait_ms=300.0, tool_results=(50, 40))),
        TraceEntry(t0 + 1500.0, 180, 16, (), SessionTurn(name, 3, wait_ms=100.0, user_tokens=12)),
    ]


def _workload(entries: list[TraceEntry], speedup: float = 1.0, users: int = 8) -> Workload:
    trace = Trace(Path("t.jsonl"), tuple(entries))
    return Workload(CLS, (StepSpec(users, trace.duration_ms / 1000 / speedup + 1e-6, 0.0),), "trace",
                    trace=trace_arrivals(trace, speedup), max_in_flight=users)  # fmt: skip


def test_a_session_s_turns_follow_the_previous_answer_plus_its_wait_and_send_what_the_live_replay_sends():
    entries = _session("s", 0.0)
    sent = drive(EngineParams(max_num_seqs=4, prefill_tps=5000.0), _workload(entries, speedup=2.0), drain_s=60.0)
    assert [s.turn for s in sent] == [1, 2, 3] and all(s.done and not s.error for s in sent)
    # turn k is sent wait_ms / speedup after turn k - 1's last token, not at its timestamp
    assert sent[1].t == pytest.approx(sent[0].times[-1] + 0.150) and sent[2].t == pytest.approx(sent[1].times[-1] + 0.050)
    # the live replay's own code, given the answers this drive got: the same prompts and max_tokens
    live = ReplaySession(entries, (0, 1, 2), random.Random(1), "trace", speedup=2.0)
    want, reply = [], None
    for s in sent:
        sample = live.next_turn(*reply) if reply else live.next_turn()
        want.append((sample.input_tokens, sample.max_tokens))
        reply = ("", len(s.times), None)
    assert [(s.prompt, s.max_tokens) for s in sent] == want == [(20, 8), (20 + 8 + 90, 30), (118 + 30 + 12, 16)]
    # its records carry the agent turn: the recorded calls, the tool results and the wait before them
    assert [len(s.agent.calls or ()) for s in sent] == [2, 0, 0]
    assert sent[1].agent.results == (50, 40) and sent[1].agent.waited_s == pytest.approx(0.15)
    assert sent[0].agent.spec is not None and sent[2].agent.last and sent[1].session == "s"


def test_the_history_is_a_prefix_cache_hit_and_sessions_never_share_tokens():
    entries = _session("a", 0.0) + _session("b", 5000.0)
    sent = drive(EngineParams(max_num_seqs=4), _workload(sorted(entries, key=lambda e: e.timestamp_ms)), drain_s=60.0)
    by = {(s.session, s.turn): s for s in sent}
    assert by[("a", 1)].seq.cached_tokens == 0 and by[("b", 1)].seq.cached_tokens == 0
    assert by[("a", 3)].seq.cached_tokens > 0  # turn 2's prompt, re-sent (whole blocks of it)
    assert by[("b", 1)].t == pytest.approx(5.0)
    assert SESSION_KEY_BASE << 32 > 10**9 * 512  # session tokens stay clear of a trace's blocks


def test_the_u_cap_holds_a_whole_session():
    entries = sorted(_session("a", 0.0) + _session("b", 10.0), key=lambda e: e.timestamp_ms)
    sent = drive(EngineParams(max_num_seqs=4), _workload(entries, users=1), drain_s=60.0)
    a3 = next(s for s in sent if s.session == "a" and s.turn == 3)
    b1 = next(s for s in sent if s.session == "b" and s.turn == 1)
    assert b1.t == pytest.approx(a3.times[-1]) and b1.intended == pytest.approx(0.01)  # due at 10 ms, sent when a ended


def test_predict_trace_with_sessions_writes_the_agent_figures(tmp_path):
    trace = tmp_path / "s.jsonl"
    entries = sorted(_session("a", 0.0) + _session("b", 400.0), key=lambda e: e.timestamp_ms)
    trace.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in entries))
    engine = tmp_path / "engine.toml"
    write_engine(engine, EngineParams(), [], [], {})
    out = tmp_path / "p.json"
    assert predict_main(["--engine", str(engine), "--trace", str(trace), "-u", "4", "--summary-json", str(out),
                         "--runs-dir", str(tmp_path / "runs")]) == 0  # fmt: skip
    s = json.loads(out.read_text())
    agent = s["classes"]["trace"]["agent"]
    assert agent["tool_turn"]["requests"] == 2 and agent["answer_turn"]["requests"] == 4
    assert agent["sessions"]["sessions"] == 2
    assert s["arrival"]["arrivals"] == s["arrival"]["sent"] == s["arrival"]["trace"]["entries"] == 2  # the sessions
