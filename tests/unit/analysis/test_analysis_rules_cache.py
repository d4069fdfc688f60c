"""The prefix-cache rule: fires only where the workload shares prefixes and the cache does not hit."""

from __future__ import annotations

from dataclasses import replace

from llmload.analysis.analyze import analyze
from llmload.analysis.rules_cache import HIT_LOW
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.results import build_result

MS = 1_000_000
RAG = {"name": "rag", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic", "prefix": {"groups": 1, "tokens": 1000}}
CHAT = {"name": "chat", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic", "turns": 4}
PLAIN = {"name": "q", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prompt": "synthetic"}


def result(classes, cached_share: float | None, engine: float | None = None, turns: bool = False):
    r = Recorder()
    for c in classes:
        for i in range(8):
            x = RequestRecord(c["name"], input_tokens=1100, max_tokens=4)
            x.start_ns, x.chunk_ns = 0, [(50 + i) * MS + k * MS for k in range(4)]
            x.end_ns = x.chunk_ns[-1] + MS
            settle_token_counts(x, None, None)
            x.outcome = "ok"
            x.turn = 1 + i % 4 if "turns" in c else 0
            if cached_share is not None:
                x.cached_prompt_tokens = 0 if x.turn == 1 else int(1100 * cached_share)
            r.add(x)
    server = {"signals": {"prefix_cache_hit_rate": {"unit": "ratio", "value": engine}}} if engine is not None else None
    res = build_result(r.snapshot(), duration_s=2.0, users_max=2, weights={c["name"]: 1 for c in classes},
                       profile={"name": "p", "classes": classes})  # fmt: skip
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
    (f,) = cache_findings(result([CHAT], cached_share=HIT_LOW / 2))
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
