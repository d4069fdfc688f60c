from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from llmload.errors import ProfileError
from llmload.workload.datasets import DatasetCursor, estimate_tokens, load_dataset

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"


def test_estimate_tokens_is_chars_over_four():
    assert estimate_tokens("") == 1
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 4000) == 1000


def test_plain_prompts():
    ds = load_dataset(FIX / "prompts.jsonl")
    assert len(ds) == 5
    e = ds.entries
    assert e[0].prompt == "Explain how a prefix cache works in an inference server."
    assert e[0].input_tokens == math.ceil(len(e[0].prompt) / 4)
    assert e[0].output_tokens == 120
    assert (e[1].prompt, e[1].output_tokens) == ("Write a haiku about load testing.", 40)  # "text" + "max_tokens"
    assert (e[2].prompt, e[2].output_tokens) == ("List three causes of high time to first token.", None)  # bare string
    assert e[3].output_tokens is None
    assert ds.first_missing_output == "line 3"


def test_sharegpt_json_list():
    ds = load_dataset(FIX / "sharegpt.json", "sharegpt")
    assert [x.prompt for x in ds.entries] == [
        "How do I reverse a list in Python?",
        "Give me a synonym for fast.",
        "Translate 'good morning' into French.",
    ]
    reply = "Use slicing: my_list[::-1] returns a reversed copy, while my_list.reverse() reverses in place."
    assert ds.entries[0].output_tokens == math.ceil(len(reply) / 4)  # first assistant reply only
    assert ds.entries[1].output_tokens == 2  # "Quick." after a system turn
    assert ds.entries[2].output_tokens == 2  # messages/role/content: "Bonjour."
    assert ds.skipped == 1  # the conversation with no user turn
    assert ds.first_missing_output is None


def test_sharegpt_jsonl_auto_and_missing_reply():
    ds = load_dataset(FIX / "sharegpt.jsonl")
    assert len(ds) == 3
    assert ds.entries[2].prompt == "Is this record missing an answer?"
    assert ds.entries[2].output_tokens is None
    assert ds.first_missing_output == "line 3"


def test_loaded_once_per_process():
    assert load_dataset(FIX / "prompts.jsonl") is load_dataset(str(FIX / "prompts.jsonl"))


@pytest.mark.parametrize(
    ("name", "fmt", "message"),
    [
        ("missing.jsonl", "auto", "missing.jsonl': no such file"),
        ("empty.jsonl", "auto", "empty.jsonl': it has no records; give at least one prompt"),
        ("bad_json.jsonl", "auto", "bad_json.jsonl': line 3: not valid JSON"),
        ("bad_record.jsonl", "auto", 'bad_record.jsonl\': line 2: expected {"prompt": "..."}'),
        ("bad_conversation.jsonl", "auto", "bad_conversation.jsonl': line 1: 'conversations' must be a list"),
        ("not_list.json", "auto", "not_list.json': a .json dataset must be a list of records, got dict"),
        ("no_user_turn.json", "auto", "no_user_turn.json': none of its 1 conversations has a user turn"),
        ("prompts.jsonl", "sharegpt", 'prompts.jsonl\': line 1: expected {"conversations": [...]}'),
        ("sharegpt.jsonl", "prompts", "sharegpt.jsonl': line 1: a conversation record in a 'prompts' dataset"),
        ("prompts.jsonl", "csv", "unknown format 'csv'"),
    ],
)
def test_errors_name_file_and_line(name, fmt, message):
    with pytest.raises(ProfileError) as e:
        load_dataset(FIX / name, fmt)
    text = str(e.value)
    assert text.startswith("dataset '")
    assert message in text
    assert "\n" not in text


def test_bad_output_tokens(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"prompt": "a"}\n{"prompt": "b", "output_tokens": 0}\n')
    with pytest.raises(ProfileError, match=r"d.jsonl': line 2: output_tokens must be an int ≥ 1, got 0"):
        load_dataset(p)


def test_cursor_visits_every_entry_once_per_cycle(tmp_path):
    p = tmp_path / "many.jsonl"
    p.write_text("".join(f'{{"prompt": "p{i}"}}\n' for i in range(12)))
    ds = load_dataset(p)
    cur = DatasetCursor(ds, random.Random(1))
    first = [cur.next().prompt for _ in range(12)]
    second = [cur.next().prompt for _ in range(12)]
    assert sorted(first) == sorted(f"p{i}" for i in range(12))
    assert first == second
    assert first != [f"p{i}" for i in range(12)]  # not file order


def test_cursor_deterministic_and_per_rng(tmp_path):
    p = tmp_path / "many.jsonl"
    p.write_text("".join(f'"q{i}"\n' for i in range(50)))
    ds = load_dataset(p)

    def walk(seed):
        cur = DatasetCursor(ds, random.Random(seed))
        return [cur.next().prompt for _ in range(20)]

    assert walk(3) == walk(3)
    assert walk(3) != walk(4)


def test_cursor_single_entry(tmp_path):
    p = tmp_path / "one.jsonl"
    p.write_text('"only"\n')
    cur = DatasetCursor(load_dataset(p), random.Random(0))
    assert {cur.next().prompt for _ in range(3)} == {"only"}


def test_conversations_keep_their_later_turns_when_asked():
    plain = load_dataset(FIX / "multiturn.jsonl", "sharegpt")
    assert all(e.followups == () for e in plain.entries)
    ds = load_dataset(FIX / "multiturn.jsonl", "sharegpt", turns=True)
    trip, cache, fast = ds.entries
    assert [e.prompt for e in ds.entries] == [e.prompt for e in plain.entries]  # the first turn is unchanged
    assert [e.output_tokens for e in ds.entries] == [e.output_tokens for e in plain.entries]
    assert [(t.prompt, t.output_tokens) for t in trip.followups] == [
        ("Make day two cheaper.", estimate_tokens("Walk along the river and skip the museum tickets.")),
        ("And where should I eat?", estimate_tokens("Try a tasca near the market; lunch menus are cheap.")),
    ]
    assert trip.followups[0].input_tokens == estimate_tokens("Make day two cheaper.")
    # a second user message before the reply is skipped; a last unanswered one is not kept
    assert [(t.prompt, t.output_tokens) for t in cache.followups] == [
        ("Who uses it?", estimate_tokens("vLLM, SGLang and llama.cpp."))
    ]
    assert fast.followups == ()
    assert load_dataset(FIX / "multiturn.jsonl", "sharegpt", turns=True) is ds  # cached per (path, format, turns)
