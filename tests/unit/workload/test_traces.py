"""Mooncake-format traces: validation, prompts whose equal block ids are identical, the generator."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from llmload.errors import ProfileError
from llmload.workload.prompts import TAG_TOKENS
from llmload.workload.traces import (
    BLOCK_TOKENS,
    TraceEntry,
    TracePrompts,
    generate_trace,
    load_trace,
    trace_lines,
)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "traces" / "mooncake-example.jsonl"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    return path


def test_the_shipped_example_is_what_the_generator_writes():
    trace = load_trace(EXAMPLE)
    assert len(trace) == 200
    assert EXAMPLE.read_bytes() == trace_lines(generate_trace(200, 0))  # regenerate: llmload trace generate -o examples/traces/mooncake-example.jsonl
    times = [e.timestamp_ms for e in trace.entries]
    assert times == sorted(times) and times[0] == 0
    assert 0.3 < trace.block_reuse() < 0.8


def test_reads_floats_ignores_other_keys_and_stops_at_the_limit(tmp_path):
    path = write(
        tmp_path,
        '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2], "session": "a"}\n'
        "\n"
        '{"timestamp": 12.5, "input_length": 100, "output_length": 7}\n'
        '{"timestamp": 30, "input_length": 3, "output_length": 1, "hash_ids": [9]}\n',
    )
    trace = load_trace(path)
    assert trace.entries == (
        TraceEntry(0.0, 600, 5, (1, 2)),
        TraceEntry(12.5, 100, 7, ()),
        TraceEntry(30.0, 3, 1, (9,)),
    )
    assert trace.duration_ms == 30.0
    assert load_trace(path, limit=2).entries == trace.entries[:2]
    assert (
        trace_lines(list(trace.entries)).splitlines()[1] == b'{"timestamp":12.5,"input_length":100,"output_length":7}'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no entries; write one JSON object per line"),
        ("{oops\n", "line 1: not valid JSON"),
        ("[1, 2]\n", "line 1: expected a JSON object with timestamp"),
        ('{"timestamp": 0, "input_length": 5}\n', "line 1: missing 'output_length'"),
        ('{"timestamp": -1, "input_length": 5, "output_length": 1}\n', "line 1: timestamp must be a number of ms"),
        ('{"timestamp": "0", "input_length": 5, "output_length": 1}\n', "line 1: timestamp must be"),
        ('{"timestamp": 0, "input_length": 0, "output_length": 1}\n', "line 1: input_length must be an int ≥ 1"),
        ('{"timestamp": 0, "input_length": 5, "output_length": 2.5}\n', "line 1: output_length must be an int ≥ 1"),
        ('{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": 3}\n', "line 1: hash_ids must be a list"),
        (
            '{"timestamp": 0, "input_length": 1000000000, "output_length": 1}\n',
            "line 1: input_length 1000000000 is more than any model's context (10,000,000 tokens at most)",
        ),
        (
            '{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1, -2]}\n',
            "line 1: hash_ids[1] must be an int ≥ 0, got -2",
        ),
        (
            '{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1, 2, 3]}\n',
            "line 1: 3 hash_ids for input_length 513, which fills at most 2 blocks of 512 tokens",
        ),
        (
            '{"timestamp": 5, "input_length": 5, "output_length": 1}\n{"timestamp": 4, "input_length": 5, "output_length": 1}\n',
            "line 2: timestamp 4 is before the previous entry's 5; sort the trace by timestamp",
        ),
        # 1e308 killed the dispatcher greenlet with a traceback (OverflowError); epoch milliseconds idled until -t.
        (
            '{"timestamp": 0, "input_length": 5, "output_length": 1}\n{"timestamp": 1e308, "input_length": 5, "output_length": 1}\n',
            "line 2: timestamp 1e+308 would be sent 1.16e+300 days after the start, more than a replay runs (366 days "
            "at most): timestamps are milliseconds from the start of the trace",
        ),
        (
            '{"timestamp": 1733097600123, "input_length": 5, "output_length": 1}\n',
            "line 1: the first entry's timestamp 1733097600123 would be sent 20,059 days after the start: timestamps "
            "are milliseconds from the start of the trace, and this looks like a clock time (Unix epoch?); make them "
            "relative to the first entry with: llmload trace rebase",
        ),
        (  # epoch seconds read as milliseconds: 20 days
            '{"timestamp": 1733097600, "input_length": 5, "output_length": 1}\n',
            "line 1: the first entry's timestamp 1733097600 would be sent 20 days after the start",
        ),
    ],
)
def test_bad_traces_are_refused_in_one_line_naming_file_line_and_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as e:
        load_trace(path)
    text = str(e.value).replace("number of milliseconds", "number of ms")
    assert text.startswith(f"trace '{path}': ") and message in text and "\n" not in text


def test_missing_file_and_bad_limit(tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        load_trace(tmp_path / "none.jsonl")
    with pytest.raises(ProfileError, match="limit must be ≥ 1"):
        load_trace(EXAMPLE, limit=0)


def test_equal_block_ids_give_identical_words_and_the_rest_is_unique():
    prompts = TracePrompts(seed=5)
    a = TraceEntry(0, 2 * BLOCK_TOKENS + 100, 10, (7, 8, 9))
    b = TraceEntry(0, 2 * BLOCK_TOKENS + 300, 10, (7, 8, 11))
    c = TraceEntry(0, 2 * BLOCK_TOKENS, 10, (7, 12))
    pa, pb, pc = (prompts.prompt(e, random.Random(i)).split() for i, e in enumerate((a, b, c)))
    assert [len(p) for p in (pa, pb, pc)] == [a.input_length, b.input_length, c.input_length]
    assert pa[: 2 * BLOCK_TOKENS] == pb[: 2 * BLOCK_TOKENS]  # blocks 7 and 8
    assert pa[:BLOCK_TOKENS] == pc[:BLOCK_TOKENS] and pa[BLOCK_TOKENS : 2 * BLOCK_TOKENS] != pc[BLOCK_TOKENS:]
    assert pa[2 * BLOCK_TOKENS :] != pb[2 * BLOCK_TOKENS : 2 * BLOCK_TOKENS + 100]  # blocks 9 and 11 differ
    again = TracePrompts(seed=5).prompt(TraceEntry(0, BLOCK_TOKENS + 40, 1, (7, 9)), random.Random(99)).split()
    assert again[BLOCK_TOKENS:] == pa[2 * BLOCK_TOKENS : 2 * BLOCK_TOKENS + 40]  # a partial block is its head
    assert TracePrompts(seed=6).prompt(a, random.Random(0)).split()[:BLOCK_TOKENS] != pa[:BLOCK_TOKENS]


def test_tokens_beyond_the_listed_blocks_and_prompts_without_ids_are_unique():
    prompts = TracePrompts(seed=1)
    short = TraceEntry(0, BLOCK_TOKENS + 50, 3, (4,))
    x, y = (prompts.prompt(short, random.Random(s)).split() for s in (1, 2))
    assert x[:BLOCK_TOKENS] == y[:BLOCK_TOKENS] and len(x) == BLOCK_TOKENS + 50
    assert x[BLOCK_TOKENS : BLOCK_TOKENS + TAG_TOKENS] != y[BLOCK_TOKENS : BLOCK_TOKENS + TAG_TOKENS]
    bare = TraceEntry(0, 40, 3)
    assert prompts.prompt(bare, random.Random(1)) != prompts.prompt(bare, random.Random(2))
    sample = prompts.sample(short, random.Random(1))
    assert (sample.class_name, sample.input_tokens, sample.max_tokens, sample.turn) == ("trace", 562, 3, 1)


def test_generated_traces_are_deterministic_poisson_with_reuse():
    a = generate_trace(2000, seed=3, rate_per_s=5.0)
    assert a == generate_trace(2000, seed=3, rate_per_s=5.0) != generate_trace(2000, seed=4, rate_per_s=5.0)
    gaps = [(y.timestamp_ms - x.timestamp_ms) / 1000 for x, y in zip(a, a[1:], strict=False)]
    assert sum(gaps) / len(gaps) == pytest.approx(0.2, rel=0.1)
    for e in a:
        assert 1 <= len(e.hash_ids) <= 6 and len(e.hash_ids) == -(-e.input_length // BLOCK_TOKENS)
        assert 16 <= e.output_length <= 512

    def reused_ids(entries):
        return sum(n >= 2 for n in Counter(h for e in entries for h in e.hash_ids).values())

    # the system prompts (at most 2 blocks each) are the only blocks a new conversation re-sends;
    # follow-up turns re-send an earlier request's own blocks too
    assert reused_ids(generate_trace(2000, seed=3, followup_share=0.0)) <= 2 * 4
    assert reused_ids(a) > 0.1 * len(a)
    with pytest.raises(ValueError):
        generate_trace(0)


def test_a_replay_profile_has_one_class_with_the_traces_means_and_caps_apply(tmp_path):
    from llmload.workload.traces import TRACE_CLASS, trace_profile

    path = write(tmp_path, '{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}\n'
                           '{"timestamp": 2500, "input_length": 301, "output_length": 31, "hash_ids": [1]}\n')  # fmt: skip
    trace = load_trace(path)
    profile = trace_profile(trace)
    assert profile.name == "trace:t" and profile.source == str(path) and profile.class_names == (TRACE_CLASS,)
    (c,) = profile.classes
    assert (c.input_tokens.mean, c.output_tokens.mean) == (200, 20)
    assert "2 entries over 2.5 s, 50% of hash_ids blocks reused" in profile.describe()
    prompts = TracePrompts(seed=4)
    sample = prompts.sample(trace.entries[1], random.Random(1), max_tokens_cap=8)
    assert (sample.class_name, sample.input_tokens, sample.max_tokens) == (TRACE_CLASS, 301, 8)
    assert prompts.sample(trace.entries[1], random.Random(1)).max_tokens == 31
