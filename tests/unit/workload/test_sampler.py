from __future__ import annotations

import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from llmload.errors import ProfileError
from llmload.workload import RequestSample, WorkloadSampler, load_profile, profile_from_dict
from llmload.workload.mix import Mix
from llmload.workload.prompts import TAG_TOKENS

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"
DEFAULT = load_profile("default")


def take(sampler, n):
    return [sampler.next() for _ in range(n)]


def test_same_seed_and_user_replay_exactly():
    a = take(WorkloadSampler(DEFAULT, seed=11, user_index=3), 200)
    b = take(WorkloadSampler(DEFAULT, seed=11, user_index=3), 200)
    assert a == b


def test_different_users_and_seeds_differ():
    a = [s.prompt for s in take(WorkloadSampler(DEFAULT, seed=11, user_index=0), 50)]
    b = [s.prompt for s in take(WorkloadSampler(DEFAULT, seed=11, user_index=1), 50)]
    c = [s.prompt for s in take(WorkloadSampler(DEFAULT, seed=12, user_index=0), 50)]
    assert not set(a) & set(b)
    assert not set(a) & set(c)


def test_classes_follow_the_mix_at_the_user_offset():
    for user in range(4):
        s = WorkloadSampler(DEFAULT, seed=1, user_index=user)
        mix = Mix(DEFAULT.weights, offset=user)
        assert [x.class_name for x in take(s, 30)] == [DEFAULT.class_names[mix.next()] for _ in range(30)]


def test_ten_users_first_requests_are_343():
    first = Counter(WorkloadSampler(DEFAULT, seed=5, user_index=u).next().class_name for u in range(10))
    assert first == {"short": 3, "medium": 4, "long": 3}


def test_samples_match_the_class_lengths():
    want = {c.name: (c.input_tokens.mean, c.output_tokens.mean) for c in DEFAULT.classes}
    for x in take(WorkloadSampler(DEFAULT, seed=2, user_index=0), 30):
        assert isinstance(x, RequestSample)
        assert (x.input_tokens, x.max_tokens) == want[x.class_name]
        assert len(x.prompt.split(" ")) == x.input_tokens
        assert x.messages is None


def test_max_tokens_cap():
    xs = take(WorkloadSampler(DEFAULT, seed=2, user_index=0, max_tokens_cap=300), 30)
    assert {(x.class_name, x.max_tokens) for x in xs} == {("short", 200), ("medium", 300), ("long", 300)}
    with pytest.raises(ValueError, match="max_tokens_cap"):
        WorkloadSampler(DEFAULT, seed=2, user_index=0, max_tokens_cap=0)


def test_prompt_starts_unique_across_1000_requests_and_users():
    starts = [tuple(x.prompt.split()[:TAG_TOKENS]) for x in take(WorkloadSampler(DEFAULT, seed=3, user_index=0), 1000)]
    starts += [
        tuple(WorkloadSampler(DEFAULT, seed=3, user_index=u).next().prompt.split()[:TAG_TOKENS]) for u in range(1, 500)
    ]
    assert len(set(starts)) == len(starts)


def test_shared_prefix_same_for_all_users_and_instances():
    profile = profile_from_dict(
        {
            "classes": [
                {"name": "sys", "weight": 1, "input_tokens": 144, "output_tokens": 10, "prefix": {"tokens": 256}},
                {"name": "free", "weight": 1, "input_tokens": 400, "output_tokens": 10},
            ]
        }
    )
    prompts = [
        x.prompt
        for u in range(8)
        for x in take(WorkloadSampler(profile, seed=9, user_index=u), 6)
        if x.class_name == "sys"
    ]
    heads = {" ".join(p.split()[:256]) for p in prompts}
    rests = {" ".join(p.split()[256 : 256 + TAG_TOKENS]) for p in prompts}
    assert len(prompts) == 24
    assert len(heads) == 1
    assert len(rests) == len(prompts)
    other_seed = WorkloadSampler(profile, seed=10, user_index=0)
    assert {" ".join(x.prompt.split()[:256]) for x in take(other_seed, 4) if x.class_name == "sys"} != heads


def test_sharegpt_dataset_class(tmp_path):
    shutil.copy(FIX / "sharegpt.json", tmp_path / "sg.json")
    (tmp_path / "p.toml").write_text(
        '[[classes]]\nname = "chat"\nweight = 1\noutput_tokens = "dataset"\n'
        'prompt = {source = "dataset", path = "sg.json", format = "sharegpt"}\n'
    )
    profile = load_profile(tmp_path / "p.toml")
    xs = take(WorkloadSampler(profile, seed=1, user_index=0, max_tokens_cap=20), 6)
    expected = {
        "How do I reverse a list in Python?": (9, 20),  # reply estimate 24 tokens, capped
        "Give me a synonym for fast.": (7, 2),
        "Translate 'good morning' into French.": (10, 2),
    }
    assert {x.prompt: (x.input_tokens, x.max_tokens) for x in xs} == expected
    assert [x.prompt for x in xs[:3]] == [x.prompt for x in xs[3:]]  # cycles
    assert take(WorkloadSampler(profile, seed=1, user_index=0, max_tokens_cap=20), 6) == xs


def test_dataset_without_output_lengths_needs_profile_output(tmp_path):
    profile = profile_from_dict(
        {
            "classes": [
                {
                    "name": "p",
                    "weight": 1,
                    "output_tokens": "dataset",
                    "prompt": {"source": "dataset", "path": str(FIX / "prompts.jsonl")},
                }
            ]
        }
    )
    with pytest.raises(ProfileError, match=r"prompts\.jsonl': line 3 has no output length, but class 'p'"):
        WorkloadSampler(profile, seed=1, user_index=0)
    fixed = profile_from_dict(
        {
            "classes": [
                {
                    "name": "p",
                    "weight": 1,
                    "output_tokens": 77,
                    "prompt": {"source": "dataset", "path": str(FIX / "prompts.jsonl")},
                }
            ]
        }
    )
    assert {x.max_tokens for x in take(WorkloadSampler(fixed, seed=1, user_index=0), 10)} == {77}


def test_global_rng_untouched():
    random.seed(123)
    state = random.getstate()
    take(WorkloadSampler(load_profile("quadrants"), seed=4, user_index=2), 100)
    assert random.getstate() == state


def test_sample_draws_the_given_class_and_leaves_the_mix_alone():
    profile = load_profile("default")
    a = WorkloadSampler(profile, seed=4, user_index=2)
    b = WorkloadSampler(profile, seed=4, user_index=2)
    names = [c.name for c in profile.classes]
    picked = [a.sample(i) for i in (2, 0, 2, 1)]
    assert [s.class_name for s in picked] == [names[2], names[0], names[2], names[1]]
    # The open loop's draws do not step the user's own mix: next() continues as if none happened.
    assert [a.next().class_name for _ in range(10)] == [b.next().class_name for _ in range(10)]
