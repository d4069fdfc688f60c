"""Conversations and shared prefixes through real llmload runs against the simulator's prefix cache.

``python -m llmload run`` (the real CLI, closed-loop users driving sessions) against
``python -m llmload.sim`` (engine model, ``--prefill-tps 4000`` so that prefill time shows
in TTFT), once with the simulator's prefix cache on and once with ``--no-prefix-caching``:

* a 4-turn conversation class: turn k's prompt is turn k-1's plus its reply and a new
  message (the mean input tokens of ``by_turn`` grow by exactly that), and TTFT of the
  later turns stays near turn 1's with the cache on while it grows with the context off;
* a 1000-token shared prefix over 1100-token prompts: ``prefix_cache_hit_ratio`` ≥ 0.85
  on, 0 off, where the diagnosis then reports ``prefix_cache_cold`` (with the engine's own
  counters agreeing: it looked nothing up, high confidence).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

# The simulator at 1/8 of real time and 4 s runs: the requests of 8 s at --time-scale 0.25 (measured there:
# 6-10 finished requests per turn, ≥ 3 asserted; 170 and 68 of the shared-prefix class, ≥ 20 asserted), and
# TTFTs (~22 ms at turn 1) still far above the client's own few-ms noise.
SIM = ("--preset", "healthy", "--prefill-tps", "4000", "--time-scale", "0.125")
RUN_S = "4s"
IN, OUT = 400, 40


def write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "profile.toml"
    path.write_text(body)
    return str(path)


def run(sim, tmp_path: Path, profile: str, cache: bool, *extra: str) -> dict:
    url = sim(*SIM, "--prefix-caching" if cache else "--no-prefix-caching")
    out = tmp_path / ("on" if cache else "off")
    out.mkdir()
    args = ["--host", url, "--profile", profile, "--headless", "-u", "2", "-r", "2", "-t", RUN_S, "--seed", "3",
            "--no-run-dir", *[a.replace("{url}", url) for a in extra]]  # fmt: skip
    code, output, summary = run_cli(args, out, timeout=90)
    assert code == 0 and summary is not None, output[-2000:]
    return summary


def test_conversation_turns_grow_and_the_cache_keeps_their_ttft_flat(sim, tmp_path):
    profile = write(tmp_path, f'[[classes]]\nname = "chat"\nweight = 1\nturns = 4\ninput_tokens = {IN}\noutput_tokens = {OUT}\n')
    turns = {}
    for cache in (True, False):
        s = run(sim, tmp_path, profile, cache)
        chat = s["classes"]["chat"]
        by_turn = chat["by_turn"]
        assert list(by_turn) == ["1", "2", "3", "4"]
        assert all(by_turn[k]["ok"] >= 3 for k in by_turn), by_turn
        # turn k re-sends every earlier message and reply: + (reply + new message) per turn
        assert [by_turn[k]["input_tokens_mean"] for k in by_turn] == [IN + (k - 1) * (IN + OUT) for k in (1, 2, 3, 4)]
        assert sum(t["requests"] for t in by_turn.values()) == chat["requests"]
        turns[cache] = {k: t["ttft_ms"]["p50"] for k, t in by_turn.items()}
        if cache:
            # the earlier turns' prompt blocks are found: turn k's cached tokens ~ turn k-1's prompt
            for k in (2, 3, 4):
                t = by_turn[str(k)]
                prev = IN + (k - 2) * (IN + OUT)
                assert prev - 16 <= t["cached_prompt_tokens"] / t["ok"] <= prev, (k, t)
        else:
            assert chat["cached_prompt_tokens"] == 0 and chat["prefix_cache_hit_ratio"] == 0.0
    on, off = turns[True], turns[False]
    assert on["4"] < 1.5 * on["1"], on  # only the new message is prefilled
    assert off["4"] > 2.5 * off["1"], off  # the whole context is prefilled again
    assert on["4"] < 0.6 * off["4"], (on, off)


def test_a_shared_prefix_hits_the_cache_on_and_is_diagnosed_cold_off(sim, tmp_path):
    profile = write(
        tmp_path,
        '[[classes]]\nname = "rag"\nweight = 1\ninput_tokens = 100\noutput_tokens = 8\nprefix = {groups = 1, tokens = 1000}\n',
    )
    for cache in (True, False):
        # polled every 0.5 s: the engine's prefix-cache counters move between polls of a 4 s run
        s = run(sim, tmp_path, profile, cache, "--engine-metrics", "{url}/metrics", "--collect-interval", "0.5s")
        rag = s["classes"]["rag"]
        assert rag["ok"] >= 20 and rag["input_tokens"] == 1100 * rag["ok"]
        assert "by_turn" not in rag  # a single-request class
        cold = [f for f in s["findings"] if f["id"] == "prefix_cache_cold"]
        if cache:
            assert rag["prefix_cache_hit_ratio"] >= 0.85 and s["overall"]["prefix_cache_hit_ratio"] >= 0.85
            assert s["server"]["signals"]["prefix_cache_hit_rate"]["value"] >= 0.85
            assert cold == []
        else:
            assert rag["prefix_cache_hit_ratio"] == 0.0 and rag["cached_prompt_tokens"] == 0
            (f,) = cold
            assert f["confidence"] == "high" and f["evidence"]["classes"] == "rag"


def test_sharegpt_conversations_replay_turn_by_turn(sim, tmp_path):
    dataset = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "multiturn.jsonl"
    profile = write(tmp_path, f'[[classes]]\nname = "sg"\nweight = 1\nturns = "dataset"\noutput_tokens = 16\n'
                              f'prompt = {{source = "dataset", path = "{dataset}", format = "sharegpt"}}\n')  # fmt: skip
    url = sim(*SIM)
    code, output, s = run_cli(["--host", url, "--profile", profile, "--headless", "-u", "2", "-r", "2", "-t", "4s",
                               "--seed", "3", "--no-run-dir"], tmp_path, timeout=60)  # fmt: skip
    assert code == 0 and s is not None, output[-2000:]
    by_turn = s["classes"]["sg"]["by_turn"]
    assert list(by_turn) == ["1", "2", "3"]  # the fixture's longest conversation has 3 user turns
    reqs = [by_turn[k]["requests"] for k in by_turn]
    assert reqs[0] > reqs[1] > reqs[2] > 0  # conversations of 1, 2 and 3 user turns
    means = [by_turn[k]["input_tokens_mean"] for k in by_turn]
    assert means[0] < means[1] < means[2]
    assert "conversation turns of sg" in output
