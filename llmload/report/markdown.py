"""The Markdown record of a run: phenomenon -> root cause -> change -> effect.

The seeds' tuning log, pre-filled from the report data: the phenomenon from the verdict
and the ladder steps, the root cause from the top finding (the other findings listed as
alternatives), the change it suggests, and an effect section with placeholders for the
user to fill after re-running the same ladder with the change (``llmload compare``
fills it). :func:`write_markdown` takes report data from
:func:`~llmload.report.data.build_report` and a text stream.
"""

from __future__ import annotations

from typing import Any, TextIO

from llmload.analysis.diagnose import RUN_FAILED
from llmload.report import fmt
from llmload.report.arrivals import arrival_markdown, plain_headline
from llmload.report.intervals import intervals_markdown
from llmload.report.model_section import model_markdown
from llmload.report.repeat_table import repeat_markdown
from llmload.report.steady_lines import steady_lines
from llmload.report.threshold_table import thresholds_markdown
from llmload.results.setup import DEFAULT_DEGRADATION

__all__ = ["PLACEHOLDER", "write_markdown"]

#: Marks what the user fills in.
PLACEHOLDER = "_(to fill)_"


def _cell(v: Any) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return out


def _phenomenon(r: dict[str, Any]) -> list[str]:
    v, base, steps = r.get("verdict"), r.get("baseline") or {}, r.get("steps") or []
    out = ["## 1. Phenomenon", ""]
    if not steps:
        return out + _plain_run(r, v)
    out += _session_lines(r) or _verdict_lines(v)
    if slo := (v or {}).get("slo"):
        out.append(f"- SLOs: {fmt.slo_sentence(slo, steps)}.")
    out += _band_lines(v, steps, "sessions" if _over_sessions(r) else "users")
    e2e = r.get("latency") == "e2e"  # embeddings, rerank: latency = E2E, no TTFT/TPOT
    if base:
        figures = (f"latency p50 (E2E) {fmt.ms((base.get('e2e_ms') or {}).get('p50'))}" if e2e else
                   f"TTFT p50 {fmt.ms((base.get('ttft_ms') or {}).get('p50'))}, TPOT p50 {fmt.ms((base.get('tpot_ms') or {}).get('p50'))}")  # fmt: skip
        out.append(
            f"- Baseline ({'pre-run' if base.get('source') == 'pre-run' else fmt.step_named(steps, base.get('step'), base.get('users'))}): "
            f"{figures}; limits +{(v or {}).get('degradation', DEFAULT_DEGRADATION) * 100:g} %."
        )
    out.append("")
    cols = ("e2e_p50", "e2e_p99") if e2e else ("ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99")
    rows = [
        [fmt.step_label(s) + (f" ({s['status']})" if s.get("status") not in (None, "ok") else ""),
         *(fmt.ms(s.get(c), False) for c in cols), fmt.num(s.get("tok_s")), fmt.pct(s.get("error_rate"))]  # fmt: skip
        for s in steps
    ]
    head = ["latency p50 ms (E2E)", "latency p99 ms (E2E)"] if e2e else ["TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms"]
    out += _table(["step", *head, "out tok/s", "errors"], rows)
    return [*out, ""]


def _over_sessions(r: dict[str, Any]) -> bool:
    """A ladder over sessions (its report steps carry ``sessions``, :mod:`llmload.report.data`)."""
    return any("sessions" in s for s in r.get("steps") or [])


def _plain_run(r: dict[str, Any], v: dict[str, Any] | None) -> list[str]:
    """A run without a ladder: its headline figures, SLOs and a failed run's reason."""
    o = r.get("overall") or {}
    what = f"A plain run (no concurrency ladder): {fmt.users(r['run'].get('users_max'))} for {fmt.num(r['run'].get('duration_s'))} s"
    what = (plain_headline(r) or (what,))[0]
    lat = (f"latency p50 (E2E) {fmt.ms(o.get('e2e_p50'))} (p99 {fmt.ms(o.get('e2e_p99'))})" if r.get("latency") == "e2e" else
           f"TTFT p50 {fmt.ms(o.get('ttft_p50'))} (p99 {fmt.ms(o.get('ttft_p99'))}), TPOT p50 {fmt.ms(o.get('tpot_p50'))}")  # fmt: skip
    out = [f"{what}; {lat}, {fmt.num(o.get('tok_s'))} output tok/s, error rate {fmt.pct(o.get('error_rate'), 2)}."]
    if slo := (v or {}).get("slo"):
        out.append(f"SLOs: {fmt.slo_sentence(slo, [])}.")
    top = (r.get("findings") or [{}])[0]
    if top.get("id") in RUN_FAILED:
        out.append(f"**{top.get('title')}**: {'; '.join(top.get('evidence_text') or [])}.")
    return out + ["", f"What was observed: {PLACEHOLDER}", ""]


def _verdict_lines(v: dict[str, Any] | None) -> list[str]:
    """The ladder's verdict: a safe rate or concurrency, no limit broken, inconclusive, or why there is none."""
    if not v:
        return []
    status = v.get("status")
    if "safe_rate" in v and status in ("ok", "breach"):  # a rate ladder
        limit = fmt.rate(v.get("recommended_rate"))
        out = [f"- **Safe rate: {fmt.rate(v.get('safe_rate'))}** (offered, at the -u cap of {fmt.users(v.get('top_users'))}; "
               f"recommended gateway rate limit {limit})."]  # fmt: skip
        return out + ([f"- {fmt.breach_sentence(v['breach'])}"] if v.get("breach") else [])
    if status == "breach":
        return [f"- **Safe concurrency: {fmt.users(v.get('safe_users'))}** (recommended gateway limit {fmt.users(v.get('recommended_limit'))}).",
                f"- {fmt.breach_sentence(v.get('breach') or {})}"]  # fmt: skip
    if status == "ok":
        return [f"- **No limit broken up to {fmt.users(v.get('top_users'))}** (the top step): safe concurrency is at least that."]
    if status == "inconclusive":
        return [f"- **Inconclusive** (too little evidence for a verdict): {v.get('note', '').removeprefix('inconclusive: ')}"]
    why = v.get("note") or (v.get("confidence") or {}).get("note") or "not enough data"
    return [f"- No verdict ({status}): {why}."]


def _session_lines(r: dict[str, Any]) -> list[str]:
    """A ladder over sessions' verdict (report data ``sessions``): its headline, then each sentence; [] otherwise."""
    s = r.get("sessions")
    if not s:
        return []
    v = r.get("verdict") or {}
    lines = list(s.get("lines") or [])
    if (n := v.get("recommended_limit")) is not None and v.get("status") in ("ok", "breach") and lines:
        lines[-1] += f"; recommended gateway limit {n} request{'s' if n != 1 else ''} in flight"  # the baseline's line
    return [f"- **{s['headline']}**.", *(f"- {line}." for line in lines)]


def _band_lines(v: dict[str, Any] | None, steps: list[dict[str, Any]], unit: str = "users") -> list[str]:
    """The confidence band around the verdict: offered rates on a rate ladder, users (or sessions) otherwise."""
    conf = (v or {}).get("confidence") or {}
    band, band_steps, note = conf.get("band_users") or [], conf.get("band_steps"), conf.get("note")
    tail = f" ({note})." if note else "."
    if "safe_rate" in (v or {}):  # a rate ladder's steps share one -u: its band is in offered rates
        rates = fmt.rate_band(steps, band_steps)
        return [f"- Confidence band: {rates}{tail}"] if rates else []
    if len(band) == 2 and None not in band:
        lo, hi = band
        return [f"- Confidence band: {lo}–{hi} {unit}{tail}"]
    return []


def _turns(r: dict[str, Any]) -> list[str]:
    """Per conversation turn of each conversation class (nothing for single-request classes)."""
    out: list[str] = []
    for c in r.get("classes") or []:
        turns = c.get("by_turn") or []
        if not turns:
            continue
        out += [f"Conversation turns of `{c.get('name')}` (turns from 10 on merged into 10+):", ""]
        rows = [[t["turn"], t["requests"], fmt.num(t.get("input_tokens_mean")), fmt.pct(t.get("prefix_cache_hit_ratio")),
                 fmt.ms(t.get("ttft_p50"), False), fmt.ms(t.get("ttft_p99"), False), fmt.ms(t.get("tpot_p50"), False)]
                for t in turns]  # fmt: skip
        out += [*_table(["turn", "requests", "input tokens", "cache hit", "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms"], rows), ""]
    return out


def _root_cause(r: dict[str, Any]) -> list[str]:
    findings = r.get("findings") or []
    out = ["## 2. Root cause", ""]
    if not findings:
        out += [f"No diagnosis finding in this run. Suspected cause: {PLACEHOLDER}", ""]
        return out
    top = findings[0]
    out.append(f"**{top.get('title') or top.get('id')}** — layer: {top.get('layer') or '-'}, confidence: {top.get('confidence') or '-'}.")
    out.append("")
    out += [f"- {t}" for t in top.get("evidence_text") or []]
    ev = top.get("evidence") or {}
    if ev:
        out.append("- Evidence: " + ", ".join(f"`{k}` = {fmt.value(x)}" for k, x in ev.items() if x is not None))
    if len(findings) > 1:
        out += ["", "Other candidates:", ""]
        out += [f"- {f.get('title') or f.get('id')} ({f.get('confidence') or '-'} confidence, {f.get('layer') or '-'})" for f in findings[1:]]
    out += ["", f"Confirmed by: {PLACEHOLDER}", ""]
    return out


def _change(r: dict[str, Any]) -> list[str]:
    findings = r.get("findings") or []
    out = ["## 3. Change", ""]
    if findings and findings[0].get("change"):
        out += [f"Suggested: {findings[0]['change']}", ""]
    out += [
        f"- What was changed (flag, value, version): {PLACEHOLDER}",
        f"- Where and when: {PLACEHOLDER}",
        "",
    ]
    return out


def _reference(r: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """What the effect is measured on: the breach step, else the top step, else the whole run."""
    steps = [s for s in r.get("steps") or [] if (s.get("index") or 0) >= 0]
    if not steps:
        return "whole run", r.get("overall") or {}
    breach = ((r.get("verdict") or {}).get("breach")) or {}
    step = next((s for s in steps if s.get("index") == breach.get("step")), steps[-1])
    return f"at {fmt.step_label(step)}", step


def _effect(r: dict[str, Any]) -> list[str]:
    name = r["run"].get("name") or "RUN_BEFORE"
    ladder = bool(r.get("steps"))
    where, ref = _reference(r)
    out = [
        "## 4. Effect",
        "",
        f"Re-run the same {'ladder' if ladder else 'load'} with the change, then fill this in "
        f"(`llmload compare runs/{name} runs/<after> --markdown` prints the full before/after table).",
        "",
    ]
    rows = []
    v = r.get("verdict") or {}
    if ladder and "safe_rate" in v:  # a rate ladder
        rows.append(["safe rate (req/s)", fmt.num(v.get("safe_rate")), PLACEHOLDER, PLACEHOLDER])
    elif ladder:
        unit = "sessions" if r.get("sessions") else "users"
        rows.append([f"safe concurrency ({unit})", fmt.num(v.get("safe_users")), PLACEHOLDER, PLACEHOLDER])
    if r.get("latency") == "e2e":  # embeddings, rerank: no TTFT or TPOT
        rows.append([f"latency p50 (E2E; ms, {where})", fmt.ms(ref.get("e2e_p50"), False), PLACEHOLDER, PLACEHOLDER])
    else:
        rows += [[f"TTFT p50 (ms, {where})", fmt.ms(ref.get("ttft_p50"), False), PLACEHOLDER, PLACEHOLDER],
                 [f"TPOT p50 (ms, {where})", fmt.ms(ref.get("tpot_p50"), False), PLACEHOLDER, PLACEHOLDER]]  # fmt: skip
    rows += [
        [f"output tok/s ({where})", fmt.num(ref.get("tok_s")), PLACEHOLDER, PLACEHOLDER],
        [f"error rate ({where})", fmt.pct(ref.get("error_rate"), 2), PLACEHOLDER, PLACEHOLDER],
    ]
    out += _table(["metric", "before", "after", "change"], rows)
    out += ["", f"Conclusion: {PLACEHOLDER}", ""]
    return out


def _reasoning(r: dict[str, Any]) -> list[str]:
    """One fact line when some request reasoned (TTFT counts reasoning; TTFO is the first answer token)."""
    rz = r.get("reasoning")
    if not rz:
        return []
    o = (rz.get("rows") or [{}])[-1]
    line = (
        f"- reasoning: {o.get('reasoned')} requests; TTFO p50 {fmt.ms(o.get('ttfo_p50'))} (TTFT p50 "
        f"{fmt.ms(o.get('ttft_p50'))} counts reasoning), reasoning p50 {fmt.ms(o.get('reasoning_p50'))}, "
        f"{rz.get('tokens')} reasoning tokens ({rz.get('from_usage')} requests from usage, {rz.get('counted')} counted)"
    )
    if rz.get("hidden"):
        line += f"; hidden reasoning in {rz['hidden']} requests"
    return [line]


def write_markdown(report: dict[str, Any], out: TextIO) -> None:
    """Write the record for ``report`` to ``out``."""
    run = report["run"]
    lines = [f"# Performance record: {run.get('name')}", ""]
    facts = [
        ("started", run.get("started_at")),
        ("target", run.get("host")),
        ("api / model", f"{run.get('api')} / {run.get('model')}"),
        ("workload", f"{run.get('profile')} ({run.get('classes_mix')})" if run.get("classes_mix") else run.get("profile")),
        ("ladder", fmt.ladder_levels(run.get("ladder"), unit="sessions" if _over_sessions(report) else "users")),
        ("seed", run.get("seed")),
    ]
    lines += [f"- {k}: {v}" for k, v in facts if v not in (None, "")]
    lines += arrival_markdown(report)
    lines += thresholds_markdown(report)
    lines += repeat_markdown(report)
    lines += [f"- {x}" for x in steady_lines(report.get("steady"), "sessions" if _over_sessions(report) else "users")]
    lines += [f"- warning: {w}" for w in report.get("warnings") or []]
    lines += _reasoning(report)
    lines.append("")
    breach = (report.get("verdict") or {}).get("breach") or {}
    if breach:
        lines += [f"Binding metric: **{fmt.metric_name(breach.get('metric'))}**.", ""]
    for part in (_phenomenon, intervals_markdown, _turns, _root_cause, _change, _effect, model_markdown):
        lines += part(report)
    out.write("\n".join(lines).rstrip() + "\n")
