"""What the prefix-cache rule reads of a run: :class:`CacheView` (see :mod:`.rules_cache`).

A class *shares prefixes* when its profile gives it prefix groups (``prefix``) or makes it
a conversation (``turns``). Per sharing class, the client's hit ratio: the cached prompt
tokens the server stated / the prompt tokens of those answers
(:func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`), for a conversation class
over its turns from the second on (a first turn has nothing to reuse); and the engine's
run-level ``prefix_cache_hit_rate`` when collected, and whether it looked nothing up at
all (its ``prefix_cache_queries`` counter did not move while prompt tokens did: the cache
is off; vLLM with ``--no-enable-prefix-caching``, the simulator's ``--no-prefix-caching``).

**What a cache could serve** (``reusable``, per sharing class): the share of its prompt
tokens that a working cache would have served. A conversation's turn k re-sends turn
k − 1's prompt and its reply, so at least ``mean prompt(k − 1) / mean prompt(k)`` of it
(the means of ``by_turn``, in the server's tokens), weighted over turns 2+ by their
prompt tokens like the hit ratio (1 when no turn says). A prefix-group class, whose
unique rest follows the shared opening:

    reusable = T / (T + mean input_tokens) × max(0, ok − groups − users) / ok

the prefix's share of each prompt (both in the profile's words, as sent; N words ≈ N
tokens), times the share of requests that could find their prefix cached: the first
request of each group finds a cold cache, and so do the requests sent while the first
ones were still being prefilled (up to one per user: an engine caches a prompt once it
was processed, and llama.cpp lends a slot's prompt only once its request ended). Without
a profile mean (dataset prompts) the prefix's share of the measured prompt tokens stands
in. 0: too few requests to tell (every request may have come before a prefix was cached).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.results.model import RunResult, Stats
from llmload.results.setup import PrefixSetup

__all__ = ["CacheView", "cache_view", "reusable_share"]


@dataclass(frozen=True, slots=True)
class CacheView:
    """What the cache rule reads: per sharing class, how it shares and its client hit ratio; the engine's."""

    sharing: Mapping[str, str] = field(default_factory=dict)  # class -> "prefix groups" | "conversation"
    client: Mapping[str, float | None] = field(default_factory=dict)  # class -> hit ratio (None: never stated)
    engine: float | None = None
    engine_off: tuple[float, float] | None = None  # (0 looked up, prompt tokens): the engine never looked any up
    reusable: Mapping[str, float] = field(default_factory=dict)  # class -> share a working cache serves (module doc)
    engine_name: str | None = None  # the engine the metrics came from ("vllm", "llamacpp", ...), when one


def _later_turns_ratio(s: Stats) -> float | None:
    """The hit ratio over turns 2+: each turn's ratio weighted by its prompt tokens (exact when every answer stated it)."""
    num = den = 0.0
    for key, t in s.by_turn.items():
        if key != "1" and t.prefix_cache_hit_ratio is not None and t.input_tokens:
            num += t.prefix_cache_hit_ratio * t.input_tokens
            den += t.input_tokens
    return num / den if den else None


def _later_turns_reusable(s: Stats) -> float:
    """The share of turns 2+'s prompt tokens that repeat the turn before: Σ mean(k − 1) × ok(k) / Σ prompt tokens(k)."""
    turns = list(s.by_turn.values())
    num = den = 0.0
    for prev, t in zip(turns, turns[1:], strict=False):
        if prev.input_tokens_mean and t.input_tokens and t.ok:
            num += min(prev.input_tokens_mean * t.ok, t.input_tokens)
            den += t.input_tokens
    return num / den if den else 1.0


def reusable_share(prefix: PrefixSetup, input_tokens_mean: float | None, s: Stats, users: int) -> float:
    """The share of a prefix-group class's prompt tokens a working cache would serve (module docstring)."""
    tokens = float(prefix.tokens)
    groups = prefix.groups
    if tokens <= 0 or s.ok <= 0:
        return 0.0
    if input_tokens_mean is not None:
        share = tokens / (tokens + max(input_tokens_mean, 0.0))
    else:
        share = min(1.0, tokens / (s.input_tokens / s.ok)) if s.input_tokens else 0.0
    return share * max(0, s.ok - groups - max(users, 0)) / s.ok


def cache_view(result: RunResult) -> CacheView:
    """The run's :class:`CacheView`: the profile's sharing classes, their client ratios, the engine's rate."""
    sharing = {c.name: how for c in result.setup.classes if (how := c.sharing) is not None}
    client: dict[str, float | None] = {}
    reusable: dict[str, float] = {}
    for name, how in sharing.items():
        s = result.classes.get(name)
        if s is None or s.ok == 0:
            continue
        if how == "conversation":
            client[name], reusable[name] = _later_turns_ratio(s), _later_turns_reusable(s)
        elif (c := result.setup.cls(name)) is not None and c.prefix is not None:
            client[name] = s.prefix_cache_hit_ratio
            reusable[name] = reusable_share(c.prefix, c.input_tokens_mean, s, result.users_max)
    server = result.server or {}
    signals = server.get("signals") or {}
    rate: Any = (signals.get("prefix_cache_hit_rate") or {}).get("value")
    engine = float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None
    looked_up = (signals.get("prefix_cache_queries") or {}).get("increase")
    prompt = (signals.get("prompt_tokens") or {}).get("increase")
    off = (0.0, float(prompt)) if looked_up == 0 and isinstance(prompt, (int, float)) and prompt > 0 else None
    engines: Any = server.get("engines") or ()
    engine_name = str(engines[0]) if len(engines) == 1 else None
    return CacheView(sharing, client, engine, off, reusable, engine_name)
