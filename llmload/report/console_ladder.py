"""The console's ladder: one line per step, the verdict and its SLO line (ladder runs only).

Shared with :mod:`llmload.report.console`: the cell format (:func:`cell`), percentages
(:func:`pct`) and the TTFT tail line (:func:`tail_text`).

* **A ladder over sessions** (:mod:`llmload.analysis.sessions`: every request a conversation or
  agent turn): the steps' column is ``sessions`` and the verdict line is the max-sessions
  sentence (:mod:`llmload.report.session_lines`), on the SLOs when the run has them (then the
  baseline's limits follow on the next line, in sessions), else on the baseline's limits.
* **An embeddings or rerank ladder** (batched inputs: one JSON answer per request, judged on
  latency = E2E): the steps' columns are ``lat p50``/``lat p99`` (E2E) and the verdict names
  its metric as people write it (``latency p50 (E2E)``).

Any other ladder prints what it always printed.
"""

from __future__ import annotations

from typing import Any, TextIO

from llmload.analysis.sessions import SessionVerdict, result_over_sessions, session_verdicts
from llmload.analysis.steps import batched
from llmload.report import fmt
from llmload.report.session_lines import session_sentence
from llmload.results.judgement import SloPass, Verdict
from llmload.results.model import BASELINE_STEP, Phases, RunResult

__all__ = ["cell", "pct", "render_ladder", "tail_text"]

_PART_NAMES = {
    "client_wait": "client wait (-u cap)",
    "gateway": "gateway",
    "server_queue": "server queue",
    "prefill": "prefill",
    "other": "other (queue+network)",
}


def tail_text(phases: Phases, quantile: str) -> str | None:
    """``"p99 TTFT 1234 ms: 78 % server queue, 15 % prefill, 7 % gateway"``; None without server timing there."""
    t = phases.tail.get(quantile)
    if t is None or not t.requests:
        return None
    parts = ", ".join(f"{v * 100:.0f} % {_PART_NAMES.get(k, k)}" for k, v in t.ranked() if v >= 0.005)
    return f"{quantile} TTFT {t.ttft_ms:.0f} ms: {parts}"


def cell(value: Any, width: int) -> str:
    """A table cell: ``-`` for None, floats to 2 decimals below 100 (1 above), text left-aligned."""
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"
    else:
        text = str(value)
    return text.rjust(width) if not isinstance(value, str) or value == "-" else text.ljust(width)


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def _rate(r: float | None) -> str:
    return "-" if r is None else f"{r:g} req/s"


def _metric(metric: str) -> str:
    """A breach's metric: as the summary keys it (``ttft_p50``, what this line always printed), but an embeddings
    ladder's ``e2e_p50`` as people write it (``latency p50 (E2E)``)."""
    return fmt.metric_name(metric) if metric.startswith("e2e_") else metric


def _slo_line(p: SloPass, target: float, rates: dict[int, str]) -> str:
    """The SLO verdict; ``rates`` names a rate ladder's steps (index -> ``2 req/s``), else steps are users."""
    at = lambda step, n: rates.get(step) if step in rates else ("1 user" if n == 1 else f"{n} users")  # noqa: E731
    line = (
        f"SLO attainment >= {pct(target)} up to {at(p.safe_step, p.safe_users)}"
        if p.safe_users
        else "no step met the SLOs"
    )
    if p.status == "breach":
        line += f"; at {at(p.failed_step, p.failed_users)} {pct(p.failed_attainment)} (first failed: {p.failed_slo})"
    elif p.status == "insufficient_data":
        line += f" ({p.note})"
    return line


def render_ladder(result: RunResult, out: TextIO) -> None:
    """Per-step lines, the verdict and the top findings (ladder runs only)."""
    if not result.steps:
        return
    slos = result.overall.goodput is not None
    by_rate = any(st.rate_offered is not None for st in result.steps)
    over_sessions = result_over_sessions(result)
    e2e = batched(result.overall)
    head = " offered  achieved" if by_rate else ("sessions" if over_sessions else "   users")
    cols = "   lat p50   lat p99" if e2e else "  TTFT p50  TPOT p50"
    what = "ms; lat = latency, E2E" if e2e else "ms"
    out.write(f"\nladder, steady windows only ({what})\n  {head}{cols}  out tok/s  errors"
              + ("  attainment  good req/s" if slos else "") + "\n")  # fmt: skip
    for st in result.steps:
        o = st.overall
        label = "baseline" if st.index <= BASELINE_STEP else str(st.users)
        if by_rate:
            label = f"{cell(st.rate_offered, 8)}  {cell(st.rate_achieved, 8)}"
        first, second = (o.lat("e2e").p50, o.lat("e2e").p99) if e2e else (o.lat("ttft").p50, o.lat("tpot").p50)
        tail = tail_text(o.phases, "p99")
        g = o.goodput
        out.write(
            f"  {label:>8}  {cell(first, 8)}  {cell(second, 8)}  "
            f"{cell(o.output_tokens_per_s, 9)}  {o.errors:>6}"
            + (f"  {pct(g.attainment):>10}  {cell(g.requests_per_s, 10)}" if g is not None else "")
            + (f"  {tail}" if tail else "")
            + "\n"
        )
    j = result.judgement
    if j is None:
        return
    sessions = session_verdicts(result) if over_sessions else ()
    if sessions:
        _render_sessions(j.verdict, sessions, out)
    else:
        _render_verdict(j.verdict, result, out, "sessions" if over_sessions else "users")
    for i, f in enumerate(j.findings[:3], 1):
        out.write(f"finding {i}: {f.title} ({f.confidence}) — {'; '.join(f.evidence_text[:2])}\n")


def _render_sessions(v: Verdict, sessions: tuple[SessionVerdict, ...], out: TextIO) -> None:
    """A ladder over sessions: the max-sessions verdict (on the SLOs first when the run has them), the gateway limit."""
    for i, sv in enumerate(sessions):
        line = ("verdict: " if i == 0 else "  ") + session_sentence(sv)
        n = v.recommended_limit
        if sv.basis == "degradation" and n is not None and v.status in ("ok", "breach"):
            line += f"; recommended gateway limit {n} request{'s' if n != 1 else ''} in flight"
        out.write(line + "\n")


def _render_verdict(v: Verdict, result: RunResult, out: TextIO, unit: str = "users") -> None:
    """The ladder's verdict line(s) and its SLO line; ``unit`` names a concurrency ladder's steps."""
    if v.status == "inconclusive":
        judged = (v.inconclusive or {}).get("judged_status")
        out.write(f"verdict: INCONCLUSIVE — {v.note.removeprefix('inconclusive: ')}\n")
        if v.rate_ladder and (v.safe_rate is not None or judged == "breach"):
            out.write(f"  (as measured, not to rely on: safe rate {_rate(v.safe_rate)}, "
                      f"recommended rate limit {_rate(v.recommended_rate)})\n")  # fmt: skip
        elif v.safe_users is not None or judged == "breach":
            flight = " requests in flight" if unit == "sessions" and v.recommended_limit is not None else ""
            out.write(f"  (as measured, not to rely on: safe concurrency {v.safe_users} {unit}, "
                      f"recommended gateway limit {v.recommended_limit}{flight})\n")  # fmt: skip
    elif v.status in ("ok", "breach") and v.rate_ladder:
        line = f"verdict: safe rate {v.safe_rate:g} req/s" if v.safe_rate is not None else "verdict: no safe rate"
        b = v.breach
        if b is not None:
            cmp = "<" if b.metric == "achieved_rate" else ">"
            at = f"{b.rate:g} req/s" if b.rate is not None else f"{b.users} users"
            line += f"; {_metric(b.metric)} broke the limit at {at} ({b.value:.4g} {cmp} {b.limit:.4g})"
        if v.recommended_rate is not None:
            line += f"; recommended rate limit {_rate(v.recommended_rate)}"
        out.write(line + f" (at -u {v.top_users})\n")
    elif v.status in ("ok", "breach"):
        line = f"verdict: safe concurrency {v.safe_users} {unit}"
        b = v.breach
        if b is not None:
            line += f"; {_metric(b.metric)} broke the limit at {b.users} {unit} ({b.value:g} > {b.limit:g})"
        if v.recommended_limit is not None:
            line += f"; recommended gateway limit {v.recommended_limit}"
        out.write(line + "\n")
    else:
        out.write(f"verdict: {v.status} {v.note or ''}".rstrip() + "\n")
    if v.slo is not None:
        rates = {st.index: st.label for st in result.steps if st.rate_offered is not None}
        out.write(_slo_line(v.slo.overall, v.slo.target, rates) + "\n")
