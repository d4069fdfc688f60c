"""Repeated runs (``--repeat N``) written out: the aggregate's median and spread per metric, the safe level.

The figures come from the summary's ``repeat`` block (:mod:`llmload.results.repeat_aggregate`); this
module only writes them: the console table (:func:`render_repeat`), report.json's ``repeat``
(:func:`repeat_data`) and its Markdown and HTML sections, and ``compare``'s lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any, TextIO

from llmload.jsonvalue import Json
from llmload.results.repeat_aggregate import METRICS

__all__ = ["render_repeat", "repeat_data", "repeat_html", "repeat_lines", "repeat_markdown", "repeat_of"]

#: the metrics the console shows per scope (the rest are in the summary and report.json)
SHOWN = ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "itl_p50_ms", "e2e_p50_ms", "e2e_p99_ms",
         "error_rate", "output_tokens_per_s")  # fmt: skip


def repeat_of(extra: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``repeat`` block of a result's extra keys (None: not a repeated run)."""
    rep = extra.get("repeat")
    return rep if isinstance(rep, Mapping) and isinstance(rep.get("aggregate"), Mapping) else None


def _num(v: Any) -> str:
    if not isinstance(v, (int, float)):
        return "-"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"


def _cv(v: Any) -> str:
    return f"{v * 100:.1f} %" if isinstance(v, (int, float)) else "-"


def repeat_lines(rep: Mapping[str, Any], metrics: tuple[str, ...] = SHOWN) -> list[tuple[str, str, str, str, str, str]]:
    """(scope, metric, median, [min, max], CV, values) per scope and metric shown."""
    rows = []
    for scope, figures in (rep.get("aggregate") or {}).items():
        for key in metrics:
            f = figures.get(key)
            if isinstance(f, Mapping):
                rows.append((scope, key, _num(f.get("median")), f"[{_num(f.get('min'))}, {_num(f.get('max'))}]",
                             _cv(f.get("cv")), " ".join(_num(v) for v in f.get("values") or ())))  # fmt: skip
    return rows


def headline(rep: Mapping[str, Any]) -> str:
    """``repeated 3 runs (seeds 7..9): safe 8 users in 3 of 3 runs``."""
    seeds = rep.get("seeds") or []
    text = f"repeated {rep.get('runs')} runs" + (f" (seeds {seeds[0]}..{seeds[-1]})" if seeds else "")
    safe = rep.get("safe")
    if isinstance(safe, Mapping) and safe.get("text"):
        text += f": {safe['text']}"
    steady = rep.get("steady")
    if isinstance(steady, Mapping) and steady.get("text"):
        text += f"; {steady['text']}"
    return text


def render_repeat(rep: Mapping[str, Any] | None, out: TextIO) -> None:
    """The aggregate table: per scope and metric the median, the range and CV across repetitions."""
    if not rep:
        return
    out.write(
        f"\n{headline(rep)}\n  {'scope':<12} {'metric':<20} {'median':>10}  {'[min, max]':<22} {'CV':>8}  per run\n"
    )
    for scope, key, median, rng, cv, values in repeat_lines(rep):
        out.write(f"  {scope:<12} {key:<20} {median:>10}  {rng:<22} {cv:>8}  {values}\n")


def repeat_data(extra: Mapping[str, Any]) -> dict[str, Json] | None:
    """report.json's ``repeat``: the headline and every aggregated metric's row (None: not repeated)."""
    rep = repeat_of(extra)
    if rep is None:
        return None
    rows = [{"scope": s, "metric": k, "median": m, "range": r, "cv": c, "values": v}
            for s, k, m, r, c, v in repeat_lines(rep, METRICS)]  # fmt: skip
    return {"headline": headline(rep), "runs": rep.get("runs"), "safe": rep.get("safe"), "rows": rows}


def repeat_markdown(r: Mapping[str, Any]) -> list[str]:
    t = r.get("repeat")
    if not t:
        return []
    out = [f"- {t['headline']}"]
    out += [f"  - {x['scope']} `{x['metric']}`: median {x['median']} {x['range']}, CV {x['cv']} (per run: {x['values']})"
            for x in t["rows"] if x["metric"] in SHOWN]  # fmt: skip
    return out


def repeat_html(r: Mapping[str, Any]) -> str:
    t = r.get("repeat")
    if not t:
        return ""
    e = lambda v: escape(str(v), quote=True)  # noqa: E731
    body = "".join(f"<tr><td>{e(x['scope'])}</td><td><code>{e(x['metric'])}</code></td><td>{e(x['median'])}</td>"
                   f"<td>{e(x['range'])}</td><td>{e(x['cv'])}</td><td>{e(x['values'])}</td></tr>"
                   for x in t["rows"])  # fmt: skip
    return (f'<section><h2>Repeated runs</h2><p class="note">{e(t["headline"])}. The median across repetitions, '
            "their range and coefficient of variation.</p><div class=\"tablewrap\"><table><thead><tr><th>scope</th>"
            "<th>metric</th><th>median</th><th>[min, max]</th><th>CV</th><th>per run</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div></section>")  # fmt: skip


#: the overall metrics ``llmload compare`` shows side by side for repeated runs
COMPARED = (
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "tpot_p99_ms",
    "e2e_p99_ms",
    "error_rate",
    "output_tokens_per_s",
)


def compare_repeat(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Json] | None:
    """``compare``'s ``repeat`` (runs' extra keys; None when neither was repeated): each side's headline and, per
    overall metric, the median and [min, max] across repetitions (a single run: its value as min = max)."""
    ra, rb = repeat_of(a), repeat_of(b)
    if ra is None and rb is None:
        return None

    def side(rep: Mapping[str, Any] | None, key: str) -> dict[str, Json] | None:
        f = ((rep or {}).get("aggregate") or {}).get("overall", {}).get(key)
        return {k: f.get(k) for k in ("median", "min", "max", "cv")} if isinstance(f, Mapping) else None

    rows = [{"metric": k, "a": side(ra, k), "b": side(rb, k)} for k in COMPARED]
    return {"a": headline(ra) if ra else "a single run", "b": headline(rb) if rb else "a single run",
            "rows": [r for r in rows if r["a"] or r["b"]]}  # fmt: skip


def compare_lines(c: Mapping[str, Any] | None) -> list[str]:
    """The repeated runs' block of ``compare``'s console and Markdown (nothing when neither run was repeated)."""
    if not c:
        return []

    def cell(f: Mapping[str, Any] | None) -> str:
        return f"{_num(f['median'])} [{_num(f['min'])}, {_num(f['max'])}]" if f else "-"

    out = [f"repeated runs: A {c['a']}; B {c['b']}", "  overall median [min, max] across repetitions, A -> B:"]
    out += [f"  {r['metric']:<20} {cell(r['a'])} -> {cell(r['b'])}" for r in c["rows"]]
    return out
