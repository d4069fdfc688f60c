"""Prompt sizes as the server counted them next to the sizes llmload built: a warning when they part.

llmload builds synthetic prompts of N words that are N tokens in the tokenizers
:mod:`llmload.workload.prompts` names (cl100k/o200k, Llama 3, Qwen, Mistral v1-v3), and
estimates a dataset prompt's tokens from its characters. Another tokenizer splits those
words (a test model's on this project's machine: ~1.6 tokens per word), so a class asked
for 2,000 prompt tokens may send 3,200. Every token figure of the run (prefill load, cache
ratios, by-turn input) is then the server's, not the profile's, and a ladder measured a
heavier workload than the one written down. The server's ``usage.prompt_tokens`` says so
request by request; :func:`prompt_size_warning` says it once, per class.

Per class, over its successful requests whose prompt size came from usage
(``usage_input_*`` counters of :mod:`llmload.metrics.recorder`)::

    ratio  = usage_input_tokens / usage_input_asked
    excess = (usage_input_tokens - usage_input_asked) / usage_input_requests   (tokens per request)

A class is named when ``ratio > 1 + RATIO_MARGIN`` with ``excess > TEMPLATE_TOKENS`` (a chat
template adds its role markers and generation prompt, ~5-15 tokens a message, more with a
default system prompt: not a tokenizer mismatch), or when ``ratio < 1 - RATIO_MARGIN``.
"""

from __future__ import annotations

from collections.abc import Mapping

from llmload.metrics.recorder import ClassStats

__all__ = ["RATIO_MARGIN", "TEMPLATE_TOKENS", "prompt_size_warning"]

#: How far the server's count may stray from llmload's before a class is named (a share).
RATIO_MARGIN = 0.25
#: Tokens per request that a chat template alone can add.
TEMPLATE_TOKENS = 32


def prompt_size_warning(classes: Mapping[str, ClassStats]) -> str | None:
    """One warning naming the classes whose prompts the server counted far from their built size, or None."""
    named = []
    for name, s in classes.items():
        c = s.counters
        n, served, asked = c.get("usage_input_requests", 0), c.get("usage_input_tokens", 0), c.get("usage_input_asked", 0)
        if n <= 0 or asked <= 0:
            continue
        ratio = served / asked
        more = ratio > 1 + RATIO_MARGIN and (served - asked) / n > TEMPLATE_TOKENS
        if more or ratio < 1 - RATIO_MARGIN:
            named.append((abs(ratio - 1), f"{name} {served / n:.0f} per request where llmload built {asked / n:.0f} "
                                          f"(x{ratio:.2f})"))  # fmt: skip
    if not named:
        return None
    named.sort(reverse=True)
    return (
        "prompt sizes: the server counted other prompt sizes than llmload built: "
        + "; ".join(text for _, text in named)
        + ". Its tokenizer splits llmload's synthetic words (one token each in cl100k/o200k, Llama 3, Qwen, "
        "Mistral v1-v3) or a dataset's estimate is off, so this run's input sizes are the server's (usage), not "
        "the profile's: scale input_tokens by 1/x to send the sizes you meant"
    )
