"""The prefix-cache rule: fires only where the workload shares prefixes and the cache does not hit."""

from __future__ import annotations

from dataclasses import replace

from llmload.analysis.analyze import analyze
from llmload.analysis.rules_cache import SERVED_LOW
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.results import build_result
from llmload.results.setup import RunSetup

MS = 1_000_000
RAG = {"name": "rag", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic", "prefix": {"groups": 1, "tokens": 1000}}
CHAT = {"name": "chat", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic", "turns": 4}
PLAIN = {"name": "q", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic"}


def result(classes, cached_share: float | None, engine: float | None = None, n: int = 8, users: int = 2,
           prompt: int = 1100, engines: tuple[str, ...] = ()):  # fmt: skip
    r = Recorder()
    for c in classes:
        for i in range(n):
            x = RequestRecord(c["name"], input_tokens=prompt, max_tokens=4)
            x.start_ns, x.chunk_ns = 0, [(50 + i) * MS + k * MS for k in range(4)]
            x.end_ns = x.chunk_ns[-1] + MS
            settle_token_counts(x, None, None)
            x.outcome = "ok"
            x.turn = 1 + i % 4 if "turns" in c else 0
            if cached_share is not None:
                x.cached_prompt_tokens = 0 if x.turn == 1 else int(prompt * cached_share)
            r.add(x)
    server = {"signals": {"prefix_cache_hit_rate": {"unit": "ratio", "value": engine}}} if engine is not None else None
    if engines:
        server = {**(server or {"signals": {}}), "engines": list(engines)}
    res = build_result(r.snapshot(), duration_s=2.0, users_max=users, weights={c["name"]: 1 for c in classes},
                       setup=RunSetup.from_summary({}, {"name": "p", "classes": classes}))  # fmt: skip
    return replace(res, server=server)


def cache_findings(res):
    return [f for f in analyze(res).findings if f.id == "prefix_cache_cold"]


def test_shared_prefixes_that_never_hit_are_found_with_high_confidence_when_the_engine_agrees():
    (f,) = cache_findings(result([RAG, PLAIN], cached_share=0.0, engine=0.01))
    assert f.confidence == "high" and f.evidence["classes"] == "rag" and f.evidence["client_hit_ratio"] == 0.0
    assert "rag (prefix groups): 0.0 %" in f.evidence_text[0] and f.explains == ("ttft",)
    (m,) = cache_findings(result([RAG], cached_share=0.0))
    assert m.confidence == "medium"  # the client's figure alone


def test_conversations_are_judged_on_their_later_turns():
    assert cache_findings(result([CHAT], cached_share=0.6)) == []  # turn 1 has nothing to reuse: not held against it
    (f,) = cache_findings(result([CHAT], cached_share=SERVED_LOW / 2))
    assert f.evidence["classes"] == "chat" and "conversation" in f.evidence_text[0]


def test_quiet_when_the_cache_hits_nothing_is_shared_or_nothing_says():
    assert cache_findings(result([RAG], cached_share=0.9, engine=0.9)) == []
    assert cache_findings(result([PLAIN], cached_share=0.0, engine=0.0)) == []  # unique prompts: 0 is right
    assert cache_findings(result([RAG], cached_share=None)) == []  # the server never stated cached tokens
    (f,) = cache_findings(result([RAG], cached_share=None, engine=0.02))  # the engine's counters say it
    assert f.confidence == "medium" and "engine prefix-cache hit rate over the run: 2.0 %" in f.evidence_text


def test_an_engine_that_looked_nothing_up_has_its_cache_off():
    res = result([RAG], cached_share=0.0)
    signals = {"prompt_tokens": {"unit": "tokens", "increase": 8800.0}, "prefix_cache_queries": {"unit": "tokens", "increase": 0.0}}
    (f,) = cache_findings(replace(res, server={"signals": signals}))
    assert f.confidence == "high" and f.evidence["engine_hit_rate"] == 0.0
    assert "the engine looked up none of its 8,800 prompt tokens in a prefix cache: caching is off" in f.evidence_text


def test_a_small_prefix_is_judged_against_its_share_of_the_prompt():
    """40 shared words before 600 unique ones: a cache that serves the whole prefix every time hits 5.8 %.

    Seen against llama.cpp: 10 of 18 requests reused the 65-token prefix of their ~1045-token
    prompts (3.6 % in all; the other 8 went to empty slots first), and the rule said the cache
    did not hit, with high confidence.
    """
    small = {**RAG, "input_tokens": 600, "prefix": {"groups": 1, "tokens": 40, "popularity": "uniform"}}
    assert cache_findings(result([small], cached_share=37 / 640, engine=0.042, prompt=640)) == []
    (f,) = cache_findings(result([small], cached_share=0.0, engine=0.001, prompt=640))  # a dead cache still shows
    assert f.confidence == "high" and "; a working cache would serve ~3.9 % (the shared prefix" in f.evidence_text[0]
    assert f.evidence["reusable"] == 40 / 640 * 5 / 8  # 8 requests, 1 group, 2 users: 5 could find it cached


def test_requests_sent_before_any_prefix_was_cached_are_not_held_against_the_cache():
    """4 requests of 2 prefix groups on 4 users all start before the first prefill ends: none can hit.

    Seen against llama.cpp (88 M model, 4 users, 5 s): 4 requests, 0 cached, 'the prefix cache does
    not hit' with high confidence; the same profile on the tiny model (116 requests) hit 86 %.
    """
    two = {**RAG, "input_tokens": 30, "prefix": {"groups": 2, "tokens": 300, "popularity": "uniform"}}
    assert cache_findings(result([two], cached_share=0.0, engine=0.0, n=4, users=4, prompt=330)) == []
    (f,) = cache_findings(result([two], cached_share=0.0, engine=0.0, n=40, users=4, prompt=330))
    assert f.confidence == "high" and f.evidence["classes"] == "rag"


def test_the_change_names_llamacpps_own_switches():
    (f,) = cache_findings(result([RAG], cached_share=0.0, engine=0.0, engines=("llamacpp",)))
    assert "--cache-ram" in f.change and "--slot-prompt-similarity" in f.change and "--no-cache-prompt" in f.change
    assert "it does not turn caching on" in f.change  # --cache-reuse is no switch for caching
    (g,) = cache_findings(result([RAG], cached_share=0.0, engine=0.0, engines=("vllm",)))
    assert "--enable-prefix-caching" in g.change and "--cache-reuse" not in g.change


def conversation(cached: tuple[float, ...], prompts=(74, 170, 266, 360), sessions: int = 5):
    """``sessions`` 4-turn conversations: turn k's prompt ``prompts[k-1]`` tokens, ``cached[k-1]`` of it from the cache."""
    r = Recorder()
    for _ in range(sessions):
        for turn, (prompt, share) in enumerate(zip(prompts, cached, strict=True), start=1):
            x = RequestRecord("chat", input_tokens=prompt, max_tokens=4)
            x.start_ns, x.chunk_ns = 0, [(50 + k) * MS for k in range(4)]
            x.end_ns = x.chunk_ns[-1] + MS
            settle_token_counts(x, None, None)
            x.outcome, x.turn, x.cached_prompt_tokens = "ok", turn, round(prompt * share)
            r.add(x)
    return build_result(r.snapshot(), duration_s=4.0, users_max=1, weights={"chat": 1},
                        setup=RunSetup.from_summary({}, {"name": "p", "classes": [CHAT]}))


def test_a_conversation_is_judged_against_what_its_turns_repeat():
    """llama.cpp, tiny model, 1 user, 4-turn conversations (40 words in, 16 out): by_turn as measured."""
    assert cache_findings(conversation((0.024, 0.49, 0.68, 0.77))) == []  # the default server: slot reuse per conversation
    (f,) = cache_findings(conversation((0.024, 0.011, 0.007, 0.004)))  # -sps 0 --cache-ram 0: each turn a fresh slot
    assert f.evidence["reusable"] == (74 * 5 + 170 * 5 + 266 * 5) / ((170 + 266 + 360) * 5)  # 0.64: the turn before
    assert "chat (conversation, turns 2+): 0.6 % of their prompt tokens" in f.evidence_text[0]
    assert "a working cache would serve ≥ 64.1 % (the turn before, re-sent)" in f.evidence_text[0]


def test_a_cache_that_holds_fewer_prefixes_than_the_workload_has_is_found():
    """16 prefix groups over llama.cpp's 2 slots without --cache-ram: 42 requests, 6.9 % hit of ~52 % reusable."""
    many = {**RAG, "input_tokens": 30, "prefix": {"groups": 16, "tokens": 300, "popularity": "uniform"}}
    (f,) = cache_findings(result([many], cached_share=0.069, engine=0.068, n=42, users=2, prompt=540,
                                 engines=("llamacpp",)))  # fmt: skip
    assert f.confidence == "high" and round(f.evidence["reusable"], 3) == round(300 / 330 * 24 / 42, 3)
    assert "--parallel" in f.change
