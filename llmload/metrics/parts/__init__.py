"""The parts of a request class's statistics: one module per group of figures.

A class's :class:`~llmload.metrics.recorder.ClassStats` is its core (:mod:`.outcomes`) and one
instance of every part registered here; each part keeps the contract of :mod:`.contract` (count a
finished request, merge, travel as its own typed wire dict, give its figures over a span). The
results, the summary writer and reader, the console and the exporter iterate over
:func:`parts` instead of naming each figure, so a new per-class figure is one module here
(with its test): a module of this package that sets ``PART`` registers it.

====================  ===================================================================
module                what
====================  ===================================================================
:mod:`.contract`      the :class:`~.contract.Part` and :class:`~.contract.Figures` protocols, what a part is given
:mod:`.outcomes`      the core: outcomes, tokens, errors by kind, latency histograms
:mod:`.reconnects`    requests sent again on a fresh connection
:mod:`.token_limit`   successful requests stopped at the output-token limit
:mod:`.reasoning`     reasoning tokens, their source, hidden reasoning
:mod:`.phases`        where the time went: phase histograms, the TTFT tail attribution
:mod:`.goodput`       good requests against the class's SLOs (runs with SLOs)
:mod:`.waits`         waits after failed requests (``--error-backoff``), Retry-After asked
:mod:`.prefix_cache`  prompt tokens the server served from its prefix cache
:mod:`.prompt_usage`  prompt sizes as the server counted them (the prompt-size warning)
:mod:`.turns`         per conversation turn: histograms and counters
:mod:`.batch_inputs`  batched inputs (embedded texts, reranked documents) and their input tokens per second
:mod:`.agents`        agent sessions: turns by kind (tool call, answer), tool waits, sessions
:mod:`.image_inputs`  images and request bytes of requests with images, per second
====================  ===================================================================
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from llmload.metrics.parts.contract import Part

__all__ = ["parts"]

_NOT_PARTS = frozenset({"contract", "outcomes"})


@cache
def parts() -> tuple[type[Part], ...]:
    """Every registered part class (a module of this package setting ``PART``), in their ``order``."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in _NOT_PARTS:
            continue
        part = getattr(importlib.import_module(f"{__name__}.{info.name}"), "PART", None)
        if part is not None:
            found.append(part)
    return tuple(sorted(found, key=lambda p: (p.order, p.key)))
