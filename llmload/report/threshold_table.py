"""The thresholds' PASS/FAIL table (console, report) from a run's judged thresholds.

``--threshold`` and a profile's ``thresholds`` are judged in :mod:`llmload.results.threshold_verdict`
(which also sets the exit code); this module only writes them: the console table
(:func:`render_thresholds`), report.json's ``thresholds`` (:func:`threshold_data`: the
verdict line and ``rows`` of ``{"expr", "value", "ci95", "result", "note"}``) and its HTML and
Markdown sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any, TextIO

from llmload.jsonvalue import Json
from llmload.results.threshold_verdict import EXIT_FAIL, EXIT_INCONCLUSIVE, ThresholdResult, exit_code

__all__ = ["render_thresholds", "threshold_data", "threshold_lines", "thresholds_html", "thresholds_markdown",
           "verdict_text"]  # fmt: skip


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"


def _ci(t: ThresholdResult) -> str:
    return f"[{_num(t.ci95[0])}, {_num(t.ci95[1])}]" if t.ci95 is not None else "-"


def verdict_text(results: Sequence[ThresholdResult]) -> str:
    """``thresholds: FAIL (1 of 3 failed; exit code 1)``."""
    code = exit_code(results)
    failed = sum(1 for r in results if r.passed is False)
    missing = sum(1 for r in results if r.passed is None)
    if code == EXIT_FAIL:
        return f"thresholds: FAIL ({failed} of {len(results)} failed; exit code {code})"
    if code == EXIT_INCONCLUSIVE:
        return f"thresholds: INCONCLUSIVE ({missing} of {len(results)} without a value; exit code {code})"
    return f"thresholds: PASS ({len(results)} of {len(results)} passed; exit code {code})"


def threshold_lines(results: Sequence[ThresholdResult]) -> list[tuple[str, str, str, str, str]]:
    """(expression, value, 95 % interval, PASS/FAIL/no value, note) per threshold."""
    return [(t.expr, _num(t.value), _ci(t), t.status, t.note) for t in results]


def render_thresholds(results: Sequence[ThresholdResult], out: TextIO) -> None:
    """The table and the verdict line (nothing without thresholds)."""
    if not results:
        return
    rows = threshold_lines(results)
    w = max(10, *(len(r[0]) for r in rows))
    out.write(f"\n{verdict_text(results)}\n  {'threshold':<{w}}  {'value':>10}  {'95 % interval':<22}  result\n")
    for expr, value, ci, status, note in rows:
        out.write(f"  {expr:<{w}}  {value:>10}  {ci:<22}  {status}" + (f"  ({note})" if note else "") + "\n")


def threshold_data(results: Sequence[ThresholdResult]) -> dict[str, Json] | None:
    """report.json's ``thresholds`` (None without thresholds)."""
    if not results:
        return None
    rows = [{"expr": e, "value": v, "ci95": c, "result": st, "note": n} for e, v, c, st, n in threshold_lines(results)]
    return {"verdict": verdict_text(results), "rows": rows}


def thresholds_markdown(r: dict[str, Any]) -> list[str]:
    t = r.get("thresholds")
    if not t:
        return []
    out = [f"- {t['verdict']}"]
    out += [f"  - `{x['expr']}`: {x['value']} {x['ci95']} **{x['result']}**" + (f" ({x['note']})" if x["note"] else "")
            for x in t["rows"]]  # fmt: skip
    return out


def thresholds_html(r: dict[str, Any]) -> str:
    t = r.get("thresholds")
    if not t:
        return ""
    e = lambda v: escape(str(v), quote=True)  # noqa: E731
    body = "".join(f"<tr><td><code>{e(x['expr'])}</code></td><td>{e(x['value'])}</td><td>{e(x['ci95'])}</td>"
                   f"<td>{e(x['result'])}</td><td>{e(x['note'])}</td></tr>" for x in t["rows"])  # fmt: skip
    return (f'<section><h2>Thresholds</h2><p class="note">{e(t["verdict"])}</p><div class="tablewrap"><table><thead>'
            "<tr><th>threshold</th><th>value</th><th>95 % interval</th><th>result</th><th>note</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div></section>")  # fmt: skip
