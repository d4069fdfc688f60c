"""Diagnosis rule about the engine's prefix cache: it does not hit where the workload shares prefixes.

A class *shares prefixes* when its profile gives it prefix groups (``prefix = {groups,
tokens, ...}``: every request opens with one of a few system prompts) or makes it a
conversation (``turns``: each later turn re-sends the earlier ones). Its expected reuse
is then well above zero, so a hit ratio near zero means the cache is off, too small for
the working set, or the prompts do not really start alike (a template that puts a date,
a request id or the user's name first).

What the rule reads (:class:`~llmload.analysis.cache.CacheView`, built once per run):

* the client's figure per sharing class: the cached prompt tokens the server stated
  (``usage.prompt_tokens_details.cached_tokens``) / the prompt tokens of those answers
  (:func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`); for a conversation class
  over its turns from the second on (a first turn has nothing to reuse);
* the engine's run-level ``prefix_cache_hit_rate`` (vLLM ``prefix_cache_hits /
  queries``, llama.cpp cached / (processed + cached), SGLang's gauge) when collected; an
  engine whose lookup counter never moved while prompts were processed counts as 0 (off).

It fires when a sharing class's figure, or without one the engine's, is below
:data:`HIT_LOW`. Confidence: high when the client and the engine agree, medium on one
of them.
"""

from __future__ import annotations

from llmload.analysis.findings import Context, Finding, rule

__all__ = ["HIT_LOW", "prefix_cache_cold"]

#: A hit ratio below this where prefixes are shared: the cache is not serving them.
HIT_LOW = 0.1


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f} %"


@rule("prefix_cache_cold", "engine prefix cache")
def prefix_cache_cold(ctx: Context) -> list[Finding]:
    """A class that shares prefixes, and a hit ratio below HIT_LOW (client's per class, else the engine's)."""
    view = ctx.cache
    if not view.sharing:
        return []
    engine = 0.0 if view.engine_off is not None else view.engine
    cold = {n: r for n, r in view.client.items() if r is not None and r < HIT_LOW}
    known = [n for n, r in view.client.items() if r is not None]
    if not cold and (known or engine is None or engine >= HIT_LOW):
        return []  # hits where it can be seen, or nothing says
    names = sorted(cold) or sorted(n for n in view.sharing if n in view.client or not view.client)
    agree = engine is not None and engine < HIT_LOW and bool(cold)
    text = [f"{n} ({view.sharing[n]}): {_pct(cold[n])} of its prompt tokens served from the cache, by the server's usage"
            for n in sorted(cold)]  # fmt: skip
    if view.engine_off is not None:
        text.append(f"the engine looked up none of its {view.engine_off[1]:,.0f} prompt tokens in a prefix cache: caching is off")
    elif engine is not None:
        text.append(f"engine prefix-cache hit rate over the run: {_pct(engine)}")
    return [Finding(
        "prefix_cache_cold", "engine prefix cache", "The prefix cache does not hit although the workload shares prefixes",
        "high" if agree else "medium",
        evidence={"classes": ", ".join(names), "client_hit_ratio": min(cold.values()) if cold else None,
                  "engine_hit_rate": engine, "threshold": HIT_LOW},
        evidence_text=text,
        change="Turn prefix caching on (vLLM: on by default in V1, --enable-prefix-caching in V0; SGLang: RadixAttention "
        "unless --disable-radix-cache; llama.cpp: --cache-reuse N and --slot-prompt-similarity), give the cache room "
        "(more KV blocks: --gpu-memory-utilization, a shorter --max-model-len), and put whatever differs per request "
        "(dates, ids, user names) after the shared part of the prompt; with several replicas, route requests of one "
        "prefix or conversation to the same replica.",
        explains=("ttft",),
    )]  # fmt: skip
