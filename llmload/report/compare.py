"""Before / after: two runs side by side, per ladder step (matched by users, a rate ladder's by offered rate) and overall.

:func:`compare_runs` returns the comparison as data (``llmload.compare/1``)::

    {"schema": "llmload.compare/1",
     "a": {"name", "started_at", "safe_users", "safe_rate", "recommended_limit", "recommended_rate", "rate_ladder",
           "binding", "status", "sessions"?},  "b": {...},    # rate ladder: safe_rate and recommended_rate (req/s)
                                                   # are its levels; "sessions": true only for a ladder over sessions
     "notes": [str],                      # settings that differ (model, profile, cap, arrivals, ladder, step time)
     "rows": [{"scope": "overall" | "N users" | "N sessions", "users": int | null, "metric", "unit",
               "a", "b", "delta", "pct", "change": "better" | "worse" | "same" | null}]}

Metrics: TTFT p50/p99, TPOT p50/p99 (ms), output tok/s, error rate. ``pct`` is
``(b - a) / a`` (the error rate's ``delta`` is shown in percentage points); ``change`` reads it in the metric's direction (lower latency and error
rate, higher tok/s are better) with :data:`SAME_WITHIN` as "same". A step present in one
run only gets a row with the other side null. A ladder over sessions (:mod:`llmload.analysis.sessions`: every
request a conversation or agent session's turn) is named in sessions: its side says ``"sessions": true``, its
safe step reads as its max sessions and its recommended limit as requests in flight; when both runs are, the
steps' scopes read ``N sessions``. The writers take the comparison and a
text stream: :func:`write_console`, :func:`write_markdown`, :func:`write_json`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypedDict

import orjson

from llmload.analysis.sessions import result_over_sessions
from llmload.jsonvalue import Json
from llmload.report import fmt
from llmload.report.data import row
from llmload.report.repeat_table import compare_lines, compare_repeat
from llmload.results.model import RunResult, Stats, StepResult
from llmload.results.setup import ArrivalSetup, LadderSetup, RunSetup, TraceSetup

if TYPE_CHECKING:
    from llmload.rundir import Run

__all__ = ["COMPARE_SCHEMA", "METRICS", "SAME_WITHIN", "Comparison", "Row", "Side", "compare_runs", "write_console", "write_json", "write_markdown"]

COMPARE_SCHEMA = "llmload.compare/1"
#: Relative changes within this are reported as "same" (run-to-run noise).
SAME_WITHIN = 0.05
#: (row key, label, unit, higher is better)
METRICS = (
    ("ttft_p50", "TTFT p50", "ms", False),
    ("ttft_p99", "TTFT p99", "ms", False),
    ("tpot_p50", "TPOT p50", "ms", False),
    ("tpot_p99", "TPOT p99", "ms", False),
    ("tok_s", "output tok/s", "tok/s", True),
    ("error_rate", "error rate", "ratio", False),
)


class _SideKeys(TypedDict):
    """One run of a comparison: its name and start, and what its verdict said."""

    name: str
    started_at: str | None
    safe_users: int | None
    safe_rate: float | None
    recommended_limit: int | None
    recommended_rate: float | None
    rate_ladder: bool
    binding: str | None
    status: str | None


class Side(_SideKeys, total=False):
    """One run of a comparison (:class:`_SideKeys`); ``sessions`` present (true) only for a ladder over sessions."""

    sessions: bool


class Row(TypedDict):
    """One metric of one scope: A's and B's figures, the change and its verdict (``same``/``better``/``worse``)."""

    scope: str
    users: int | None
    metric: str
    unit: str
    a: float | None
    b: float | None
    delta: float | None
    pct: float | None
    change: str | None


class Comparison(TypedDict):
    schema: str
    a: Side
    b: Side
    notes: list[str]
    rows: list[Row]
    repeat: dict[str, Any] | None


def _side(run: Run) -> Side:
    r = run.result
    v = r.judgement.verdict if r.judgement is not None else None
    side: Side = {
        "name": run.name,
        "started_at": r.started_at,
        "safe_users": v.safe_users if v else None,
        "safe_rate": v.safe_rate if v else None,
        "recommended_limit": v.recommended_limit if v else None,
        "recommended_rate": v.recommended_rate if v else None,
        "rate_ladder": bool(v and v.rate_ladder),
        "binding": v.breach.metric if v and v.breach else None,
        "status": v.status if v else None,
    }
    if result_over_sessions(r):
        side["sessions"] = True
    return side


def _steps_by_users(result: RunResult) -> dict[tuple[float, int], StepResult]:
    """Ladder steps keyed by (offered rate or 0, users) (the last step of a given size wins; the pre-run is left out).

    A rate ladder's steps match by their offered rate (and cap), a concurrency ladder's by users.
    """
    return {(st.rate_offered or 0.0, st.users): st for st in result.steps if st.index >= 0}


def _change(a: float | None, b: float | None, higher_better: bool) -> tuple[float | None, float | None, str | None]:
    if a is None or b is None:
        return None, None, None
    delta = b - a
    if a == 0:
        pct = None
        same = delta == 0
    else:
        pct = delta / abs(a)
        same = abs(pct) <= SAME_WITHIN
    if same:
        return delta, pct, "same"
    return delta, pct, "better" if (delta > 0) == higher_better else "worse"


def _number(v: Json) -> float | None:
    """A row's figure (METRICS names numeric keys only: None for a missing one)."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _rows(scope: str, users: int | None, a: Stats | None, b: Stats | None) -> list[Row]:
    ra, rb = row(scope, a) if a else {}, row(scope, b) if b else {}
    out = []
    for key, label, unit, higher in METRICS:
        va, vb = _number(ra.get(key)), _number(rb.get(key))
        delta, pct, change = _change(va, vb, higher)
        out.append(Row(scope=scope, users=users, metric=label, unit=unit, a=va, b=vb,
                       delta=None if delta is None else round(delta, 6), pct=None if pct is None else round(pct, 6),
                       change=change))  # fmt: skip
    return out


def _step_name(n: int, sessions: bool) -> str:
    """A concurrency step's scope: ``8 users``, or ``8 sessions`` when both runs are ladders over sessions."""
    if not sessions:
        return fmt.users(n)
    return f"{n} session" if n == 1 else f"{n} sessions"


def compare_runs(a: Run, b: Run) -> Comparison:
    """Compare runs ``a`` (before) and ``b`` (after), :class:`~llmload.rundir.Run` objects."""
    sa, sb = _steps_by_users(a.result), _steps_by_users(b.result)
    sessions = result_over_sessions(a.result) and result_over_sessions(b.result)
    rows = _rows("overall", None, a.result.overall, b.result.overall)
    for key in sorted(set(sa) | set(sb)):
        ra, rb = sa.get(key), sb.get(key)
        rate, users = key
        scope = f"{fmt.rate(rate)} at {fmt.users(users)}" if rate else _step_name(users, sessions)
        rows += _rows(scope, users, ra.overall if ra else None, rb.overall if rb else None)
    notes = _differences(a.result.setup, b.result.setup)
    return {"schema": COMPARE_SCHEMA, "a": _side(a), "b": _side(b), "notes": notes, "rows": rows,
            "repeat": compare_repeat(a.result.extra, b.result.extra)}


#: Settings that make two runs' numbers incomparable when they differ: (label, getter of the run's setup).
_SETTINGS: tuple[tuple[str, Callable[[RunSetup], Any]], ...] = (
    ("model", lambda s: s.model),
    ("workload profile", lambda s: s.workload),
    ("max tokens cap", lambda s: s.max_tokens_cap),
    ("arrival", lambda s: _arrivals(s.arrival)),
    ("ladder", lambda s: _ladder(s.ladder)),
    ("step time", lambda s: s.ladder.step_s if s.ladder is not None else None),
)


def _arrivals(a: ArrivalSetup) -> str:
    """How requests arrived: closed loop, an open-loop process and rate, or a trace replay (file, speedup, limit).

    Open-loop latencies run from the intended send time, and a trace replaces the profile: a
    closed run beside either does not compare like for like.
    """
    if a.mode == "trace":
        t = a.trace or TraceSetup()
        limit = f", first {t.limit}" if t.limit else ""
        return f"trace {Path(str(t.file)).name} at speedup {t.speedup:g}{limit}"
    if a.mode != "closed" and a.rate is not None:
        return f"{a.mode} {a.rate:g} req/s" + (f" burstiness {a.burstiness:g}" if a.burstiness else "")
    return a.mode


def _ladder(ladder: LadderSetup | None) -> str | list[int] | None:
    """A concurrency ladder's user counts; a rate ladder's rates and cap (its levels are the cap repeated)."""
    if ladder is not None and ladder.rates:
        return fmt.ladder_levels(ladder.to_dict(), sep=",")
    return list(ladder.levels) if ladder is not None and ladder.levels else None


def _differences(a: RunSetup, b: RunSetup) -> list[str]:
    """One line per setting that differs between the runs (numbers may not compare like for like)."""
    out = []
    for label, get in _SETTINGS:
        va, vb = get(a), get(b)
        if va != vb:
            show = lambda v: ",".join(map(str, v)) if isinstance(v, list) else str(v)  # noqa: E731
            out.append(f"{label} differs: {show(va)} (A) vs {show(vb)} (B)")
    return out


def _value(v: float | None, unit: str) -> str:
    if unit == "ratio":
        return fmt.pct(v, 2)
    return fmt.ms(v, unit=False) if unit == "ms" else fmt.num(v)


def _delta(r: Row) -> str:
    if r["delta"] is None:
        return fmt.DASH
    if r["unit"] == "ratio":  # percentage points
        return f"{r['delta'] * 100:+.2f} pp" if r["delta"] else "0"
    return fmt.signed(r["delta"])


def _cells(r: Row) -> list[str]:
    unit = f" ({r['unit']})" if r["unit"] == "ms" else ""
    return [
        f"{r['metric']}{unit}",
        _value(r["a"], r["unit"]),
        _value(r["b"], r["unit"]),
        _delta(r),
        fmt.signed_pct(r["pct"]),
        r["change"] or "",
    ]


def _safe(side: Side, value: str) -> str:
    """A safe concurrency or rate, marked when its verdict was inconclusive (too few requests to stand on)."""
    return f"{value} (inconclusive)" if side.get("status") == "inconclusive" and value != fmt.DASH else value


def _level(side: Side) -> str:
    """A side's safe level where the other is a ladder over sessions: ``40 sessions`` or ``8 users``."""
    n = side["safe_users"]
    if n is None or not side.get("sessions"):
        return fmt.users(n)
    return f"{n} session" if n == 1 else f"{n} sessions"


def _headline(c: Comparison) -> list[str]:
    a, b = c["a"], c["b"]
    out = [f"A (before): {a['name']}  {a['started_at'] or ''}".rstrip(), f"B (after):  {b['name']}  {b['started_at'] or ''}".rstrip()]
    if a.get("rate_ladder") or b.get("rate_ladder") or a.get("safe_rate") is not None or b.get("safe_rate") is not None:
        out.append(f"safe rate: {_safe(a, fmt.rate(a.get('safe_rate')))} -> {_safe(b, fmt.rate(b.get('safe_rate')))}; "
                   f"recommended rate limit {fmt.rate(a.get('recommended_rate'))} -> {fmt.rate(b.get('recommended_rate'))}; "
                   f"breached first {fmt.metric_name(a['binding'])} -> {fmt.metric_name(b['binding'])}")  # fmt: skip
    elif a.get("sessions") or b.get("sessions"):
        out.append(
            f"max sessions: {_safe(a, _level(a))} -> {_safe(b, _level(b))}; "
            f"recommended gateway limit {fmt.num(a['recommended_limit'])} -> {fmt.num(b['recommended_limit'])} requests in flight; "
            f"breached first {fmt.metric_name(a['binding'])} -> {fmt.metric_name(b['binding'])}"
        )
    elif a["safe_users"] is not None or b["safe_users"] is not None:
        out.append(
            f"safe concurrency: {_safe(a, fmt.num(a['safe_users']))} -> {_safe(b, fmt.num(b['safe_users']))} users; "
            f"recommended limit {fmt.num(a['recommended_limit'])} -> {fmt.num(b['recommended_limit'])}; "
            f"breached first {fmt.metric_name(a['binding'])} -> {fmt.metric_name(b['binding'])}"
        )
    return out + [f"note: {n}" for n in c.get("notes") or []]


_HEAD = ["metric", "A", "B", "delta", "delta %", "change"]


def _matched(c: Comparison) -> str:
    """How steps were paired: by users, or by offered rate when both runs are rate ladders."""
    if c["a"].get("rate_ladder") and c["b"].get("rate_ladder"):
        return "offered rate"
    return "sessions" if c["a"].get("sessions") and c["b"].get("sessions") else "users"


def write_console(c: Comparison, out: TextIO) -> None:
    """A plain-text table, one block per scope (overall, then each step)."""
    out.write("llmload compare\n" + "\n".join(_headline(c)) + "\n")
    body = [(r["scope"], _cells(r)) for r in c["rows"]]
    widths = [max(len(h), *(len(cells[i]) for _, cells in body)) for i, h in enumerate(_HEAD)]
    scope_w = max(len("scope"), *(len(s) for s, _ in body))

    def line(scope: str, cells: list[str]) -> str:
        parts = [cells[0].ljust(widths[0])] + [cells[i].rjust(widths[i]) for i in range(1, 5)] + [cells[5]]
        return (scope.ljust(scope_w) + "  " + "  ".join(parts)).rstrip()

    header = line("scope", _HEAD)
    out.write("\n" + header + "\n" + "-" * len(header) + "\n")
    last = None
    for scope, cells in body:
        if last is not None and scope != last:
            out.write("\n")
        out.write(line(scope if scope != last else "", cells) + "\n")
        last = scope
    out.write(f"\ndelta = B - A; delta % relative to A; 'same' within {SAME_WITHIN * 100:g} %; steps matched by {_matched(c)}\n")
    if lines := compare_lines(c.get("repeat")):
        out.write("\n" + "\n".join(lines) + "\n")


def write_markdown(c: Comparison, out: TextIO) -> None:
    """A Markdown table (scope column first), ready to paste into the report's effect section."""
    lines = ["## Before / after", ""] + [f"- {h}" for h in _headline(c)] + [""]
    lines += ["| scope | " + " | ".join(_HEAD) + " |", "|---|---|" + "---:|" * 4 + "---|"]
    last = None
    for r in c["rows"]:
        cells = [r["scope"] if r["scope"] != last else "", *_cells(r)]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        last = r["scope"]
    lines += ["", f"delta = B - A; delta % relative to A; 'same' within {SAME_WITHIN * 100:g} %; steps matched by {_matched(c)}."]
    if rep := compare_lines(c.get("repeat")):
        lines += ["", *(f"- {x.strip()}" for x in rep)]
    out.write("\n".join(lines) + "\n")


def write_json(c: Comparison, out: TextIO) -> None:
    out.write(orjson.dumps(c, option=orjson.OPT_INDENT_2).decode() + "\n")
