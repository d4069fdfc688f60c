"""Guards on the verdict: a firm answer needs enough evidence, else it is ``inconclusive``.

:func:`~llmload.analysis.verdict.judge_steps` judges whatever it is given: a 4-request
baseline mixed over three classes gave "safe concurrency 1 user, recommended gateway limit 1"
(issue 16). :func:`guard` turns an ``ok``/``breach`` verdict into ``inconclusive`` when

* a request class has fewer than :data:`MIN_CLASS_REQUESTS` successful requests in the
  baseline, or fewer than that many finished requests in a step that was judged (up to the
  breach): its p50 is a coin toss; or
* the confidence band spans the whole ladder: safe for certain only at the baseline, yet
  possibly up to the top step — the steps did not tell the levels apart.

The verdict keeps every figure it had (``judged_status`` says what it would have said);
``inconclusive`` gives the reasons, the sample counts and what to change. The live ladder
judge (``--stop-on-breach``) does not use this: it stops at a measured breach.
"""

from __future__ import annotations

from dataclasses import replace

from llmload.analysis.baseline import Baseline
from llmload.analysis.steps import StepView
from llmload.results.judgement import Verdict

__all__ = ["MIN_CLASS_REQUESTS", "guard"]

#: Fewer requests of a class than this (successful in the baseline, finished in a step): no firm verdict.
MIN_CLASS_REQUESTS = 5


def _label(s: StepView, unit: str = "user") -> str:
    """``baseline``, ``4 users`` (``4 sessions``: a ladder over sessions), or a rate step's ``2 req/s`` (every rate
    step has the same users: the -u cap)."""
    if s.index is not None and s.index < 0:
        return "baseline"
    return s.label if s.rate_offered is not None else f"{s.users} {unit}s"


def guard(verdict: Verdict, steps: list[StepView], baseline: Baseline, unit: str = "user") -> Verdict:
    """``verdict``, or the same marked ``inconclusive`` (module docstring); ``unit`` names the steps."""
    if verdict.status not in ("ok", "breach"):
        return verdict
    base = baseline.step
    ladder = [s for s in steps if s.index is not None and s.index >= 0]
    last = verdict.breach.step if verdict.breach is not None else (ladder[-1].index if ladder else None)
    judged = [s for s in ladder
              if s.index != base.index and last is not None and s.index is not None and s.index <= last]  # fmt: skip
    samples: dict[str, dict[str, int]] = {"baseline": {n: p.ok for n, p in base.classes.items()}}
    thin: list[str] = []
    for name, n in samples["baseline"].items():
        if n < MIN_CLASS_REQUESTS:
            thin.append(f"{name}: {n} successful requests in the baseline")
    for s in judged:
        counts = {n: p.finished for n, p in s.classes.items()}
        samples[_label(s, unit)] = counts
        thin += [f"{name}: {n} requests at {_label(s, unit)}" for name, n in counts.items() if n < MIN_CLASS_REQUESTS]
    reasons, change = [], []
    if thin:
        shown = "; ".join(thin[:4]) + (f"; and {len(thin) - 4} more" if len(thin) > 4 else "")
        reasons.append(f"too few requests per class (at least {MIN_CLASS_REQUESTS} needed): {shown}")
        change.append("lengthen --step-time" + (" and raise --baseline-requests" if base.index == -1 else
                      " or set --baseline-requests N (a single-request pre-run)"))  # fmt: skip
    low, high = verdict.confidence.band_steps
    above_base = [s for s in ladder if s.index != base.index]
    if len(above_base) >= 2 and high is not None and high == ladder[-1].index and (low is None or low == base.index):
        reasons.append(
            f"the confidence band spans the whole ladder (safe for certain only at the baseline, possibly up to "
            f"{_label(ladder[-1], unit)})"
        )
        change.append("lengthen --step-time (more samples narrow each step's p50 interval)")
    if not reasons:
        return verdict
    note = "inconclusive: " + "; ".join(reasons) + ". To decide: " + "; ".join(dict.fromkeys(change))
    detail = {"judged_status": verdict.status, "reasons": reasons, "samples": samples,
              "change": "; ".join(dict.fromkeys(change))}  # fmt: skip
    return replace(verdict, status="inconclusive", note=note, inconclusive=detail)
