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


def steady_lines(block: Any) -> list[str]:
    """``steady state: yes (58 s, 10 batches)``, or one line per ladder step (nothing without a block)."""
    if not isinstance(block, Mapping):
        return []
    run, steps = block.get("run"), block.get("steps") or []
    if isinstance(run, Mapping):
        return [f"steady state: {_word(run)}"]
    if steps:
        return ["steady state per step: " + "; ".join(f"{s.get('users')} users {_word(s)}" for s in steps)]
    return []


def render_steady(block: Any, out: TextIO) -> None:
    for line in steady_lines(block):
        out.write(line + "\n")


def steady_html(report: Mapping[str, Any]) -> str:
    """The report's Steady state section (empty without a block)."""
    from html import escape

    lines = steady_lines(report.get("steady"))
    if not lines:
        return ""
    body = "".join(f"<p>{escape(x)}</p>" for x in lines)
    return ('<section><h2>Steady state</h2><p class="note">Mann-Kendall trend test on batch means of TTFT, TPOT '
            f"and the in-flight count over the measured window (docs/diagnosis.md).</p>{body}</section>")  # fmt: skip
