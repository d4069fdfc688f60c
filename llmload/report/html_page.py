"""The HTML report: one self-contained page (inline CSS, inline SVG charts, no script, no URLs).

Sections, in reading order: the verdict (safe concurrency, recommended limit, the metric
that broke first, baseline, confidence), the diagnosis (findings with their evidence and
what to change), latency and throughput vs concurrency, the ladder steps, the arrivals of an
open-loop run (:mod:`llmload.report.arrivals`), engine and GPU signals over time, the request
classes, and the run's details. A rate ladder's steps, limits and per-class levels are named
by offered rate, never by the ``-u`` cap its steps share. Sections without data say
what would fill them. :func:`write_html` takes report data from
:func:`~llmload.report.data.build_report` and a text stream.
"""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

from llmload.analysis.diagnose import RUN_FAILED
from llmload.report import fmt
from llmload.report.arrivals import arrival_html, plain_headline
from llmload.report.charts import ladder_charts, timeline_charts
from llmload.report.intervals import intervals_html
from llmload.report.model_section import model_html
from llmload.report.repeat_table import repeat_html
from llmload.report.steady_lines import steady_html
from llmload.report.svg import Chart, render_chart
from llmload.report.theme import CSS
from llmload.report.threshold_table import thresholds_html
from llmload.results.setup import DEFAULT_DEGRADATION

__all__ = ["render_html", "write_html"]


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _card(key: str, value: str, detail: str = "") -> str:
    d = f'<div class="d">{_e(detail)}</div>' if detail else ""
    return f'<div class="card"><div class="k">{_e(key)}</div><div class="v">{_e(value)}</div>{d}</div>'


_NO_VERDICT = {"no_baseline": "No baseline", "insufficient_data": "Not enough data", "no_ladder": "No ladder",
               "inconclusive": "Inconclusive: too little evidence for a safe-concurrency verdict"}


def _headline(v: dict[str, Any] | None) -> tuple[str, str, str]:
    """(headline, the sentence under it, CSS class) of a ladder run's verdict."""
    if not v:
        return "No verdict", "The summary has ladder steps but no verdict (the analysis did not run).", "none"
    if "safe_rate" in v and v.get("status") in ("ok", "breach"):  # a rate ladder
        head = f"Safe rate: {fmt.rate(v['safe_rate'])}" if v.get("safe_rate") is not None else "No safe rate"
        if v.get("status") == "ok":
            return head + " (the top step)", "No limit was broken; the service may hold more: extend --rate-ladder.", "ok"
        return head, fmt.breach_sentence(v.get("breach") or {}), "breach"
    if v.get("status") == "ok":
        sub = f"No limit was broken up to {fmt.users(v.get('top_users'))}; the service may hold more: extend --ladder."
        return f"Safe concurrency: {fmt.users(v.get('safe_users'))} (the top step)", sub, "ok"
    if v.get("status") == "breach":
        breach = v.get("breach") or {}
        also = ", ".join(fmt.metric_name(m) for m in breach.get("also") or [])
        sub = fmt.breach_sentence(breach) + (f" Also over its limit: {also}." if also else "")
        head = f"Safe concurrency: {fmt.users(v['safe_users'])}" if v.get("safe_users") else "No safe step"
        return head, sub, "breach"
    why = v.get("note") or (v.get("confidence") or {}).get("note") or "The ladder did not give enough requests to judge."
    head = _NO_VERDICT.get(v.get("status") or "", str(v.get("status")))
    return head.replace("safe-concurrency", "safe-rate") if "safe_rate" in v else head, why, "none"


def _rate_detail(v: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    """Under a rate ladder's safe rate: its -u cap, and its confidence band in offered rates."""
    detail = f"offered, at the -u cap of {fmt.users(v.get('top_users'))}"
    band = fmt.rate_band(steps, (v.get("confidence") or {}).get("band_steps"))
    return detail + (f"; band {band}" if band else "")


def _cards(v: dict[str, Any] | None, base: dict[str, Any], steps: list[dict[str, Any]], e2e: bool = False) -> list[str]:
    cards, unit = [], "sessions" if any("sessions" in s for s in steps) else "users"  # a ladder over sessions
    if v:
        band = (v.get("confidence") or {}).get("band_users") or []
        band_text = f"band {band[0]}–{band[1]} {unit}" if len(band) == 2 and None not in band else ""
        breach, p99 = v.get("breach") or {}, v.get("p99") or {}
        if "safe_rate" in v:  # a rate ladder: every step ran at the same -u cap, so its users say nothing
            safe = _card("Safe rate", fmt.rate(v.get("safe_rate")), _rate_detail(v, steps))
            limit = _card("Recommended limit", fmt.rate(v.get("recommended_rate")), "gateway rate limit")
        else:
            label = "Safe sessions" if unit == "sessions" else "Safe concurrency"  # within the baseline's limits
            safe = _card(label, fmt.step_named(steps, v.get("safe_step"), v.get("safe_users")), band_text)
            n = v.get("recommended_limit")  # a ladder over sessions: requests in flight, not sessions
            limit = _card("Recommended limit", fmt.users(n) if unit == "users" or n is None else f"{n} in flight", "gateway max concurrency")
        cards += [
            safe,
            limit,
            _card("Breached first", fmt.metric_name(breach.get("metric")) if breach else "none",
                  f"at {fmt.step_named(steps, breach.get('step'), breach.get('users'))}"
                  if breach else ""),
        ]  # fmt: skip
        if p99:
            first = f"first over: {fmt.metric_name(p99['breach'].get('metric'))}" if p99.get("breach") else "no p99 breach"
            cards.append(_card("Safe on p99", fmt.step_named(steps, p99.get("safe_step"), p99.get("safe_users")), first))
    if base:
        src = "pre-run" if base.get("source") == "pre-run" else f"step of {fmt.step_named(steps, base.get('step'), base.get('users'))}"
        limit = f"limit +{(v or {}).get('degradation', DEFAULT_DEGRADATION) * 100:g} %"
        fig1, fig2 = (("latency p50 (E2E)", "e2e_ms", "p50"), ("latency p99 (E2E)", "e2e_ms", "p99")) if e2e else (
            ("TTFT p50", "ttft_ms", "p50"), ("TPOT p50", "tpot_ms", "p50"))  # fmt: skip
        cards.append(_card(f"Baseline {fig1[0]}", fmt.ms((base.get(fig1[1]) or {}).get(fig1[2])), src))
        cards.append(_card(f"Baseline {fig2[0]}", fmt.ms((base.get(fig2[1]) or {}).get(fig2[2])), limit))
    return cards


def _verdict(r: dict[str, Any]) -> str:
    v, run = r.get("verdict"), r["run"]
    if not r.get("steps"):
        head = f"Plain run: {fmt.users(run.get('users_max'))} for {fmt.num(run.get('duration_s'))} s"
        sub = "No concurrency ladder in this run, so no safe-concurrency verdict. Run with --ladder 1,5,10,20,30,50 to find it."
        top = (r.get("findings") or [{}])[0]
        head, sub = plain_headline(r) or (head, sub)
        if top.get("id") in RUN_FAILED:
            head, sub = top.get("title") or head, "; ".join(top.get("evidence_text") or []) or sub
        return f'<section class="verdict none"><p class="headline">{_e(head)}</p><p class="sub">{_e(sub)}</p></section>'
    head, sub, cls = _headline(v)
    if sessions := r.get("sessions"):  # a ladder over sessions: the max sessions (llmload.report.session_lines)
        head, sub = sessions["headline"], "; ".join(sessions["lines"]) + "."
    notes = []
    if v and v.get("status") in ("ok", "breach"):
        if (v.get("confidence") or {}).get("note"):
            notes.append(f"Confidence: {v['confidence']['note']}.")
        if v.get("recommended_note"):
            notes.append(f"Recommended limit: {v['recommended_note']}.")
    return (
        f'<section class="verdict {cls}"><p class="headline">{_e(head)}</p><p class="sub">{_e(sub)}</p>'
        f'<div class="cards">{"".join(_cards(v, r.get("baseline") or {}, r.get("steps") or [], r.get("latency") == "e2e"))}</div>'
        + "".join(f'<p class="note">{_e(n)}</p>' for n in notes)
        + "</section>"
    )


def _findings(r: dict[str, Any]) -> str:
    findings = r.get("findings") or []
    if not findings:
        note = (
            "No finding: nothing points at a bottleneck."
            if r.get("verdict")
            else "No diagnosis in this summary (it needs a ladder run; engine and GPU metrics make it specific)."
        )
        return f'<section><h2>Diagnosis</h2><p class="note">{_e(note)}</p></section>'
    items = []
    for i, f in enumerate(findings, 1):
        conf = str(f.get("confidence") or "low")
        users = f.get("users") or next((s.get("users") for s in r.get("steps") or [] if s.get("index") == f.get("step")), None)
        step = ""
        if f.get("step") is not None and users is not None:
            step = f" · from {fmt.step_named(r.get('steps') or [], f.get('step'), users)}"
        texts = "".join(f"<li>{_e(t)}</li>" for t in f.get("evidence_text") or [])
        chips = "".join(f'<span class="chip"><b>{_e(k)}</b>{_e(fmt.value(v))}</span>' for k, v in (f.get("evidence") or {}).items() if v is not None)
        change = f'<p class="change"><strong>What to change:</strong> {_e(f["change"])}</p>' if f.get("change") else ""
        items.append(
            f'<article class="finding"><div class="head"><span class="rank">{i}.</span><h3>{_e(f.get("title") or f.get("id"))}</h3>'
            f'<span class="tag {_e(conf)}">{_e(conf)} confidence</span><span class="layer">{_e(f.get("layer") or "")}{_e(step)}</span></div>'
            f'{f"<ul>{texts}</ul>" if texts else ""}{f"<div class=chips>{chips}</div>" if chips else ""}{change}</article>'
        )
    return f'<section><h2>Diagnosis</h2><p class="note">Most likely bottleneck first; the numbers are the evidence that fired each rule.</p>{"".join(items)}</section>'


def _figures(figures: list[tuple[str, Chart]]) -> str:
    return '<div class="charts">' + "".join(f"<figure><figcaption>{_e(c)}</figcaption>{render_chart(ch, standalone=False)}</figure>" for c, ch in figures) + "</div>"


_LAT_COLS = (("TTFT p50", "ttft_p50"), ("TTFT p99", "ttft_p99"), ("TPOT p50", "tpot_p50"), ("TPOT p99", "tpot_p99"))
_E2E_COLS = (("latency p50 (E2E)", "e2e_p50"), ("latency p99 (E2E)", "e2e_p99"))  # embeddings, rerank: no TTFT/TPOT


def _lat_cells(row: dict[str, Any], limits: dict[str, Any] | None = None, cols: tuple[tuple[str, str], ...] = _LAT_COLS) -> str:
    out = []
    for _, key in cols:
        limit = (limits or {}).get(f"{key}_ms")
        bad = limit is not None and row.get(key) is not None and row[key] > limit
        out.append(f'<td{" class=bad" if bad else ""}>{_e(fmt.ms(row.get(key), unit=False))}</td>')
    return "".join(out)


def _steps(r: dict[str, Any]) -> str:
    steps = r.get("steps") or []
    if not steps:
        return ""
    limits = (r.get("verdict") or {}).get("limits") or {}
    sig_cols = [("server", "waiting", "waiting"), ("server", "running", "running"), ("server", "kv_cache_usage", "KV %"),
                ("gpu", "utilization", "GPU %"), ("gpu", "memory_bandwidth_utilization", "BW %")]  # fmt: skip
    sig_cols = [c for c in sig_cols if any(c[1] in (s.get(c[0]) or {}) for s in steps)]
    slo, cols = any("attainment" in s for s in steps), _E2E_COLS if r.get("latency") == "e2e" else _LAT_COLS
    head = "".join(f"<th>{h}</th>" for h, _ in cols)
    head += "<th>tok/s</th><th>req/s</th><th>requests</th><th>errors</th>" + ("<th>SLO attainment</th>" if slo else "")
    head += "".join(f"<th>{_e(h)}</th>" for *_, h in sig_cols)
    rows = []
    for s in steps:
        tag = f'<span class="tag {s["status"]}">{s["status"]}</span>' if s.get("status") not in (None, "ok") else ""
        err_bad = limits.get("error_rate") is not None and (s.get("error_rate") or 0) >= limits["error_rate"]
        cells = [f"<td>{_e(fmt.step_label(s))}{tag}</td>", _lat_cells(s, limits, cols)]
        cells.append(f"<td>{_e(fmt.num(s.get('tok_s')))}</td><td>{_e(fmt.num(s.get('req_s')))}</td><td>{s.get('requests', 0)}</td>")
        cells.append(f'<td{" class=bad" if err_bad else ""}>{_e(fmt.pct(s.get("error_rate")))}</td>')
        if slo:
            cells.append(f"<td>{_e(fmt.pct(s.get('attainment')))}</td>")
        for part, name, _ in sig_cols:
            v = (s.get(part) or {}).get(name)
            cells.append(f"<td>{_e(fmt.pct(v, 0) if name in ('kv_cache_usage', 'utilization', 'memory_bandwidth_utilization') else fmt.num(v))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    note = "Steady windows only (requests that started after the step's warm-up); latencies in ms; red: over the limit."
    if sig_cols:
        note += " Engine / GPU columns: means over the steady window."
    return (
        f'<section><h2>Ladder steps</h2><p class="note">{_e(note)}</p><div class="tablewrap"><table><thead><tr><th>step</th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div></section>'
    )


def _classes(r: dict[str, Any]) -> str:
    classes, overall = r.get("classes") or [], r.get("overall") or {}
    judged = any(c.get("safe_users") is not None or c.get("breach") for c in classes)
    by_rate = any("safe_rate" in c for c in classes)  # a rate ladder: per-class safe levels are offered rates
    slo, e2e = "attainment" in overall, r.get("latency") == "e2e"
    cols, what = (_E2E_COLS, "latency (E2E)") if e2e else (_LAT_COLS, "TTFT")
    head = "".join(f"<th>{h}</th>" for h, _ in cols) + f"<th>{what.split(' ')[0]} grade</th><th>tok/s</th><th>req/s</th><th>requests</th><th>share</th><th>errors</th>"
    head += ("<th>safe rate</th>" if by_rate else "<th>safe users</th>") if judged else ""
    head += "<th>good</th><th>SLO attainment</th><th>goodput req/s</th><th>goodput tok/s</th>" if slo else ""
    rows = []
    for c in [*classes, {**overall, "name": "overall", "_total": True}]:
        grade = c.get("ttft_grade") if not c.get("_total") else None
        cells = [f"<td>{_e(c.get('name'))}</td>", _lat_cells(c, None, cols), f'<td class="grade {_e(grade or "")}">{_e(grade or "-")}</td>']
        cells.append(f"<td>{_e(fmt.num(c.get('tok_s')))}</td><td>{_e(fmt.num(c.get('req_s')))}</td><td>{c.get('requests', 0)}</td>")
        cells.append(f"<td>{_e(fmt.pct(c.get('share'), 0) if not c.get('_total') else '100 %')}</td><td>{_e(fmt.pct(c.get('error_rate')))}</td>")
        if judged:
            key, show = ("safe_rate", fmt.rate) if by_rate else ("safe_users", fmt.num)
            cells.append(f"<td>{_e(show((r.get('verdict') or {}).get(key) if c.get('_total') else c.get(key)))}</td>")
        if slo:
            cells.append(f"<td>{c.get('good_requests', 0)}</td><td>{_e(fmt.pct(c.get('attainment')))}</td>"
                         f"<td>{_e(fmt.num(c.get('goodput_req_s')))}</td><td>{_e(fmt.num(c.get('goodput_tok_s')))}</td>")  # fmt: skip
        rows.append(f'<tr{" class=total" if c.get("_total") else ""}>{"".join(cells)}</tr>')
    note = f"Whole run (ramps and warm-ups included); latencies in ms. {what} grade of the p50: excellent < 300 ms, good < 800 ms, pass < 1.5 s, poor < 2 s, bad >= 2 s."
    if judged:
        note += f" Safe {'rate' if by_rate else 'users'}: the per-class verdict."
    note += " Good: ok and within every SLO of its class; attainment = good / (ok + errors)." if slo else ""
    return (
        f'<section><h2>Request classes</h2><p class="note">{_e(note)}</p><div class="tablewrap"><table><thead><tr><th>class</th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div></section>'
    )


_REASONING_COLS = (("reasoned", "reasoned", "n"), ("TTFT p50", "ttft_p50", "ms"), ("TTFO p50", "ttfo_p50", "ms"),
                   ("TTFO p99", "ttfo_p99", "ms"), ("reasoning p50", "reasoning_p50", "ms"),
                   ("reasoning p99", "reasoning_p99", "ms"), ("reasoning tokens", "reasoning_tokens", "n"),
                   ("per request", "reasoning_tokens_mean", "n"), ("hidden", "hidden", "n"))  # fmt: skip


def _reasoning(r: dict[str, Any]) -> str:
    """TTFO and reasoning per class; only when some request reasoned."""
    rz = r.get("reasoning")
    if not rz:
        return ""
    head = "".join(f"<th>{_e(h)}</th>" for h, *_ in _REASONING_COLS)
    rows = []
    for row in rz.get("rows") or []:
        cells = "".join(
            f"<td>{_e(fmt.ms(row.get(k), unit=False) if kind == 'ms' else fmt.num(row.get(k)))}</td>" for _, k, kind in _REASONING_COLS
        )
        total = row.get("name") == "overall"
        rows.append(f'<tr{" class=total" if total else ""}><td>{_e(row.get("name"))}</td>{cells}</tr>')
    note = (
        "TTFT is the first token of any channel, reasoning included; TTFO the first answer or tool-call token "
        f"(ms, whole run). Reasoning tokens: from server usage in {rz.get('from_usage', 0)} requests, counted from "
        f"the stream in {rz.get('counted', 0)}."
    )
    if rz.get("hidden"):
        note += f" Hidden reasoning in {rz['hidden']} requests: usage reported reasoning tokens the stream never showed."
    return (
        f'<section><h2>Reasoning</h2><p class="note">{_e(note)}</p><div class="tablewrap"><table><thead><tr><th>class</th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div></section>'
    )


def _turns(r: dict[str, Any]) -> str:
    """Conversation classes: one row per turn (requests, context, cache hits, latencies)."""
    parts = []
    for c in r.get("classes") or []:
        turns = c.get("by_turn") or []
        if not turns:
            continue
        rows = "".join(
            f"<tr><td>{_e(t['turn'])}</td><td>{t['requests']}</td><td>{_e(fmt.num(t.get('input_tokens_mean')))}</td>"
            f"<td>{_e(fmt.pct(t.get('prefix_cache_hit_ratio')))}</td>{_lat_cells(t)}<td>{_e(fmt.ms(t.get('e2e_p50'), unit=False))}</td></tr>"
            for t in turns
        )
        head = "<th>turn</th><th>requests</th><th>input tokens (mean)</th><th>cache hit</th>" + "".join(f"<th>{h}</th>" for h, _ in _LAT_COLS) + "<th>E2E p50</th>"
        parts.append(f'<h3>{_e(c.get("name"))}</h3><div class="tablewrap"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
    if not parts:
        return ""
    note = "Each turn re-sends the conversation so far; cache hit = prompt tokens the server said it served from its prefix cache / prompt tokens. Turns from 10 on are merged into 10+. Latencies in ms."
    return f'<section><h2>Conversation turns</h2><p class="note">{_e(note)}</p>{"".join(parts)}</section>'


def _timeline(r: dict[str, Any]) -> str:
    figures = timeline_charts(r)
    if not figures:
        note = "No engine or GPU metrics were collected. Add --engine-metrics URL and --gpu-metrics URL (or --prometheus-url) to see queues, KV cache and GPU use over the run."
        return f'<section><h2>Server and GPU over time</h2><p class="note">{_e(note)}</p></section>'
    note = "Engine and GPU signals as polled during the run; vertical lines: ladder steps." if (r.get("series") or {}).get("steps") else "Engine and GPU signals as polled during the run."
    return f'<section><h2>Server and GPU over time</h2><p class="note">{_e(note)}</p>{_figures(figures)}</section>'


def _details(r: dict[str, Any]) -> str:
    run = r["run"]
    ladder = run.get("ladder") or {}
    levels = fmt.ladder_levels(ladder, unit="sessions" if any("sessions" in s for s in r.get("steps") or []) else "users")
    items = {
        "run": run.get("name"),
        "started": run.get("started_at"),
        "host": run.get("host"),
        "api / model": f"{run.get('api')} / {run.get('model')}",
        "workload": f"{run.get('profile')} ({run.get('classes_mix')})" if run.get("classes_mix") else run.get("profile"),
        "ladder": (
            f"{levels}; {fmt.num(ladder.get('step_s'))} s per step, {fmt.num(ladder.get('warmup_s'))} s warm-up" if levels else None
        ),
        "degradation limit": f"+{run['degradation'] * 100:g} % of the baseline" if run.get("degradation") is not None else None,
        "max tokens cap": run.get("max_tokens_cap"),
        "seed": run.get("seed"),
        "workers": run.get("workers"),
        "GPUs": run.get("gpus"),
        "output tok/s per GPU": fmt.num(run.get("tok_s_per_gpu")) if run.get("tok_s_per_gpu") is not None else None,
        "SLOs": fmt.slo_sentence((r.get("verdict") or {}).get("slo"), r.get("steps")),
        "errors by kind": ", ".join(f"{k} {v}" for k, v in (r.get("errors_by_kind") or {}).items()) or None,
        "buffered token jumps": (
            f"{r['buffered_token_jumps']} events carried more than one token (ITL has one long gap there)"
            if r.get("buffered_token_jumps")
            else None
        ),
        "error examples": " | ".join(f"{k}: {m}" for k, m in (r.get("errors_examples") or {}).items()) or None,
        "error backoff": (f"{fmt.num(b.get('seconds'))} s in {b.get('waits')} waits (--error-backoff)"
                          if (b := r.get("error_backoff") or {}).get("waits") else None),
        "summary schema": run.get("summary_schema"),
    }
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items.items() if v not in (None, ""))
    return f'<section><h2>Run details</h2><dl class="kv">{rows}</dl></section>'


def render_html(report: dict[str, Any]) -> str:
    """The whole page as a string."""
    run = report["run"]
    meta = [run.get("name"), run.get("started_at"), f"{fmt.num(run.get('duration_s'))} s"]
    top = fmt.users(run.get("users_max"))
    if any("sessions" in s for s in report.get("steps") or []):  # a ladder over sessions
        top = fmt.step_label({"sessions": run.get("users_max")})
    meta += [f"up to {top}", run.get("host")]
    title = f"{run['model']} · {run['api']}" if run.get("model") and run.get("api") else run.get("name")
    meta_html = "".join(f"<span>{_e(m)}</span>" for m in meta if m)
    warnings = "".join(f"<p>⚠ {_e(w)}</p>" for w in report.get("warnings") or [])
    figures = ladder_charts(report)
    ladder = (
        '<section><h2>Latency and throughput vs concurrency</h2><p class="note">One point per ladder step (steady window). '
        f"Dashed lines: the baseline and the limit; shaded: the safe levels.</p>{_figures(figures)}</section>"
        if figures
        else ""
    )
    body = [
        f'<header><div class="brand">llmload report</div><h1>{_e(title)}</h1><p class="meta">{meta_html}</p></header>',
        f'<div class="warnings">{warnings}</div>' if warnings else "",
        _verdict(report),
        thresholds_html(report),
        repeat_html(report),
        steady_html(report),
        _findings(report) if report.get("steps") or report.get("findings") else "",
        ladder,
        _steps(report),
        model_html(report),
        arrival_html(report),
        _timeline(report),
        _classes(report),
        intervals_html(report),
        _reasoning(report),
        _turns(report),
        _details(report),
        f"<footer>Generated by <code>llmload report</code> · {_e(report.get('schema'))} · data in report.json</footer>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>llmload report · {_e(run.get('name'))}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(b for b in body if b)}</main></body></html>\n"
    )


def write_html(report: dict[str, Any], out: TextIO) -> None:
    """Write the page for ``report`` (from :func:`~llmload.report.data.build_report`) to ``out``."""
    out.write(render_html(report))
