"""predict's conversations and datasets: sessions in token counts, checked against the live code path.

The main check builds the same closed-loop ladder two ways and runs both on the simulator's engine model
(a preset's parameters) on a virtual clock: predict's drive (:mod:`llmload.capacity.session_replay`), and what a
live ``llmload run`` against ``llmload sim`` does, piece by piece: each user's own
:class:`~llmload.workload.sampler.WorkloadSampler` and :class:`~llmload.workload.conversation.Session`
(text prompts, the history re-sent as chat messages, the think time slept), each request parsed by the
simulator's own :func:`~llmload.sim.api.parse_request` (its tokens: the words), the reply the simulator's
words. Per step, TTFT and TPOT p50 must agree within 10 % and the prefix cache's hits within 5 %.
"""

from __future__ import annotations

import json
import random

import orjson
import pytest

from llmload.capacity.capacity_command import predict_main
from llmload.capacity.drive import StepSpec, Workload, drive, step_bounds
from llmload.capacity.predict import extrapolation
from llmload.capacity.session_replay import ClassSpec, PromptTokens, Requests, longest
from llmload.capacity.workload_args import class_spec
from llmload.sim.api import BaseEncoder, parse_request
from llmload.sim.batching import BatchingEngine
from llmload.sim.presets import preset_params
from llmload.sim.virtual import VirtualLoop
from llmload.workload.distributions import Duration, Fixed, Uniform
from llmload.workload.prefixes import PrefixSpec
from llmload.workload.profiles import profile_from_dict
from llmload.workload.sampler import WorkloadSampler

CHAT = {"name": "chat", "weight": 2, "turns": {"dist": "uniform", "min": 2, "max": 5},
        "think_time_s": {"dist": "exponential", "mean": 0.5, "max": 3}, "prefix": {"groups": 2, "tokens": 400},
        "input_tokens": {"dist": "uniform", "min": 80, "max": 250},
        "output_tokens": {"dist": "uniform", "min": 20, "max": 60}}  # fmt: skip
SINGLE = {"name": "single", "weight": 1, "input_tokens": 300, "output_tokens": 30}


def test_a_conversation_s_turns_extend_each_other_and_a_prefix_group_is_shared():
    spec = ClassSpec("chat", 1, Fixed(100), Fixed(20), PrefixSpec(1, 64), turns=Fixed(3), think=Duration("fixed", 2.0))
    src = Requests([spec], random.Random(1))
    a, b = src.session(), src.session()
    t1 = a.next_turn()
    assert (t1.prompt, t1.max_tokens, t1.turn, a.think_s) == (164, 20, 1, 2.0)
    a.reply = 20
    t2 = a.next_turn()
    assert t2.prompt == 164 + 20 + 100 and t2.turn == 2 and list(t2.tokens[:164]) == list(t1.tokens)  # the history
    a.reply = 20
    t3 = a.next_turn()
    assert a.done and a.think_s == 0.0 and t3.prompt == 284 + 120 and list(t3.tokens[:284]) == list(t2.tokens)
    u1 = b.next_turn()
    assert u1.tokens[:64] == t1.tokens[:64] and u1.tokens[64:] != t1.tokens[64:]  # one prefix group, own rest
    assert len(set(t3.tokens)) == len(t3.tokens)


def test_prompt_tokens_index_and_slice_like_a_tuple():
    p = PromptTokens(3, 4, 9, 10)
    assert len(p) == 10 and list(p) == [p[k] for k in range(10)] == list(p[:]) and p[-1] == p[9]
    assert p[0] == 3 << 32 and p[4] == 9 << 32 | 4
    with pytest.raises(IndexError):
        p[10]


def test_single_request_classes_draw_as_before_and_carry_no_tokens_without_a_prefix():
    spec = ClassSpec("s", 1, Uniform(10, 90), Uniform(5, 50))
    src, rng = Requests([spec], random.Random(7)), random.Random(7)
    for _ in range(20):
        t = src.session().next_turn()
        assert (t.prompt, t.max_tokens, t.tokens, t.turn) == (spec.input.sample(rng), spec.output.sample(rng), (), 0)


def test_a_dataset_conversation_replays_its_recorded_turns_as_the_live_session_does(tmp_path):
    path = tmp_path / "d.jsonl"
    turns = [("user", "a" * 400), ("assistant", "b" * 120), ("user", "c" * 200), ("assistant", "d" * 80),
             ("user", "e" * 40), ("assistant", "f" * 400)]  # fmt: skip
    path.write_bytes(orjson.dumps({"messages": [{"role": r, "content": t} for r, t in turns]}) + b"\n")
    profile = profile_from_dict({"classes": [{"name": "sg", "weight": 1, "prompt": {"source": "dataset", "path": str(path)},
                                              "output_tokens": "dataset", "turns": "dataset"}]})  # fmt: skip
    session = Requests([class_spec(profile.classes[0], "p")], random.Random(0)).session()
    live = WorkloadSampler(profile, seed=0, user_index=0).start_session()
    ours, theirs, reply = [], [], None
    while not live.done:
        sample = live.next_turn(reply, None if reply is None else len(reply.split()))
        theirs.append((sample.input_tokens, sample.max_tokens))
        reply = " w" * sample.max_tokens
        t = session.next_turn()
        session.reply = t.max_tokens
        ours.append((t.prompt, t.max_tokens))
    assert session.done and ours == theirs == [(100, 30), (100 + 30 + 50, 20), (180 + 20 + 10, 100)]


def _live_way(params, profile, levels, step_s, seed=0):
    """The ladder as llmload run against llmload sim sends it, on a virtual clock: [(start, TTFT, TPOT, cached)]."""
    loop = VirtualLoop()
    engine = BatchingEngine(params, loop)  # type: ignore[arg-type]
    out, users = [], {}

    class Sink:
        def __init__(self, rec):
            self.rec = rec

        def emit(self, n, finished):
            self.rec["times"] += [loop.time()] * n
            if finished:
                ended(self.rec)

        def fail(self, message):
            raise AssertionError(message)

    def turn(uid):
        if loop.time() >= len(levels) * step_s:
            return
        sampler, session, reply = users[uid]
        if session is None or session.done:
            session, reply = sampler.start_session(), None
        sample = session.next_turn(reply, None if reply is None else len(reply.split())) if session.conversation \
            else session.next_turn()  # fmt: skip
        messages = list(sample.messages) if sample.messages else [{"role": "user", "content": sample.prompt}]
        req = parse_request("chat", orjson.dumps({"messages": messages, "max_tokens": sample.max_tokens}), "m", 16)
        rec = {"uid": uid, "t": loop.time(), "times": [], "req": req, "session": session}
        users[uid] = (sampler, session, None)
        rec["seq"] = engine.submit(Sink(rec), req.max_tokens, req.prompt_tokens, req.tokens)
        out.append(rec)

    def ended(rec):
        sampler, session, _ = users[rec["uid"]]
        users[rec["uid"]] = (sampler, session, BaseEncoder(rec["req"], rec["uid"] * 7919).text(len(rec["times"])))
        loop.call_later(session.think_time_s if not session.done else 0.0, turn, rec["uid"])

    def begin(n):
        for uid in range(len(users), n):
            users[uid] = (WorkloadSampler(profile, seed, uid), None, None)
            turn(uid)

    for i, n in enumerate(levels):
        loop.call_at(i * step_s, begin, n)
    loop.run(len(levels) * step_s + 600)
    return [(r["t"], r["times"][0] - r["t"], (r["times"][-1] - r["times"][0]) / (len(r["times"]) - 1),
             r["seq"].cached_tokens, r["req"].prompt_tokens) for r in out if len(r["times"]) > 1]  # fmt: skip


def _p50(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def test_predict_of_a_conversation_ladder_agrees_with_the_live_code_path_on_the_same_engine():
    params = preset_params("batch-starved")  # 4 slots: the 12-user step queues
    profile = profile_from_dict({"name": "conv", "classes": [CHAT, SINGLE]})
    levels, step_s, warm = (4, 12), 60.0, 10.0
    w = Workload(tuple(class_spec(c, "conv") for c in profile.classes), tuple(StepSpec(n, step_s, warm) for n in levels))
    ours = [(s.t, s.times[0] - s.t, (s.times[-1] - s.times[0]) / (len(s.times) - 1), s.seq.cached_tokens, s.prompt)
            for s in drive(params, w, drain_s=600) if s.done and len(s.times) > 1]  # fmt: skip
    theirs = _live_way(params, profile, levels, step_s)
    for i, (_, steady, stop) in enumerate(step_bounds(w)):
        a = [r for r in ours if steady <= r[0] < stop]
        b = [r for r in theirs if steady <= r[0] < stop]
        assert len(a) == pytest.approx(len(b), rel=0.1)
        for k, name in ((1, "TTFT"), (2, "TPOT")):
            got, want = _p50(r[k] for r in a), _p50(r[k] for r in b)
            assert got == pytest.approx(want, rel=0.10), (i, name, got, want)
        hit = sum(r[3] for r in a) / sum(r[4] for r in a)
        assert hit == pytest.approx(sum(r[3] for r in b) / sum(r[4] for r in b), abs=0.05) and hit > 0.3


def test_predict_replays_a_dataset_class_with_its_recorded_lengths(tmp_path, capsys):
    data = tmp_path / "prompts.jsonl"
    data.write_bytes(b"".join(orjson.dumps({"prompt": "x" * (4 * n), "output_tokens": m}) + b"\n"
                              for n, m in ((100, 10), (400, 30), (800, 50))))  # fmt: skip
    profile = tmp_path / "p.toml"
    profile.write_text(f'[[classes]]\nname = "ds"\nweight = 1\nprompt = {{source = "dataset", path = "{data}"}}\n'
                       'output_tokens = "dataset"\n')  # fmt: skip
    engine, out = tmp_path / "engine.toml", tmp_path / "s.json"
    engine.write_text('schema = "llmload.engine/1"\n[params]\nmax_num_seqs = 4\n')
    argv = ["--engine", str(engine), "--profile", str(profile), "-u", "3", "-t", "30s", "--summary-json", str(out)]
    assert predict_main([*argv, "--quiet"]) == 0, capsys.readouterr()
    s = json.loads(out.read_text())["classes"]["ds"]
    assert s["ok"] > 30 and s["input_tokens"] / s["requests"] == pytest.approx(1300 / 3, rel=0.1)  # once per cycle
    spec = class_spec(profile_from_dict({"classes": [{"name": "ds", "weight": 1, "output_tokens": "dataset",
                                                      "prompt": {"source": "dataset", "path": str(data)}}]}).classes[0],
                      "p")  # fmt: skip
    sent = drive(preset_params("healthy"), Workload((spec,), (StepSpec(3, 30.0, 0.0),)))
    assert {(x.prompt, x.max_tokens) for x in sent} == {(100, 10), (400, 30), (800, 50)}
    assert [x.prompt for x in sent[:6]].count(100) == 2  # every record once per cycle
    assert predict_main([*argv, "--max-tokens-cap", "20", "--quiet"]) == 0
    capped = json.loads(out.read_text())["classes"]["ds"]
    assert capped["output_tokens"] / capped["ok"] == pytest.approx(50 / 3, rel=0.05)  # 10, 20, 20
    assert predict_main([*argv, "--arrival", "poisson", "--rate", "2"]) == 0  # a dataset is fine in an open loop


@pytest.mark.parametrize(
    ("cls", "args", "said"),
    [
        (CHAT, ["--arrival", "poisson", "--rate", "2"], "--arrival poisson: profile"),
        ({**SINGLE, "turns": 2, "tools": [{"type": "function", "function": {"name": "f"}}]},
         ["--tool-call-share", "1.5"], "--tool-call-share 1.5: must be a share in 0..1"),
    ],
)
def test_what_predict_cannot_replay_is_one_error_line(tmp_path, capsys, cls, args, said):
    profile = tmp_path / "p.json"
    profile.write_bytes(orjson.dumps({"classes": [cls]}))
    engine = tmp_path / "engine.toml"
    engine.write_text('schema = "llmload.engine/1"\n[params]\nmax_num_seqs = 4\n')
    assert predict_main(["--engine", str(engine), "--profile", str(profile), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err, err


def test_a_user_sends_its_next_turn_its_think_time_after_the_last_ended_and_starts_a_new_session_after_the_last():
    spec = ClassSpec("chat", 1, Fixed(100), Fixed(10), turns=Fixed(3), think=Duration("fixed", 2.0))
    sent = drive(preset_params("healthy"), Workload((spec,), (StepSpec(1, 30.0, 0.0),)))
    assert [s.turn for s in sent[:7]] == [1, 2, 3, 1, 2, 3, 1]
    assert [s.session for s in sent[:4]] == ["0.1", "0.1", "0.1", "0.2"]
    assert sent[1].t == pytest.approx(sent[0].times[-1] + 2.0) and sent[3].t == pytest.approx(sent[2].times[-1])
    assert [s.prompt for s in sent[:4]] == [100, 210, 320, 100] and sent[1].seq.cached_tokens == 96  # 6 full blocks


def test_the_longest_prompt_of_a_conversation_counts_its_history():
    spec = ClassSpec("chat", 1, Uniform(50, 100), Fixed(40), PrefixSpec(1, 300), turns=Uniform(2, 4))
    assert longest(spec, "input") == 300 + 4 * 100 + 3 * 40 and longest(spec, "output") == 40
    w = Workload((spec,), (StepSpec(2, 60.0, 0.0),))
    said = extrapolation(w, 1, {"max_input_tokens": 500, "max_output_tokens": 40})
    assert said == ["input up to ~820 tokens > the 500 the fit measured"]
