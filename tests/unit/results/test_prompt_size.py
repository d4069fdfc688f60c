"""The prompt-size warning: the server's usage.prompt_tokens next to the sizes llmload built, per class."""

from __future__ import annotations

from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet
from llmload.results.prompt_size import prompt_size_warning


def metrics(*classes: tuple[str, int, int | None, int]) -> MetricSet:
    """(class, tokens built, usage prompt tokens or None, requests) -> the recorder's statistics."""
    m = MetricSet()
    for name, built, usage, n in classes:
        for _ in range(n):
            rec = RequestRecord(name, built, 8)
            rec.start_ns, rec.chunk_ns, rec.end_ns, rec.outcome = 0, [1_000_000, 2_000_000], 3_000_000, "ok"
            settle_token_counts(rec, usage, 2)
            m.add(rec)
    return m


def test_a_tokenizer_that_splits_the_words_is_named_per_class_worst_first():
    """A random-weight test model served llama-server ~1.6 tokens a word (docs/real_engines.md)."""
    m = metrics(("long", 2000, 3210, 3), ("short", 50, 60, 3), ("medium", 500, 740, 2))
    w = prompt_size_warning(m.classes)
    assert w is not None and w.startswith("prompt sizes: the server counted other prompt sizes than llmload built: ")
    assert "long 3210 per request where llmload built 2000 (x1.60); medium 740 per request where llmload built 500 (x1.48)" in w
    assert "short" not in w  # +10 tokens: the chat template
    assert "scale input_tokens by 1/x" in w


def test_a_chat_template_alone_and_missing_usage_say_nothing():
    assert prompt_size_warning(metrics(("short", 50, 75, 4)).classes) is None  # x1.5 but +25 tokens a request
    assert prompt_size_warning(metrics(("long", 2000, None, 4)).classes) is None  # no usage: the size is llmload's
    assert prompt_size_warning(MetricSet().classes) is None


def test_fewer_tokens_than_built_is_named_too():
    w = prompt_size_warning(metrics(("dataset", 1000, 600, 2)).classes)  # a dataset estimate too high
    assert w is not None and "dataset 600 per request where llmload built 1000 (x0.60)" in w
