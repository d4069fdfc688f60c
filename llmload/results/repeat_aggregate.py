"""The aggregate of repeated runs (``llmload run --repeat N``): does the number hold run after run?

Given each repetition's summary (schema llmload.summary/2, in order), :func:`aggregate`
returns the summary's ``repeat`` block::

    "repeat": {"runs": N, "seeds": [int], "summaries": [path], "exit_codes": [int],
               "aggregate": {"overall" | CLASS: {METRIC: {"median", "min", "max", "cv", "values": [...]}}},
               "safe": {"unit": "users" | "req/s", "values": [x | null], "status": [str],
                        "level": x | null, "count": n, "text": "safe 8 users in 3 of 3 runs"} | null,
               "steady": {"values": [true | false | null], "count": n, "text": "steady in 2 of 3 runs"}}

METRIC: ``ttft|tpot|itl|e2e`` × ``p50|p90|p99`` as ``ttft_p99_ms``, plus ``error_rate``
(errors / finished), ``requests_per_s`` and ``output_tokens_per_s``. ``cv`` is the sample
standard deviation over the mean (None with fewer than 2 values or a zero mean). A scope or
metric a repetition lacks (no successful request) leaves that repetition out of its values.
``safe``: a ladder's ``verdict.safe_users`` (a rate ladder's ``safe_rate``) of each repetition,
the level most repetitions reached (the lowest on a tie: the cautious one) and in how many.
:func:`llmload.gate.figures` reads this shape; docs/ci.md and docs/summary-schema.md describe it.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from llmload.jsonvalue import Json

__all__ = ["METRICS", "aggregate", "aggregate_metrics", "safe_levels", "spread", "steadiness"]

LATENCIES = ("ttft", "tpot", "itl", "e2e")
PERCENTILES = ("p50", "p90", "p99")
#: every metric aggregated, in the order the console shows them
METRICS = (
    *(f"{m}_{p}_ms" for m in LATENCIES for p in PERCENTILES),
    "error_rate",
    "requests_per_s",
    "output_tokens_per_s",
)


def spread(values: Sequence[float]) -> dict[str, Json]:
    """Median, min, max and coefficient of variation of ``values`` (at least one)."""
    vals = [float(v) for v in values]
    mean = statistics.fmean(vals)
    cv = statistics.stdev(vals) / mean if len(vals) >= 2 and mean > 0 else None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "cv": round(cv, 4) if cv is not None else None, "values": vals}  # fmt: skip


def _metric(stats: Mapping[str, Any], key: str) -> float | None:
    """One metric of one STATS block (None: absent, e.g. no successful request)."""
    if key == "error_rate":
        ok, errors = stats.get("ok") or 0, stats.get("errors") or 0
        return errors / (ok + errors) if ok + errors else None
    if key.endswith("_ms"):
        name, pct, _ = key.split("_")
        value = (stats.get(f"{name}_ms") or {}).get(pct)
    else:
        value = stats.get(key)
    if (
        not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not (stats.get("ok") or key.endswith("_per_s"))
    ):
        return None
    return float(value)


def _scopes(summary: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    classes = summary.get("classes") or {}
    return {"overall": summary.get("overall") or {}, **{n: s for n, s in classes.items() if isinstance(s, Mapping)}}


def aggregate_metrics(summaries: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Json]]]:
    """Per scope (``overall``, then each class in first-seen order) and metric, :func:`spread` over the repetitions."""
    order: list[str] = []
    for s in summaries:
        order += [name for name in _scopes(s) if name not in order]
    out: dict[str, dict[str, dict[str, Json]]] = {}
    for scope in order:
        metrics: dict[str, dict[str, Json]] = {}
        for key in METRICS:
            values = [v for s in summaries if (st := _scopes(s).get(scope)) and (v := _metric(st, key)) is not None]
            if values:
                metrics[key] = spread(values)
        if metrics:
            out[scope] = metrics
    return out


def _block(summary: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``summary[key]`` when it is a JSON object, else an empty one (older summaries, runs without that block)."""
    block = summary.get(key)
    return block if isinstance(block, Mapping) else {}


def safe_levels(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Json] | None:
    """The ladder verdict's safe level per repetition and how often the commonest one held (None: no ladder)."""
    verdicts = [_block(s, "verdict") for s in summaries]
    if not any(s.get("steps") for s in summaries):
        return None
    rate = any(v.get("safe_rate") is not None or "safe_rate" in v for v in verdicts)
    key, unit = ("safe_rate", "req/s") if rate else ("safe_users", "users")
    values = [v.get(key) for v in verdicts]
    reached = Counter(x for x in values if x is not None)
    level, count = (None, 0)
    if reached:
        top = max(reached.values())
        level = min(x for x, c in reached.items() if c == top)
        count = reached[level]
    n = len(values)
    text = (f"safe {level:g} {unit} in {count} of {n} runs" if level is not None
            else f"no safe level in any of {n} runs")  # fmt: skip
    if level is not None and count < n:
        others = ", ".join("none" if x is None else f"{x:g}" for x in values)
        text += f" (per run: {others})"
    return {"unit": unit, "values": values, "status": [str(v.get("status")) for v in verdicts], "level": level,
            "count": count, "text": text}  # fmt: skip


def steadiness(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Json]:
    """Per repetition whether it was steady (``steady.run``, or every ladder step; None: could not tell)."""
    values: list[bool | None] = []
    for s in summaries:
        block = _block(s, "steady")
        run, steps = block.get("run"), block.get("steps") or []
        verdicts = [run.get("steady")] if isinstance(run, Mapping) else [st.get("steady") for st in steps]
        values.append(False if False in verdicts else True if verdicts and all(verdicts) else None)
    yes = sum(1 for v in values if v)
    told = any(v is not None for v in values)  # "" when no repetition could tell (short windows, older summaries)
    return {"values": values, "count": yes, "text": f"steady in {yes} of {len(values)} runs" if told else ""}


def aggregate(
    summaries: Sequence[Mapping[str, Any]],
    *,
    seeds: Sequence[int] = (),
    paths: Sequence[str] = (),
    exit_codes: Sequence[int] = (),
) -> dict[str, Json]:
    """The ``repeat`` block of the summary of ``len(summaries)`` repetitions (module docstring)."""
    return {"runs": len(summaries), "seeds": list(seeds), "summaries": list(paths), "exit_codes": list(exit_codes),
            "aggregate": aggregate_metrics(summaries), "safe": safe_levels(summaries),
            "steady": steadiness(summaries)}  # fmt: skip
