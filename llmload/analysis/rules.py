"""The diagnosis rule table, in code: :data:`RULES`, most specific first.

Each entry is a rule function ``Context -> list[Finding]`` (:mod:`.rules_queue`,
:mod:`.rules_memory`, :mod:`.rules_cache`) carrying its id, layer and the signal sources it needs and wants
(:func:`~llmload.analysis.findings.rule`). docs/diagnosis.md is the same table for
people; keep the two in step. The order breaks ties in the ranking (:mod:`.diagnose`).
"""

from __future__ import annotations

from llmload.analysis.findings import Rule
from llmload.analysis.rules_cache import prefix_cache_cold
from llmload.analysis.rules_memory import decode_bandwidth, kv_capacity, kv_fragmentation, prefill_interference
from llmload.analysis.rules_queue import (
    admission_cap,
    engine_saturated,
    errors_shedding,
    gateway_queueing,
    load_generator_saturated,
    scheduler_starved,
)
from llmload.analysis.rules_target import rate_limited, target_unreachable

__all__ = ["RULES", "rule_ids"]

RULES: tuple[Rule, ...] = (
    target_unreachable,
    rate_limited,
    load_generator_saturated,
    admission_cap,
    kv_capacity,
    kv_fragmentation,
    decode_bandwidth,
    prefill_interference,
    prefix_cache_cold,
    gateway_queueing,
    scheduler_starved,
    engine_saturated,
    errors_shedding,
)


def rule_ids() -> list[str]:
    """The finding ids of :data:`RULES`, in order (plus ``not_enough_signals``, added by the diagnosis)."""
    return [r.rule_id for r in RULES]  # type: ignore[attr-defined]
