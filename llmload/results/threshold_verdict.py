"""Whether a run met its thresholds (:mod:`llmload.metrics.thresholds`), and the process exit code.

Each threshold is judged on the measured figure, as k6 does: ``ttft_p99_ms<800`` passes when
the run's TTFT p99 is below 800 ms. Beside it stands the figure's 95 % interval where one
exists (latency percentiles: order statistics; ``error_rate`` and ``goodput.attainment``:
Wilson; :mod:`llmload.metrics.confidence`), and a note when the limit lies inside it (the
verdict could flip on a rerun: more requests would decide) or when the percentile had too
few samples for an interval. A threshold whose figure does not exist in the run (no
successful request, no SLOs for a goodput figure) is neither passed nor failed: ``passed``
is None, and the run is inconclusive.

Exit codes (``llmload run`` with thresholds, and ``llmload gate``)::

    0  every threshold passed (gate: PASS)
    1  a threshold failed (gate: FAIL)
    2  bad input: a flag, a profile, a summary that cannot be read (before any load)
    3  inconclusive: a threshold without a value (gate: INCONCLUSIVE)

Without thresholds, ``llmload run``'s code is Locust's: 1 when a request failed
(``--exit-code-on-error``), 2 for bad input, else 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llmload.metrics.confidence import HEADLINE_QUANTILES, min_samples, proportion_ci, too_few_text
from llmload.metrics.thresholds import Threshold

if TYPE_CHECKING:
    from llmload.results.model import RunResult, Stats

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAIL", "EXIT_INCONCLUSIVE", "EXIT_PASS", "ThresholdResult", "evaluate", "exit_code"]

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class ThresholdResult:
    """One threshold judged: the figure's ``value`` (None: not measured), its 95 % interval when known,
    ``passed`` (None: no value), and a ``note`` (why no value; the limit inside the interval; too few samples)."""

    expr: str
    value: float | None = None
    ci95: tuple[float, float] | None = None
    passed: bool | None = None
    note: str = ""

    @property
    def status(self) -> str:
        return "no value" if self.passed is None else "PASS" if self.passed else "FAIL"


def _figure(t: Threshold, s: Stats) -> tuple[float | None, tuple[float, float] | None, str]:
    """(value, interval, note) of ``t``'s figure in ``s``."""
    lat = t.latency
    if lat is not None:
        metric, stat = lat
        latency = s.lat(metric)
        value = getattr(latency, stat)
        if stat not in HEADLINE_QUANTILES or value is None:
            return value, None, ""
        ci = latency.interval(stat)
        n, q = latency.count, HEADLINE_QUANTILES[stat]
        return value, ci, "" if ci is not None else f"{too_few_text(n, stat)} interval (needs {min_samples(q)})"
    if t.figure == "error_rate":
        return s.error_rate, proportion_ci(s.errors, s.finished), ""
    if t.figure.startswith("goodput."):
        g = s.goodput
        if g is None:
            return None, None, "the run had no SLOs (--slo, a class's slo)"
        name = t.figure.partition(".")[2]
        ci = proportion_ci(g.good_requests, s.finished) if name == "attainment" else None
        return getattr(g, name), ci, ""
    value = getattr(s, t.figure)
    return (float(value) if value is not None else None), None, ""


def _judge(t: Threshold, result: RunResult) -> ThresholdResult:
    s = result.overall if t.cls is None else result.classes.get(t.cls)
    if s is None:
        return ThresholdResult(t.expr, note=f"no class {t.cls!r} in this run")
    value, ci, note = _figure(t, s)
    if value is None:
        return ThresholdResult(t.expr, note=note or "not measured (no successful request)")
    passed = t.met(value)
    if ci is not None and ci[0] < t.limit < ci[1]:
        note = "the limit is inside the 95 % interval: a rerun may decide otherwise (more requests narrow it)"
    return ThresholdResult(t.expr, value, ci, passed, note)


def evaluate(result: RunResult, thresholds: Sequence[Threshold]) -> tuple[ThresholdResult, ...]:
    """Each threshold judged on ``result``, in the order given."""
    return tuple(_judge(t, result) for t in thresholds)


def exit_code(results: Sequence[ThresholdResult]) -> int:
    """1 when a threshold failed, else 3 when one had no value, else 0 (module docstring)."""
    if any(r.passed is False for r in results):
        return EXIT_FAIL
    if any(r.passed is None for r in results):
        return EXIT_INCONCLUSIVE
    return EXIT_PASS
