"""The report's "model" section: a fitted run's engine model (``RUN/engine.toml``, written by ``llmload fit``).

:func:`model_report` reads the run directory's ``engine.toml`` and gives report.json's ``model`` key
(``{}`` when the run has no engine file: the report then stays as it was)::

    "model": {"source", "requests", "steps", "residual_rel_rms", "replay_worst_p50_error", "warnings",
              "params": [{"name", "value", "how", "uncertainty"}],    # how: measured | fitted | assumed
              "fitted_range": {"max_concurrency", "max_input_tokens", "max_output_tokens"},
              "residuals": [{"step", "users", "rate", "class", "metric", "measured_ms", "replayed_ms", "error"}],
              "error": str}                                           # only when engine.toml is unreadable

``uncertainty`` is the standard error of a fitted parameter, else its note (for an assumed one: the
signal that would pin it). :func:`model_html` and :func:`model_markdown` write the section (the
parameter table, the residuals and one chart of measured vs replayed TTFT p50 per step); both give
nothing without a ``model`` key. The file is read as plain TOML (:mod:`llmload.capacity.engine_file`
writes it; the report layer does not import the capacity package).
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path
from typing import Any, TypedDict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from llmload.report import fmt
from llmload.report.svg import Chart, Line, render_chart
from llmload.report.theme import PALETTE

__all__ = ["ENGINE_FILE", "ModelParam", "Residual", "model_chart", "model_html", "model_markdown", "model_report"]

ENGINE_FILE = "engine.toml"
_METRICS = ("ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90")
_HEADER = ("source", "requests", "steps", "residual_rel_rms", "replay_worst_p50_error", "warnings")


class ModelParam(TypedDict):
    name: str
    value: Any  # float | int | bool | str, as engine.toml holds it
    how: str
    uncertainty: str


#: one residual row: a step and class, one metric (``ttft_p50``, ``ttft_p90``, ``tpot_p50``, ``tpot_p90``)
Residual = TypedDict("Residual", {"step": Any, "users": Any, "rate": Any, "class": Any, "metric": str,
                                  "measured_ms": Any, "replayed_ms": Any, "error": Any})  # fmt: skip


def _uncertainty(p: dict[str, Any]) -> str:
    if isinstance(p.get("stderr"), (int, float)):
        return f"± {p['stderr']:.3g}" + (f" ({p['note']})" if p.get("note") else "")
    return str(p.get("note") or "")


def _residuals(quality: list[Any]) -> list[Residual]:
    rows: list[Residual] = []
    for q in quality:
        if not isinstance(q, dict):
            continue
        for metric in _METRICS:
            if q.get(f"{metric}_ms") is None and q.get(f"{metric}_replayed_ms") is None:
                continue
            rows.append({"step": q.get("step"), "users": q.get("users"), "rate": q.get("rate"), "class": q.get("class"),
                         "metric": metric, "measured_ms": q.get(f"{metric}_ms"),
                         "replayed_ms": q.get(f"{metric}_replayed_ms"), "error": q.get(f"{metric}_error")})  # fmt: skip
    return rows


def model_report(run_dir: str | Path) -> dict[str, Any]:
    """``{"model": ...}`` from ``run_dir/engine.toml``; ``{}`` when there is none."""
    path = Path(run_dir) / ENGINE_FILE
    if not path.is_file():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return {"model": {"error": f"{path}: not a readable engine file ({e}); run `llmload fit` again"}}
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    params: list[ModelParam] = [
        {"name": name, "value": p.get("value"), "how": str(p.get("how") or ""), "uncertainty": _uncertainty(p)}
        for name, p in prov.items()
        if isinstance(p, dict) and name != "fitted_range"
    ]
    quality = doc.get("quality") if isinstance(doc.get("quality"), list) else []
    model: dict[str, Any] = {k: doc.get(k) for k in _HEADER}
    model |= {"params": params, "fitted_range": prov.get("fitted_range") or {}, "residuals": _residuals(quality)}
    return {"model": model}


def _step_tick(row: dict[str, Any]) -> str:
    return f"{row['rate']:g}" if row.get("rate") is not None else str(row.get("users"))


def model_chart(model: dict[str, Any]) -> Chart | None:
    """Measured vs replayed TTFT p50 per step (every class together); None without such rows."""
    every = [r for r in model.get("residuals") or [] if r["metric"] == "ttft_p50"]
    classes = sorted({r["class"] for r in every} - {"(all)"})
    # one class: its own rows; a mix: every class together, whose median can jump between the classes
    # (the per-class rows in the table are the fit's real test; docs/capacity.md)
    rows = [r for r in every if r["class"] == (classes[0] if len(classes) == 1 else "(all)")]
    rows.sort(key=lambda r: r.get("step") or 0)
    if not rows:
        return None
    rate = any(r.get("rate") is not None for r in rows)
    return Chart(
        title="TTFT p50 per step: measured vs replayed" + ("" if len(classes) == 1 else " (all classes; see the table per class)"),
        x_label="offered rate, req/s (rate ladder step)" if rate else "concurrent users (ladder step)",
        y_label="TTFT p50 (ms)",
        lines=[
            Line("measured", [(i, r["measured_ms"]) for i, r in enumerate(rows)], PALETTE["p50"], markers=True),
            Line(
                "replayed (model)",
                [(i, r["replayed_ms"]) for i, r in enumerate(rows)],
                PALETTE["throughput"],
                dashed=True,
                markers=True,
            ),
        ],  # fmt: skip
        x_ticks=[(i, _step_tick(r)) for i, r in enumerate(rows)],
        x_range=(-0.5, len(rows) - 0.5),
    )


def _summary(m: dict[str, Any]) -> str:
    parts = [
        f"Fitted by `llmload fit` on {m.get('requests')} requests in {m.get('steps')} step(s) of {m.get('source')}"
    ]
    if m.get("residual_rel_rms") is not None:
        parts.append(f"relative RMS residual {fmt.pct(m['residual_rel_rms'])}")
    if m.get("replay_worst_p50_error") is not None:
        parts.append(f"worst per-step p50 replay error {fmt.pct(m['replay_worst_p50_error'])}")
    rng = m.get("fitted_range") or {}
    if rng:
        parts.append("fitted range: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in rng.items()))
    return "; ".join(parts)


def _param_cells(p: ModelParam) -> list[str]:
    return [p["name"], fmt.value(p["value"]), p["how"], p["uncertainty"]]


def _residual_cells(r: dict[str, Any]) -> list[str]:
    where = f"{r['rate']:g} req/s" if r.get("rate") is not None else fmt.users(r.get("users"))
    step = f"{r.get('step')} ({where})"
    return [step, str(r.get("class")), r["metric"].upper().replace("_P", " p"), fmt.ms(r.get("measured_ms")),
            fmt.ms(r.get("replayed_ms")), fmt.signed_pct(r.get("error"))]  # fmt: skip


_PARAM_HEAD = ["parameter", "value", "how obtained", "uncertainty / what would pin it"]
_RESIDUAL_HEAD = ["step", "class", "metric", "measured", "replayed", "error"]


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    e = lambda v: escape(str(v), quote=True)  # noqa: E731
    th = "".join(f"<th>{e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="tablewrap"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'


def model_html(report: dict[str, Any]) -> str:
    """The HTML section ("" without a ``model`` key)."""
    m = report.get("model")
    if not m:
        return ""
    e = lambda v: escape(str(v), quote=True)  # noqa: E731
    if m.get("error"):
        return f'<section><h2>Engine model</h2><p class="note">⚠ {e(m["error"])}</p></section>'
    chart = model_chart(m)
    figure = (f'<div class="charts"><figure><figcaption>{e(chart.title)}</figcaption>'
              f"{render_chart(chart, standalone=False)}</figure></div>" if chart else "")  # fmt: skip
    warn = f'<p class="note">⚠ {e(m["warnings"])}</p>' if m.get("warnings") else ""
    return (f'<section><h2>Engine model</h2><p class="note">{e(_summary(m))}</p>{warn}'
            f"<h3>Parameters</h3>{_html_table(_PARAM_HEAD, [_param_cells(p) for p in m['params']])}"
            f"<h3>Fit residuals: measured vs replayed</h3>{figure}"
            f"{_html_table(_RESIDUAL_HEAD, [_residual_cells(r) for r in m['residuals']])}</section>")  # fmt: skip


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return out + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def model_markdown(report: dict[str, Any]) -> list[str]:
    """The Markdown section's lines ([] without a ``model`` key)."""
    m = report.get("model")
    if not m:
        return []
    if m.get("error"):
        return ["## Engine model", "", f"- warning: {m['error']}", ""]
    lines = ["## Engine model", "", _summary(m) + ".", ""]
    lines += [f"- warning: {m['warnings']}", ""] if m.get("warnings") else []
    lines += ["### Parameters", "", *_md_table(_PARAM_HEAD, [_param_cells(p) for p in m["params"]]), ""]
    lines += ["### Fit residuals: measured vs replayed", ""]
    return lines + [*_md_table(_RESIDUAL_HEAD, [_residual_cells(r) for r in m["residuals"]]), ""]
