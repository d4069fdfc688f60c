"""Prefix groups: parsing, popularity (uniform, Zipf), fixed texts shared by every user and process."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

import pytest

from llmload.errors import ProfileError
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.prefixes import PrefixGroups, PrefixSpec, parse_prefix
from llmload.workload.prompts import TAG_TOKENS, SharedPrefix


def test_parse_defaults_and_round_trip():
    assert parse_prefix({"tokens": 100}, "w") == PrefixSpec(1, 100, None)
    spec = parse_prefix({"groups": 8, "tokens": 1000, "popularity": "zipf:1.1"}, "w")
    assert spec == PrefixSpec(8, 1000, 1.1) and spec.popularity == "zipf:1.1"
    assert parse_prefix(spec.to_dict(), "w") == spec
    assert parse_prefix({"tokens": 5, "popularity": "uniform"}, "w").zipf_s is None
    with pytest.raises(ProfileError, match=r"^where\.popularity: expected"):
        parse_prefix({"tokens": 5, "popularity": "zipf:inf"}, "where")


def test_one_group_draws_nothing_from_the_rng():
    groups = PrefixGroups(PrefixSpec(1, 10), seed=0, key="c")
    rng = random.Random(3)
    state = rng.getstate()
    assert {groups.draw(rng) for _ in range(100)} == {0}
    assert rng.getstate() == state
    assert groups.get(0) == SharedPrefix.build(0, "c", 10)  # group 0 keeps the class name as its key


def test_uniform_popularity_spreads_evenly():
    groups = PrefixGroups(PrefixSpec(4, 10), seed=0, key="c")
    rng = random.Random(1)
    counts = Counter(groups.draw(rng) for _ in range(40_000))
    assert set(counts) == {0, 1, 2, 3}
    assert all(abs(n / 40_000 - 0.25) < 0.01 for n in counts.values())


def test_zipf_popularity_follows_one_over_k_to_the_s():
    n, s = 8, 1.1
    groups = PrefixGroups(PrefixSpec(n, 10, s), seed=0, key="c")
    rng = random.Random(2)
    draws = 80_000
    counts = Counter(groups.draw(rng) for _ in range(draws))
    h = sum(k**-s for k in range(1, n + 1))
    for k in range(1, n + 1):
        assert counts[k - 1] / draws == pytest.approx(k**-s / h, abs=0.006)
    assert counts[0] / draws == pytest.approx(0.398, abs=0.006)  # the figure in the module docstring


def test_group_texts_differ_by_group_and_are_the_same_in_another_process():
    groups = PrefixGroups(PrefixSpec(3, 20), seed=7, key="rag")
    texts = [groups.get(g).text for g in range(3)]
    assert len(set(texts)) == 3 and all(len(t.split()) == 20 for t in texts)
    code = (
        "from llmload.workload.prefixes import PrefixGroups, PrefixSpec;"
        "print(PrefixGroups(PrefixSpec(3, 20), seed=7, key='rag').get(2).text)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == texts[2].strip()


def test_every_request_opens_with_its_group_then_is_unique():
    profile = profile_from_dict(
        {
            "classes": [
                {
                    "name": "rag",
                    "weight": 1,
                    "input_tokens": 100,
                    "output_tokens": 5,
                    "prefix": {"groups": 5, "tokens": 1000, "popularity": "zipf:1.1"},
                }
            ]
        }
    )
    groups = PrefixGroups(PrefixSpec(5, 1000, 1.1), seed=3, key="rag")
    heads = {tuple(groups.get(g).text.split()): g for g in range(5)}
    used = Counter()
    tags = set()
    for user in range(10):
        sampler = WorkloadSampler(profile, seed=3, user_index=user)
        for _ in range(40):
            x = sampler.next()
            words = x.prompt.split()
            assert len(words) == x.input_tokens == 1100
            used[heads[tuple(words[:1000])]] += 1
            tags.add(tuple(words[1000 : 1000 + TAG_TOKENS]))
    assert len(tags) == 400  # the rest is unique
    assert set(used) == set(range(5)) and used[0] == max(used.values())
