"""Diagnosis rule about the engine's prefix cache: it does not hit where the workload shares prefixes.

A class *shares prefixes* when its profile gives it prefix groups (``prefix = {groups,
tokens, ...}``: every request opens with one of a few system prompts) or makes it a
conversation (``turns``: each later turn re-sends the earlier ones). A working cache then
serves a known share of its prompt tokens (``reusable``, :mod:`llmload.analysis.cache`:
a conversation's later turns what they repeat of the turn before; a prefix class the
prefix's share of each prompt, less the requests that came before any prefix could be
cached), so a hit ratio far below that means the cache is off, too small for the working
set, or the prompts do not really start alike (a template that puts a date, a request id
or the user's name first).

What the rule reads (:class:`~llmload.analysis.cache.CacheView`, built once per run):

* the client's figure per sharing class: the cached prompt tokens the server stated
  (``usage.prompt_tokens_details.cached_tokens``) / the prompt tokens of those answers
  (:func:`~llmload.metrics.definitions.prefix_cache_hit_ratio`); for a conversation class
  over its turns from the second on (a first turn has nothing to reuse);
* the engine's run-level ``prefix_cache_hit_rate`` (vLLM ``prefix_cache_hits /
  queries``, llama.cpp cached / (processed + cached), SGLang's gauge) when collected; an
  engine whose lookup counter never moved while prompts were processed counts as 0 (off).

It fires when a sharing class's figure is below :data:`SERVED_LOW` × its reusable share
(the cache served less than a quarter of what it could), or, without a client figure,
the engine's is below :data:`SERVED_LOW` × the largest reusable share. A class with
nothing reusable yet (reusable 0: too few requests) is not judged: a 4-request run of 2
prefix groups on 4 users sends every request before any prefix is cached. A shared prefix
that is a small part of each prompt is judged against that part: 40 shared words before
600 unique ones hit ~6 % with a perfect cache. Confidence: high when the client and the
engine agree, medium on one of them.
The change names the engine's own switches when the metrics say which engine it is.
"""

from __future__ import annotations

from llmload.analysis.cache import CacheView
from llmload.analysis.findings import Context, Finding, rule

__all__ = ["SERVED_LOW", "change_for", "prefix_cache_cold"]

#: A hit ratio below this share of what a working cache would serve: the cache is not serving the shared prefixes.
SERVED_LOW = 0.25

_GENERIC = (
    "Turn prefix caching on (vLLM: on by default in V1, --enable-prefix-caching in V0; SGLang: RadixAttention unless "
    "--disable-radix-cache; llama.cpp: on unless --no-cache-prompt or a request's cache_prompt: false, one prompt per "
    "--parallel slot plus --cache-ram MiB in host memory), give the cache room (more KV blocks: "
    "--gpu-memory-utilization, a shorter --max-model-len), and put whatever differs per request (dates, ids, user "
    "names) after the shared part of the prompt; with several replicas, route requests of one prefix or conversation "
    "to the same replica."
)
_LLAMACPP = (
    "llama.cpp caches per slot: each of the --parallel slots keeps the last prompt it processed, a request goes to the "
    "idle slot whose prompt it shares most with (--slot-prompt-similarity, default 0.10; 0 = least recently used "
    "slot), and --cache-ram (default 8192 MiB; 0 = off) keeps the prompts of reassigned slots in host memory for "
    "later requests. Check that caching is on (no --no-cache-prompt, no cache_prompt: false in the requests), keep "
    "--cache-ram above 0 and --slot-prompt-similarity above 0, give it more slots than live prefixes or "
    "conversations (--parallel, with --ctx-size room for each), and put whatever differs per request after the "
    "shared part of the prompt. (--cache-reuse N only shifts matching chunks after a difference; it does not turn "
    "caching on.)"
)
_CHANGE = {"llamacpp": _LLAMACPP}


def change_for(engine: str | None) -> str:
    """What to change: the engine's own switches when known (llama.cpp), the common list otherwise."""
    return _CHANGE.get(engine or "", _GENERIC)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f} %"


def _why(view: CacheView, name: str, ratio: float) -> str:
    reusable = _pct(view.reusable.get(name, 1.0))
    if view.sharing[name] == "prefix groups":
        return (f"{name} (prefix groups): {_pct(ratio)} of its prompt tokens served from the cache, by the server's "
                f"usage; a working cache would serve ~{reusable} (the shared prefix, less the first requests)")
    return (f"{name} (conversation, turns 2+): {_pct(ratio)} of their prompt tokens served from the cache, by the "
            f"server's usage; a working cache would serve ≥ {reusable} (the turn before, re-sent)")  # fmt: skip


@rule("prefix_cache_cold", "engine prefix cache")
def prefix_cache_cold(ctx: Context) -> list[Finding]:
    """A sharing class, and a hit ratio below SERVED_LOW × what its cache could serve (client's per class, else the engine's)."""
    view = ctx.cache
    judged = {n: view.reusable.get(n, 1.0) for n in view.client if view.reusable.get(n, 1.0) > 0}
    if not view.sharing or not judged and view.client:
        return []  # nothing shared, or too few requests to tell
    engine = 0.0 if view.engine_off is not None else view.engine
    cold = {n: r for n, r in view.client.items() if n in judged and r is not None and r < SERVED_LOW * judged[n]}
    known = [n for n, r in view.client.items() if n in judged and r is not None]
    bar = SERVED_LOW * max(judged.values(), default=1.0)
    if not cold and (known or engine is None or engine >= bar):
        return []  # hits where it can be seen, or nothing says
    names = sorted(cold) or sorted(n for n in view.sharing if n in judged or not view.client)
    agree = engine is not None and engine < bar and bool(cold)
    reusable = min(judged[n] for n in cold) if cold else max(judged.values(), default=1.0)
    text = [_why(view, n, cold[n]) for n in sorted(cold)]
    if view.engine_off is not None:
        text.append(f"the engine looked up none of its {view.engine_off[1]:,.0f} prompt tokens in a prefix cache: caching is off")
    elif engine is not None:
        text.append(f"engine prefix-cache hit rate over the run: {_pct(engine)}")
    return [Finding(
        "prefix_cache_cold", "engine prefix cache", "The prefix cache does not hit although the workload shares prefixes",
        "high" if agree else "medium",
        evidence={"classes": ", ".join(names), "client_hit_ratio": min(cold.values()) if cold else None,
                  "engine_hit_rate": engine, "reusable": reusable, "threshold": SERVED_LOW * reusable},
        evidence_text=text,
        change=change_for(view.engine_name),
        explains=("ttft",),
    )]  # fmt: skip
