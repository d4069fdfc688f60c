"""Hand-built ladder data for the analysis tests: summary step entries, whole summaries, step views.

The data is written as a saved summary would hold it, and read through the results loader
(:func:`llmload.results.from_summary`), as ``llmload report`` reads a stored run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llmload.analysis import analyze
from llmload.analysis.steps import StepView, step_views
from llmload.results import from_summary, to_summary


def lat(p50: float | None, p99: float | None = None, mean: float | None = None) -> dict[str, Any]:
    if p50 is None:
        return {"mean": None, "p50": None, "p90": None, "p99": None, "max": None, "min": None, "count": 0}
    p99 = p99 if p99 is not None else p50 * 1.5
    return {
        "mean": mean if mean is not None else p50,
        "p50": p50,
        "p90": p99,
        "p99": p99,
        "max": p99,
        "min": p50 / 2,
        "count": 10,
    }


def stats(
    ttft: float | None = 50.0,
    tpot: float | None = 20.0,
    *,
    ok: int = 20,
    errors: int = 0,
    interrupted: int = 0,
    ttft99: float | None = None,
    tpot99: float | None = None,
    itl: float | None = None,
    itl99: float | None = None,
    e2e: float = 1000.0,
    kinds: dict[str, int] | None = None,
    input_tokens: int = 100,
    steady_s: float = 10.0,
    tok_s: float | None = None,
    tail: dict[str, float] | None = None,
    coverage: float = 1.0,
) -> dict[str, Any]:
    """One STATS block (latencies in ms); ``input_tokens`` is per successful request.

    ``tail``: shares of the p90-tail TTFT per part (a PHASES block with ``coverage``), as a
    server with per-request timing gives them; without it the block says no request was timed.
    """
    itl = itl if itl is not None else tpot
    out = {
        "requests": ok + errors + interrupted,
        "ok": ok,
        "errors": errors,
        "interrupted": interrupted,
        "output_tokens": ok * 50,
        "input_tokens": ok * input_tokens,
        "output_tokens_per_s": tok_s if tok_s is not None else round(ok * 50 / steady_s, 3),
        "requests_per_s": round(ok / steady_s, 3),
        "ttft_ms": lat(ttft, ttft99),
        "tpot_ms": lat(tpot, tpot99),
        "itl_ms": lat(itl, itl99),
        "e2e_ms": lat(e2e, mean=e2e),
        "errors_by_kind": dict(kinds or ({"http_500": errors} if errors else {})),
    }
    if tail is not None:
        shares = {"gateway": 0.0, "server_queue": 0.0, "prefill": 0.0, "other": 0.0, **tail}
        out["phases"] = {"timed_requests": round(ok * coverage), "coverage": coverage,
                         "tail": {"p90": {"ttft_ms": ttft, "requests": max(1, ok // 10), "shares": shares}}}  # fmt: skip
    return out


def sig(mean: float, mx: float | None = None) -> dict[str, float]:
    return {"mean": mean, "min": mean, "max": mx if mx is not None else mean, "last": mean, "samples": 5}


def step(
    index: int,
    users: int,
    *,
    server: dict[str, float] | None = None,
    gpu: dict[str, float] | None = None,
    ci: dict[str, list[float]] | None = None,
    classes: dict[str, dict[str, Any]] | None = None,
    steady_s: float = 10.0,
    **kw: Any,
) -> dict[str, Any]:
    """A summary step entry; ``server``/``gpu`` given as {signal: mean} (``running_max`` etc. set a max).

    By default E2E is set so that Little's law puts every user busy (in-flight = users).
    """
    if "e2e" not in kw:
        started = kw.get("ok", 20) + kw.get("errors", 0) + kw.get("interrupted", 0)
        kw["e2e"] = 1000.0 * users * steady_s / max(started, 1)
    entry: dict[str, Any] = {
        "index": index,
        "users": users,
        "started_at": 1000.0 + 20 * index,
        "steady_from": 1005.0 + 20 * index,
        "ended_at": 1005.0 + 20 * index + steady_s,
        "steady_s": steady_s,
        "overall": stats(steady_s=steady_s, **kw),
        "classes": classes or {},
    }
    for key, values in (("server", server), ("gpu", gpu)):
        if values:
            maxes = {k[:-4]: v for k, v in values.items() if k.endswith("_max")}
            entry[key] = {k: sig(v, maxes.get(k)) for k, v in values.items() if not k.endswith("_max")}
    if ci:
        entry["p50_ci95"] = ci
    return entry


def summary(steps: list[dict[str, Any]], *, saturated: bool = False, **extra: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "schema": "llmload.summary/2",
        "duration_s": 60.0,
        "users_max": max((e["users"] for e in steps), default=4),
        "overall": stats(),
        "classes": {},
        "client": {"saturated": saturated, "saturated_processes": ["local"] if saturated else []},
        "steps": steps,
    }
    s.update(extra)
    return s


def views(*entries: dict[str, Any]) -> list[StepView]:
    return step_views(from_summary({"steps": list(entries)}))


def analyzed(s: dict[str, Any], degradation: float = 0.5) -> dict[str, Any]:
    """``s`` read back, analysed, and written out again: the summary with baseline, verdict and findings."""
    result = from_summary(s)
    return to_summary(replace(result, judgement=analyze(result, degradation)))
