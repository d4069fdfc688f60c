"""The gate's result written three ways: the console table, JSON (``llmload.gate/1``) and JUnit XML.

JSON::

    {"schema": "llmload.gate/1", "status": "PASS" | "FAIL" | "INCONCLUSIVE", "exit_code": 0 | 1 | 3,
     "baseline": RUN, "candidate": RUN, "limits": {metric: limit}, "not_comparable": [{"key", "baseline", "candidate"}],
     "reasons": [str],
     "checks": [{"scope", "metric", "limit", "status", "change", "change_range": [lo, hi] | null, "reason",
                 "baseline": FIGURE, "candidate": FIGURE}]}
    RUN    = {"path", "requests", "ok", "started_at", "seed", "repetitions"}
    FIGURE = {"value", "ci95": [lo, hi] | null, "n", "runs": bool}     # ms, or a share for error_rate

JUnit: one ``<testsuite name="llmload gate">``, one ``<testcase classname="llmload.gate.<scope>"
name="<metric>">`` per check (a FAIL is a ``<failure>``, an INCONCLUSIVE a ``<skipped>``), and a
``comparable`` test case that fails when the runs differ.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any, TextIO, TypedDict

from llmload.gate.decide import Check, GateResult
from llmload.gate.figures import Figure
from llmload.gate.limits import limit_text

__all__ = ["SCHEMA", "to_dict", "write_console", "write_junit"]

SCHEMA = "llmload.gate/1"


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


class FigureData(TypedDict):
    value: float | None
    ci95: list[float | None] | None
    n: int
    runs: bool


def _figure(f: Figure) -> FigureData:
    ci = f.interval
    return {"value": _r(f.value), "ci95": [_r(ci[0]), _r(ci[1])] if ci else None, "n": f.n, "runs": f.runs}


def to_dict(g: GateResult, runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON document; ``runs`` = {"baseline": RUN, "candidate": RUN}."""
    return {
        "schema": SCHEMA,
        "status": g.status,
        "exit_code": g.exit_code,
        "baseline": dict(runs.get("baseline") or {}),
        "candidate": dict(runs.get("candidate") or {}),
        "limits": dict(g.limits),
        "not_comparable": [{"key": d.key, "baseline": d.baseline, "candidate": d.candidate} for d in g.differences],
        "reasons": list(g.reasons),
        "checks": [
            {"scope": c.scope, "metric": c.metric, "limit": c.limit, "status": c.status, "change": _r(c.change),
             "change_range": [_r(c.change_range[0]), _r(c.change_range[1])] if c.change_range else None,
             "reason": c.reason, "baseline": _figure(c.baseline), "candidate": _figure(c.candidate)}
            for c in g.checks
        ],
    }  # fmt: skip


def _value(f: Figure, metric: str) -> str:
    if f.value is None:
        return "-"
    if metric == "error_rate":
        return f"{f.value * 100:.2f} %"
    v = f.value
    text = f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"
    ci = f.interval
    if ci is None:
        return f"{text} ms (n={f.n})"
    pm = max(ci[1] - v, v - ci[0]) / v * 100 if v > 0 else 0.0
    return f"{text} ms ±{pm:.1f}%"


def _change(c: Check) -> str:
    if c.change is None:
        return "-"
    unit = " pt" if c.metric == "error_rate" else "%"
    if c.change_range is None:
        return f"{c.change * 100:+.1f}{unit}"
    lo, hi = c.change_range
    return f"{c.change * 100:+.1f}{unit} [{lo * 100:+.1f}, {hi * 100:+.1f}]"


def headline(g: GateResult) -> str:
    """``FAIL: overall tpot_p50 regressed +20.3 % (...)`` and so on: the first reason, or the count of passes."""
    if g.status == "PASS":
        return f"PASS: {len(g.checks)} checks within their limits"
    first = g.reasons[0] if g.reasons else ""
    more = f" (and {len(g.reasons) - 1} more below)" if len(g.reasons) > 1 else ""
    return f"{g.status}: {first}{more}"


def write_console(g: GateResult, runs: Mapping[str, Mapping[str, Any]], out: TextIO, verbose: bool = False) -> None:
    """The decision, the runs, and a table of the checks (all with ``verbose``, else those not passed + a count)."""
    out.write(f"llmload gate: {headline(g)}\n")
    for side in ("baseline", "candidate"):
        r = runs.get(side) or {}
        reps = f", {r['repetitions']} repetitions" if r.get("repetitions") else ""
        out.write(f"  {side:<9} {r.get('path')}: {r.get('requests')} requests{reps}, started {r.get('started_at')}\n")
    for d in g.differences:
        out.write(f"  not comparable: {d.text()}\n")
    shown = [c for c in g.checks if verbose or c.status != "PASS"]
    if shown:
        out.write(f"\n  {'scope':<10} {'metric':<10} {'limit':>8}  {'baseline':<18} {'candidate':<18} "
                  f"{'change [95 % range]':<24} result\n")  # fmt: skip
        for c in shown:
            out.write(f"  {c.scope:<10} {c.metric:<10} {limit_text(c.metric, c.limit):>8}  "
                      f"{_value(c.baseline, c.metric):<18} {_value(c.candidate, c.metric):<18} {_change(c):<24} "
                      f"{c.status}\n")  # fmt: skip
    passed = sum(1 for c in g.checks if c.status == "PASS")
    if not verbose and passed:
        out.write(f"  {passed} of {len(g.checks)} checks passed (--verbose lists them)\n")
    for reason in g.reasons:
        out.write(f"  - {reason}\n")
    out.write(f"exit code {g.exit_code}\n")


def write_junit(g: GateResult, path: str) -> None:
    """JUnit XML for CI systems (module docstring)."""
    failures = sum(1 for c in g.checks if c.status == "FAIL") + (1 if g.differences else 0)
    skipped = sum(1 for c in g.checks if c.status == "INCONCLUSIVE")
    suite = ET.Element("testsuite", name="llmload gate", tests=str(len(g.checks) + 1), failures=str(failures),
                       errors="0", skipped=str(skipped))  # fmt: skip
    case = ET.SubElement(suite, "testcase", classname="llmload.gate", name="comparable")
    if g.differences:
        ET.SubElement(case, "failure", message="; ".join(d.text() for d in g.differences))
    for c in g.checks:
        case = ET.SubElement(suite, "testcase", classname=f"llmload.gate.{c.scope}",
                             name=f"{c.metric} regression <= {limit_text(c.metric, c.limit)}")  # fmt: skip
        if c.status == "FAIL":
            ET.SubElement(case, "failure", message=c.reason)
        elif c.status == "INCONCLUSIVE":
            ET.SubElement(case, "skipped", message=c.reason)
        ET.SubElement(case, "system-out").text = (
            f"baseline {_value(c.baseline, c.metric)}, candidate {_value(c.candidate, c.metric)}, change {_change(c)}"
        )
    ET.indent(suite)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
