"""How a percentile and its 95 % interval read: ``p99 812 ms (±9 %)``, or ``p99 812 ms (n=74: too few for a p99)``.

The intervals are the summary's ``ci95`` (:mod:`llmload.metrics.confidence`: order statistics
of the histogram, exact binomial ranks, distribution-free); ``±`` is the wider side of the
interval relative to the percentile. The console prints :func:`render_intervals` below its
table; report.json carries :func:`interval_rows` as ``intervals``::

    [{"name": class | "overall", "metric": "ttft" | "tpot" | "itl" | "e2e", "count": n,
      "p50" | "p90" | "p99": {"value": ms, "ci95": [lo, hi] | null, "pm": share | null, "text": str}}]

and :func:`intervals_html` / :func:`intervals_markdown` write it.
"""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

from llmload.jsonvalue import Json
from llmload.metrics.confidence import HEADLINE_QUANTILES, min_samples, relative_half_width, too_few_text
from llmload.results.model import CI_LATENCIES, Latency, RunResult

__all__ = ["interval_rows", "intervals_html", "intervals_markdown", "ms_text", "percentile_text", "pm_text",
           "render_intervals"]  # fmt: skip

_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2e": "E2E"}


def ms_text(v: float) -> str:
    """``812 ms``, ``50.2 ms``, ``5.12 ms``."""
    return f"{v:.0f} ms" if abs(v) >= 100 else f"{v:.1f} ms" if abs(v) >= 10 else f"{v:.2f} ms"


def pm_text(share: float) -> str:
    """``±9 %``, ``±0.6 %``."""
    pct = share * 100
    return f"±{pct:.0f} %" if pct >= 10 else f"±{pct:.1f} %"


def percentile_text(lat: Latency, name: str) -> str | None:
    """``p99 812 ms (±9 %)`` / ``p99 812 ms (n=74: too few for a p99)``; None without a value."""
    value = getattr(lat, name)
    if value is None:
        return None
    ci = lat.interval(name)
    share = relative_half_width(value, ci)
    if share is not None:
        return f"{name} {ms_text(value)} ({pm_text(share)})"
    if ci is None and name in lat.ci95:
        return f"{name} {ms_text(value)} ({too_few_text(lat.count, name)})"
    return f"{name} {ms_text(value)}"


def render_intervals(result: RunResult, out: TextIO) -> None:
    """Per class and overall, each headline latency's p50/p90/p99 with its interval (runs that have them)."""
    rows = [*result.classes.items(), ("overall", result.overall)]
    if not any(s.lat(m).ci95 for _, s in rows for m in CI_LATENCIES):
        return  # an old summary without intervals
    need = ", ".join(f"{n} {min_samples(q)}" for n, q in HEADLINE_QUANTILES.items())
    out.write(f"95 % intervals (order statistics, distribution-free; ± the wider side; fewest samples: {need})\n")
    for name, s in rows:
        if not s.ok and name != "overall":
            continue
        label = name
        for m in CI_LATENCIES:
            parts = [t for q in HEADLINE_QUANTILES if (t := percentile_text(s.lat(m), q)) is not None]
            if parts:
                out.write(f"  {label:<12} {_NAMES[m]:<5} {', '.join(parts)}\n")
                label = ""


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def interval_rows(result: RunResult) -> list[dict[str, Json]]:
    """The report's ``intervals``: one row per class (and overall) and headline latency, with each
    percentile's value, interval and ``±`` (ms; ``text`` as the console writes it)."""
    out = []
    for name, s in [*result.classes.items(), ("overall", result.overall)]:
        for m in CI_LATENCIES:
            lat = s.lat(m)
            if not lat.ci95 or lat.count == 0:
                continue
            row: dict[str, Json] = {"name": name, "metric": m, "count": lat.count}
            for q in HEADLINE_QUANTILES:
                value, ci = getattr(lat, q), lat.interval(q)
                share = relative_half_width(value, ci)
                row[q] = {"value": _r(value), "ci95": [_r(ci[0]), _r(ci[1])] if ci is not None else None,
                          "pm": round(share, 4) if share is not None else None, "text": percentile_text(lat, q)}  # fmt: skip
            out.append(row)
    return out


_NOTE = ("95 % confidence interval of each percentile: order statistics of the histogram, exact binomial ranks, "
         "distribution-free; ± is the wider side relative to the percentile. A p50 needs at least 6 samples, "
         "a p90 36, a p99 368.")  # fmt: skip


def _cells(row: dict[str, Any]) -> list[str]:
    return [(row[q].get("text") or "-").removeprefix(f"{q} ") for q in HEADLINE_QUANTILES]


def intervals_markdown(r: dict[str, Any]) -> list[str]:
    """The record's intervals table; [] for a report without them."""
    rows = r.get("intervals") or []
    if not rows:
        return []
    out = ["## Confidence of the percentiles", "", _NOTE, "", "| class | metric | p50 | p90 | p99 |", "|---|---|---:|---:|---:|"]
    out += [f"| {row['name']} | {_NAMES[row['metric']]} | " + " | ".join(_cells(row)) + " |" for row in rows]
    return [*out, ""]


def intervals_html(r: dict[str, Any]) -> str:
    """The report's intervals section; "" without them."""
    rows = r.get("intervals") or []
    if not rows:
        return ""
    body = "".join(f"<tr><td>{escape(str(row['name']))}</td><td>{_NAMES[row['metric']]}</td>"
                   + "".join(f"<td>{escape(c)}</td>" for c in _cells(row)) + "</tr>" for row in rows)  # fmt: skip
    return (f'<section><h2>Confidence of the percentiles</h2><p class="note">{escape(_NOTE)}</p><div class="tablewrap">'
            "<table><thead><tr><th>class</th><th>metric</th><th>p50</th><th>p90</th><th>p99</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div></section>")  # fmt: skip
