"""The single-request baseline every step is compared with.

Chosen in this order, the first with at least :data:`MIN_REQUESTS` successful requests:

1. the ``--baseline-requests N`` pre-run (step ``-1``; ``source: "pre-run"``);
2. the ladder's 1-user step (``source: "step"``);
3. otherwise the lowest ladder step (``source: "lowest-step"``): the ladder did not start
   at 1 user, so the "baseline" already carries some load and the verdict is lenient.

No candidate with a successful request at all → status ``no_baseline``; a candidate with
fewer than :data:`MIN_REQUESTS` → ``insufficient_data`` (lengthen ``--step-time`` or
raise ``--baseline-requests``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmload.analysis.steps import Perf, StepView

__all__ = ["MIN_REQUESTS", "Baseline", "choose_baseline"]

#: Fewer finished requests than this in a step (or successful ones in the baseline): its p50 says nothing.
MIN_REQUESTS = 3


def _pair(p: Perf, metric: str) -> dict[str, float | None]:
    return {"p50": getattr(p, f"{metric}_p50"), "p99": getattr(p, f"{metric}_p99")}


@dataclass(frozen=True, slots=True)
class Baseline:
    """The step the limits are derived from, and where it came from."""

    step: StepView
    source: str  # "pre-run" | "step" | "lowest-step"

    def class_perf(self, name: str) -> Perf | None:
        """The baseline of one request class, when it has enough successful requests."""
        p = self.step.classes.get(name)
        return p if p is not None and p.ok >= MIN_REQUESTS else None

    def to_dict(self) -> dict[str, Any]:
        s, p = self.step, self.step.perf
        out: dict[str, Any] = {
            "step": s.index,
            "users": s.users,
            "source": self.source,
            "requests": p.ok,
            "ttft_ms": _pair(p, "ttft"),
            "tpot_ms": _pair(p, "tpot"),
            "itl_ms": _pair(p, "itl"),
            "e2e_ms": {"p50": p.e2e_p50, "p99": p.e2e_p99, "mean": p.e2e_mean},
            "classes": {},
        }
        if s.ci:
            out["p50_ci95"] = {k: list(v) for k, v in s.ci.items()}
        for name, c in s.classes.items():
            out["classes"][name] = {"requests": c.ok, "ttft_ms": _pair(c, "ttft"), "tpot_ms": _pair(c, "tpot")}
        return out


def choose_baseline(steps: list[StepView]) -> tuple[Baseline | None, str | None, str]:
    """``(baseline, problem, note)``: the baseline, or None with ``"no_baseline"``/``"insufficient_data"``."""
    ladder = [s for s in steps if s.index is not None and s.index >= 0]
    candidates: list[tuple[StepView, str]] = [(s, "pre-run") for s in steps if s.index == -1]
    candidates += [(s, "step") for s in ladder if s.users == 1][:1]
    if ladder and ladder[0].users != 1:
        candidates.append((ladder[0], "lowest-step"))
    for step, source in candidates:
        if step.perf.ok >= MIN_REQUESTS and step.perf.ttft_p50 is not None:
            note = ""
            if source == "lowest-step":
                note = f"the ladder has no 1-user step: the baseline is its lowest step ({step.users} users)"
            return Baseline(step, source), None, note
    if not candidates:
        return None, "no_baseline", "no baseline: the ladder has no steps"
    best = max((s.perf.ok for s, _ in candidates), default=0)
    if best == 0:
        return None, "no_baseline", "no baseline: no request succeeded in the baseline step"
    return (
        None,
        "insufficient_data",
        f"the baseline step finished only {best} successful requests (at least {MIN_REQUESTS} needed): "
        "lengthen --step-time or set --baseline-requests",
    )
