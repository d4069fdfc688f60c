"""predict --trace: a trace's entries on the virtual clock, at their times, repeated blocks reaching the prefix cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.drive import ClassSpec, StepSpec, Workload, drive
from llmload.capacity.trace_arrivals import TraceTokens, trace_arrivals
from llmload.sim.params import EngineParams
from llmload.workload.distributions import Fixed
from llmload.workload.traces import BLOCK_TOKENS, Trace, TraceEntry, trace_lines

CLS = (ClassSpec("trace", 1.0, Fixed(100), Fixed(10)),)


def _trace(entries: list[TraceEntry]) -> Trace:
    return Trace(Path("t.jsonl"), tuple(entries))


def test_equal_hash_ids_give_equal_tokens_and_the_rest_of_a_prompt_is_its_own():
    a = TraceTokens(TraceEntry(0, 2 * BLOCK_TOKENS + 7, 5, (3, 9)), 0)
    b = TraceTokens(TraceEntry(0, 2 * BLOCK_TOKENS + 7, 5, (3, 9)), 1)
    c = TraceTokens(TraceEntry(0, 2 * BLOCK_TOKENS, 5, (3, 4)), 2)
    assert len(a) == 2 * BLOCK_TOKENS + 7 and list(a) == [a[k] for k in range(len(a))]
    assert a[: 2 * BLOCK_TOKENS] == b[: 2 * BLOCK_TOKENS] and a[2 * BLOCK_TOKENS :] != b[2 * BLOCK_TOKENS :]
    assert a[:BLOCK_TOKENS] == c[:BLOCK_TOKENS] and a[BLOCK_TOKENS : 2 * BLOCK_TOKENS] != c[BLOCK_TOKENS:]
    assert len(set(a)) == len(a)  # no token repeats inside a prompt
    with pytest.raises(IndexError):
        a[len(a)]


def test_a_trace_is_sent_at_its_times_over_its_speedup_with_its_lengths():
    entries = [TraceEntry(0, 100, 10), TraceEntry(1000, 200, 20), TraceEntry(3000, 300, 30)]
    w = Workload(CLS, (StepSpec(8, 1.5 + 1e-6, 0.0),), "trace", trace=trace_arrivals(_trace(entries), 2.0),
                 max_in_flight=8)  # fmt: skip
    sent = drive(EngineParams(max_num_seqs=4), w, drain_s=60.0)
    assert [round(s.t, 6) for s in sent] == [0.0, 0.5, 1.5]
    assert [(s.prompt, s.max_tokens) for s in sent] == [(100, 10), (200, 20), (300, 30)]
    assert all(s.done and not s.error and len(s.times) == s.max_tokens for s in sent)


def test_repeated_blocks_skip_their_prefill_when_the_engine_caches_prefixes():
    # the same 8-block prompt twice, 10 s apart (no queueing): the second one's prefill is mostly cached
    entries = [TraceEntry(0, 8 * BLOCK_TOKENS, 4, tuple(range(8))), TraceEntry(10_000, 8 * BLOCK_TOKENS, 4, tuple(range(8)))]
    w = Workload(CLS, (StepSpec(4, 10.0 + 1e-6, 0.0),), "trace", trace=trace_arrivals(_trace(entries), 1.0))
    ttft = {}
    for caching in (True, False):
        sent = drive(EngineParams(prefix_caching=caching, prefill_tps=4000.0), w, drain_s=60.0)
        ttft[caching] = [s.times[0] - s.t for s in sent]
    assert ttft[False][1] == pytest.approx(ttft[False][0], rel=0.01)  # no cache: the same prompt costs the same
    assert ttft[True][1] < ttft[True][0] / 4  # cached: the second skips (almost) all of its 4096-token prefill


def test_held_entries_beyond_the_u_cap_are_sent_after_the_trace_s_span_and_every_entry_is_answered():
    entries = [TraceEntry(t, 50, 200) for t in (0, 10, 20, 30)]  # four long answers due within 30 ms
    w = Workload(CLS, (StepSpec(1, 0.03 + 1e-6, 0.0),), "trace", trace=trace_arrivals(_trace(entries), 1.0),
                 max_in_flight=1)  # fmt: skip
    sent = drive(EngineParams(max_num_seqs=4), w, drain_s=600.0)
    assert len(sent) == 4 and all(s.done and not s.error for s in sent)
    assert [s.intended for s in sent] == pytest.approx([0.0, 0.01, 0.02, 0.03])  # timed from when they were due
    assert sent[-1].t > 0.03  # sent once the one before it ended, after the span


def test_predict_trace_writes_a_trace_replay_summary(tmp_path, capsys):
    entries = [TraceEntry(100 * i, 700, 16, (i % 3, 100 + i)) for i in range(40)]
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines(entries))
    engine = tmp_path / "engine.toml"
    engine.write_text('schema = "llmload.engine/1"\n[params]\nmax_num_seqs = 8\n')
    summary = tmp_path / "s.json"
    argv = ["--engine", str(engine), "--trace", str(path), "--trace-speedup", "2", "-u", "16",
            "--summary-json", str(summary)]  # fmt: skip
    assert predict_main(argv) == 0, capsys.readouterr()
    s = json.loads(summary.read_text())
    assert s["overall"]["requests"] == 40 and s["overall"]["ok"] == 40 and s["overall"]["interrupted"] == 0
    assert list(s["classes"]) == ["trace"] and s["profile"]["name"] == "trace:t"
    assert s["arrival"]["mode"] == "trace" and s["arrival"]["trace"]["speedup"] == 2.0
    assert s["arrival"]["trace"]["span_s"] == pytest.approx(3.9 / 2)
    assert s["duration_s"] > 3.9 / 2  # until the last answer, as a real replay
    # the client's figures, as llmload run's: the trace's mean rate offered, every entry due and sent
    assert s["arrival"]["offered_rate"] == pytest.approx(40 / 1.95, rel=0.001)  # entries / span
    assert (s["arrival"]["arrivals"], s["arrival"]["sent"], s["arrival"]["unsent"]) == (40, 40, 0)
    assert predict_main([*argv, "--ladder", "1,2"]) == 2
    assert "--trace: the trace is the load" in capsys.readouterr().err
    assert predict_main([*argv, "--trace-speedup", "0"]) == 2
    assert "--trace-speedup 0: must be > 0" in capsys.readouterr().err
