from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import pytest

from llmload.workload.prompts import CORPUS_WORDS, TAG_TOKENS, WORDS, SharedPrefix, seeded_words, synthetic_prompt

VOCAB = frozenset(WORDS)


def test_vocabulary_shape():
    assert len(WORDS) == 1024 == len(VOCAB)
    assert list(WORDS) == sorted(WORDS)
    assert all(re.fullmatch(r"[a-z]{3,7}", w) for w in WORDS)


@pytest.mark.parametrize("n", [1, 2, TAG_TOKENS, TAG_TOKENS + 1, 50, 500, 2000, 8192, CORPUS_WORDS + 17])
def test_word_count_equals_target(n):
    p = synthetic_prompt(random.Random(n), n)
    words = p.split(" ")
    assert len(words) == n
    assert set(words) <= VOCAB  # single spaces only, no empty words, nothing outside the vocabulary
    assert p == p.strip()


def test_starts_unique_across_1000_requests():
    rng = random.Random(42)
    starts = {tuple(synthetic_prompt(rng, 50).split()[:TAG_TOKENS]) for _ in range(1000)}
    assert len(starts) == 1000


def test_starts_unique_across_users():
    starts = {tuple(synthetic_prompt(random.Random(user), 20).split()[:TAG_TOKENS]) for user in range(1000)}
    assert len(starts) == 1000


def test_deterministic_given_seed():
    a = [synthetic_prompt(random.Random(5), n) for n in (10, 300, 2000)]
    b = [synthetic_prompt(random.Random(5), n) for n in (10, 300, 2000)]
    c = [synthetic_prompt(random.Random(6), n) for n in (10, 300, 2000)]
    assert a == b
    assert a != c


def test_shared_prefix_identical_across_requests_and_users_then_unique():
    prefix = SharedPrefix.build(seed=9, key="long", tokens=100)
    prompts = [synthetic_prompt(random.Random(user), 300, prefix) for user in range(20)]
    rng = random.Random(99)
    prompts += [synthetic_prompt(rng, 300, prefix) for _ in range(20)]
    heads = {" ".join(p.split()[:100]) for p in prompts}
    assert heads == {prefix.text.strip()}
    tags = {tuple(p.split()[100 : 100 + TAG_TOKENS]) for p in prompts}
    assert len(tags) == len(prompts)
    assert all(len(p.split()) == 100 + 300 for p in prompts)  # the prefix, then the prompt's own 300


def test_shared_prefix_depends_on_seed_and_key_only():
    a = SharedPrefix.build(1, "long", 64)
    assert a == SharedPrefix.build(1, "long", 64)
    assert a.text != SharedPrefix.build(2, "long", 64).text
    assert a.text != SharedPrefix.build(1, "short", 64).text
    assert len(a.text.split()) == 64


def test_shared_prefix_same_in_another_process():
    code = "from llmload.workload.prompts import SharedPrefix; print(SharedPrefix.build(1234, 'medium', 40).text)"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outs == {SharedPrefix.build(1234, "medium", 40).text.strip()}


def test_a_short_prompt_after_a_prefix_still_starts_unique():
    prefix = SharedPrefix.build(3, "c", 50)
    a, b = (synthetic_prompt(random.Random(seed), 2, prefix).split() for seed in (0, 1))
    assert a[:50] == b[:50] == prefix.text.split()
    assert len(a) == len(b) == 52 and a[50:] != b[50:]


def test_seeded_words_depend_on_the_key_only():
    assert seeded_words("k", 30) == seeded_words("k", 30) != seeded_words("j", 30)
    assert len(seeded_words("k", 30).split()) == 30 and seeded_words("k", 30).startswith(" ")
    assert SharedPrefix.build(1, "x", 30).text == seeded_words("llmload-shared-prefix:1:x", 30)


def test_budget_smaller_than_tag():
    p = synthetic_prompt(random.Random(0), 2)
    assert len(p.split()) == 2


def test_zero_tokens_rejected():
    with pytest.raises(ValueError, match="at least one token"):
        synthetic_prompt(random.Random(0), 0)
