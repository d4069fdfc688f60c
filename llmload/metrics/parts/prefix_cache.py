"""The prefix cache per class, as the server's answers state it (``usage...cached_tokens``).

Over successful requests: ``cached_prompt_tokens``, the prompt tokens the server says it served
from its prefix cache, and the prompt tokens of the answers that stated it (the hit ratio's
divisor, :func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`; None when no answer
stated it). Summary keys ``cached_prompt_tokens``, ``prefix_cache_hit_ratio``; counters
``llmload_cached_prompt_tokens``, ``llmload_cache_stated_prompt_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.definitions import prefix_cache_hit_ratio
from llmload.metrics.latency import num, rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["CacheFigures", "PrefixCache", "PrefixCacheWire"]


class PrefixCacheWire(TypedDict):
    c: int  # cached prompt tokens
    s: int  # prompt tokens of the answers that stated cached_tokens


@dataclass(frozen=True, slots=True)
class CacheFigures:
    key: ClassVar[str] = "prefix_cache"
    cached_prompt_tokens: int = 0
    prefix_cache_hit_ratio: float | None = None

    def to_dict(self) -> dict[str, Json]:
        return {"cached_prompt_tokens": self.cached_prompt_tokens, "prefix_cache_hit_ratio": rnd(self.prefix_cache_hit_ratio, 4)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CacheFigures:
        return cls(int(d.get("cached_prompt_tokens") or 0), num(d.get("prefix_cache_hit_ratio")))

    def console_lines(self, users_max: int) -> list[str]:
        return []  # beside the engine's own hit rate, in the console's cache line (report/console.py)


class PrefixCache:
    __slots__ = ("cached", "stated")
    key: ClassVar[str] = "prefix_cache"
    order: ClassVar[int] = 70
    figures: ClassVar[type[CacheFigures]] = CacheFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("cached_prompt_tokens", "Prompt tokens the server said it served from its prefix cache "
                 "(usage.prompt_tokens_details.cached_tokens)", lambda p: p.cached),
        Exported("cache_stated_prompt_tokens", "Prompt tokens of successful requests whose answer stated cached_tokens "
                 "(the prefix-cache hit ratio's divisor)", lambda p: p.stated),
    )  # fmt: skip

    def __init__(self) -> None:
        self.cached = self.stated = 0

    @property
    def counters(self) -> dict[str, int]:
        return {"cached_prompt_tokens": self.cached, "cache_stated_input_tokens": self.stated}

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.outcome == "ok" and rec.cached_prompt_tokens is not None:
            self.cached += rec.cached_prompt_tokens
            self.stated += rec.input_tokens

    def merge(self, other: PrefixCache) -> None:
        self.cached += other.cached
        self.stated += other.stated

    @property
    def empty(self) -> bool:
        return not (self.cached or self.stated)

    def to_wire(self) -> PrefixCacheWire:
        return {"c": self.cached, "s": self.stated}

    @classmethod
    def from_wire(cls, wire: PrefixCacheWire) -> PrefixCache:
        p = cls()
        p.cached, p.stated = int(wire.get("c", 0)), int(wire.get("s", 0))
        return p

    def result(self, ctx: Context) -> CacheFigures:
        return CacheFigures(self.cached, prefix_cache_hit_ratio(self.cached, self.stated))


PART = PrefixCache
