"""The simulator's prefix cache seen from the wire: shared prefixes, conversations and a trace hit it.

A plain HTTP client (urllib) sends requests built by the workload (prefix groups, a
conversation session fed with the replies received, Mooncake trace prompts) through the
pure adapters to ``python -m llmload.sim`` (engine model, fast steps), reads
``usage.prompt_tokens_details.cached_tokens`` from each stream and checks that
``vllm:prefix_cache_queries_total``/``hits_total`` on ``/metrics`` moved by the same amounts.
The load user drives the same through real runs in test_conversations.py.
"""

from __future__ import annotations

import json
import random
import re
import urllib.request
from pathlib import Path

import pytest

from llmload.adapters import AdapterConfig, OpenAIChatAdapter, OpenAICompletionsAdapter
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.traces import TracePrompts, load_trace

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traces" / "mooncake-example.jsonl"
FAST = ("--preset", "healthy", "--time-scale", "0.02")
CONFIG = AdapterConfig(model="llmload-sim")


def send(url: str, spec) -> tuple[str, dict]:
    """POST a streaming request; (the reply text, the usage object)."""
    req = urllib.request.Request(url + spec.path, data=spec.body, headers=spec.headers, method=spec.method)
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read().decode()
    text, usage = [], None
    for line in body.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            usage = event["usage"]
        for choice in event["choices"]:
            text.append(choice.get("text") or (choice.get("delta") or {}).get("content") or "")
    assert usage is not None
    return "".join(text), usage


def counters(url: str) -> tuple[float, float]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        page = r.read().decode()

    def value(name: str) -> float:
        (v,) = re.findall(rf"^{re.escape(name)}\{{[^}}]*\}} (\S+)$", page, re.M)
        return float(v)

    return value("vllm:prefix_cache_queries_total"), value("vllm:prefix_cache_hits_total")


def prefix_profile():
    return profile_from_dict(
        {
            "classes": [
                {"name": "rag", "weight": 1, "input_tokens": 100, "output_tokens": 4, "prefix": {"tokens": 1000}},
            ]
        }
    )


def test_a_shared_prefix_is_served_from_the_cache_and_the_vllm_counters_move(sim):
    url = sim(*FAST)
    adapter = OpenAIChatAdapter(CONFIG)
    usages = []
    for user in range(2):
        sampler = WorkloadSampler(prefix_profile(), seed=1, user_index=user)
        usages += [send(url, adapter.build_request(sampler.next()))[1] for _ in range(10)]
    cached = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    prompt = [u["prompt_tokens"] for u in usages]
    assert prompt == [1100] * 20
    assert cached[0] == 0 and all(c >= 992 for c in cached[1:])  # 62 full blocks of the 1000-token prefix
    assert sum(cached) / sum(prompt) >= 0.85
    queries, hits = counters(url)
    assert (queries, hits) == (sum(prompt), sum(cached))


def test_without_the_cache_nothing_is_cached(sim):
    url = sim(*FAST, "--no-prefix-caching")
    adapter = OpenAIChatAdapter(CONFIG)
    sampler = WorkloadSampler(prefix_profile(), seed=1, user_index=0)
    usages = [send(url, adapter.build_request(sampler.next()))[1] for _ in range(5)]
    assert [u["prompt_tokens_details"]["cached_tokens"] for u in usages] == [0] * 5
    assert counters(url) == (0.0, 0.0)


@pytest.mark.parametrize("adapter_class", [OpenAIChatAdapter, OpenAICompletionsAdapter])
def test_each_turn_of_a_conversation_hits_the_earlier_turns(sim, adapter_class):
    url = sim(*FAST)
    adapter = adapter_class(CONFIG)
    profile = profile_from_dict(
        {"classes": [{"name": "chat", "weight": 1, "turns": 4, "input_tokens": 120, "output_tokens": 30}]}
    )
    session = WorkloadSampler(profile, seed=2, user_index=0).start_session()
    reply, reply_tokens, usages = None, None, []
    while not session.done:
        sample = session.next_turn(reply, reply_tokens)
        reply, usage = send(url, adapter.build_request(sample))
        reply_tokens = usage["completion_tokens"]
        assert usage["prompt_tokens"] == sample.input_tokens  # the sim counts words, as the workload does
        usages.append(usage)
    prompt = [u["prompt_tokens"] for u in usages]
    cached = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    assert [b - a for a, b in zip(prompt, prompt[1:], strict=False)] == [30 + 120] * 3  # reply + new message
    assert cached[0] == 0
    for k in range(1, 4):  # turn k+1 finds turn k's prompt blocks (not its reply: output is not cached)
        assert prompt[k - 1] - 16 < cached[k] <= prompt[k - 1]


def test_trace_entries_with_equal_hash_ids_hit_the_cache(sim):
    url = sim(*FAST)
    adapter = OpenAIChatAdapter(CONFIG)
    entries = load_trace(EXAMPLE, limit=25).entries
    prompts, rng = TracePrompts(seed=0), random.Random(0)
    seen: set[int] = set()
    for e in entries:
        _, usage = send(url, adapter.build_request(prompts.sample(e, rng)))
        assert usage["prompt_tokens"] == e.input_length
        shared = 0
        for h in e.hash_ids:  # leading blocks some earlier entry already sent
            if h not in seen:
                break
            shared += 1
        cached = usage["prompt_tokens_details"]["cached_tokens"]
        if shared:
            assert cached >= min(shared * 512, e.input_length - 1) - 16  # to the last full 16-token block
        else:
            assert cached == 0
        seen.update(e.hash_ids)
    queries, hits = counters(url)
    assert queries == sum(e.input_length for e in entries) and hits > 0
