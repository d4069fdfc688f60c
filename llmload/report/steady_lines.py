"""Steady state written out (console, report): whether the run, or each ladder step, settled, and why not.

The verdicts come from the summary's ``steady`` block (:mod:`llmload.metrics.steady`); a window
that was not steady is also one of the run's warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["render_steady", "steady_html", "steady_lines"]


def _word(s: Mapping[str, Any]) -> str:
    v = s.get("steady")
    if v is None:
        return f"not judged: {s.get('reason')}"  # the reason says why (a window too short to tell)
    return f"yes ({s.get('window_s')} s, {s.get('batches')} batches)" if v else f"NO: {s.get('reason')}"


def _step(s: Mapping[str, Any], unit: str) -> str:
    """A step as the line names it: ``8 users`` (as always, ``1 users`` too), or ``8 sessions`` / ``1 session``."""
    n = s.get("users")
    return f"{n} users" if unit == "users" else f"{n} {unit[:-1] if n == 1 else unit}"


def steady_lines(block: Any, unit: str = "users") -> list[str]:
    """``steady state: yes (58 s, 10 batches)``, or one line per ladder step (nothing without a block); ``unit``
    ``sessions`` names a ladder over sessions' steps (:mod:`llmload.analysis.sessions`) in sessions."""
    if not isinstance(block, Mapping):
        return []
    run, steps = block.get("run"), block.get("steps") or []
    if isinstance(run, Mapping):
        return [f"steady state: {_word(run)}"]
    if steps:
        return ["steady state per step: " + "; ".join(f"{_step(s, unit)} {_word(s)}" for s in steps)]
    return []


def render_steady(block: Any, out: TextIO, unit: str = "users") -> None:
    for line in steady_lines(block, unit):
        out.write(line + "\n")


def steady_html(report: Mapping[str, Any]) -> str:
    """The report's Steady state section (empty without a block)."""
    from html import escape

    sessions = any("sessions" in s for s in report.get("steps") or [])  # a ladder over sessions (report data)
    lines = steady_lines(report.get("steady"), "sessions" if sessions else "users")
    if not lines:
        return ""
    body = "".join(f"<p>{escape(x)}</p>" for x in lines)
    return ('<section><h2>Steady state</h2><p class="note">Mann-Kendall trend test on batch means of TTFT, TPOT '
            f"and the in-flight count over the measured window (docs/diagnosis.md).</p>{body}</section>")  # fmt: skip
