"""What the prefix-cache rule reads of a run: :class:`CacheView` (see :mod:`.rules_cache`).

A class *shares prefixes* when its profile gives it prefix groups (``prefix``) or makes it
a conversation (``turns``). Per sharing class, the client's hit ratio: the cached prompt
tokens the server stated / the prompt tokens of those answers
(:func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`), for a conversation class
over its turns from the second on (a first turn has nothing to reuse); and the engine's
run-level ``prefix_cache_hit_rate`` when collected, and whether it looked nothing up at
all (its ``prefix_cache_queries`` counter did not move while prompt tokens did: the cache
is off; vLLM with ``--no-enable-prefix-caching``, the simulator's ``--no-prefix-caching``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.results.model import RunResult, Stats

__all__ = ["CacheView", "cache_view"]


@dataclass(frozen=True, slots=True)
class CacheView:
    """What the cache rule reads: per sharing class, how it shares and its client hit ratio; the engine's."""

    sharing: Mapping[str, str] = field(default_factory=dict)  # class -> "prefix groups" | "conversation"
    client: Mapping[str, float | None] = field(default_factory=dict)  # class -> hit ratio (None: never stated)
    engine: float | None = None
    engine_off: tuple[float, float] | None = None  # (0 looked up, prompt tokens): the engine never looked any up


def _later_turns_ratio(s: Stats) -> float | None:
    """The hit ratio over turns 2+: each turn's ratio weighted by its prompt tokens (exact when every answer stated it)."""
    num = den = 0.0
    for key, t in s.by_turn.items():
        if key != "1" and t.prefix_cache_hit_ratio is not None and t.input_tokens:
            num += t.prefix_cache_hit_ratio * t.input_tokens
            den += t.input_tokens
    return num / den if den else None


def cache_view(result: RunResult) -> CacheView:
    """The run's :class:`CacheView`: the profile's sharing classes, their client ratios, the engine's rate."""
    sharing: dict[str, str] = {}
    for c in (result.profile or {}).get("classes") or ():
        if not isinstance(c, Mapping) or "name" not in c:
            continue
        if c.get("turns") is not None:
            sharing[str(c["name"])] = "conversation"
        elif c.get("prefix") is not None:
            sharing[str(c["name"])] = "prefix groups"
    client: dict[str, float | None] = {}
    for name, how in sharing.items():
        s = result.classes.get(name)
        if s is None or s.ok == 0:
            continue
        client[name] = _later_turns_ratio(s) if how == "conversation" else s.prefix_cache_hit_ratio
    signals = (result.server or {}).get("signals") or {}
    rate: Any = (signals.get("prefix_cache_hit_rate") or {}).get("value")
    engine = float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None
    looked_up = (signals.get("prefix_cache_queries") or {}).get("increase")
    prompt = (signals.get("prompt_tokens") or {}).get("increase")
    off = (0.0, float(prompt)) if looked_up == 0 and isinstance(prompt, (int, float)) and prompt > 0 else None
    return CacheView(sharing, client, engine, off)
