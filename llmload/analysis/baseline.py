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

from llmload.analysis.steps import Perf, StepView
from llmload.results.judgement import BaselineRef

__all__ = ["MIN_REQUESTS", "Baseline", "choose_baseline"]

#: Fewer finished requests than this in a step (or successful ones in the baseline): its p50 says nothing.
MIN_REQUESTS = 3


@dataclass(frozen=True, slots=True)
class Baseline:
    """The step the limits are derived from, and where it came from."""

    step: StepView
    source: str  # "pre-run" | "step" | "lowest-step"

    def class_perf(self, name: str) -> Perf | None:
        """The baseline of one request class, when it has enough successful requests."""
        p = self.step.classes.get(name)
        return p if p is not None and p.ok >= MIN_REQUESTS else None

    def ref(self) -> BaselineRef:
        """What the results record: the step's index and the source (the figures are the step's own)."""
        return BaselineRef(self.step.index if self.step.index is not None else 0, self.source)


def choose_baseline(steps: list[StepView]) -> tuple[Baseline | None, str | None, str]:
    """``(baseline, problem, note)``: the baseline, or None with ``"no_baseline"``/``"insufficient_data"``."""
    ladder = [s for s in steps if s.index is not None and s.index >= 0]
    candidates: list[tuple[StepView, str]] = [(s, "pre-run") for s in steps if s.index == -1]
    by_rate = bool(ladder) and ladder[0].rate_offered is not None
    if by_rate:  # a rate ladder: every step has the same cap; the lowest rate is the baseline
        candidates.append((ladder[0], "lowest-step"))
    else:
        candidates += [(s, "step") for s in ladder if s.users == 1][:1]
    if ladder and ladder[0].users != 1 and not by_rate:
        candidates.append((ladder[0], "lowest-step"))
    for step, source in candidates:
        if step.perf.ok >= MIN_REQUESTS and step.perf.ttft_p50 is not None:
            note = ""
            if source == "lowest-step" and by_rate:
                note = f"the baseline is the rate ladder's lowest rate ({step.label})"
            elif source == "lowest-step":
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
