"""Console rendering of a run's results: one table, per class and overall; the ladder's steps and verdict.

Below the table: each class's TTFT grade (:mod:`llmload.analysis.grade`), output tokens/s per
GPU when GPU metrics were collected, and goodput/attainment when the run had SLOs.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, TextIO

from llmload.analysis.diagnose import RUN_FAILED
from llmload.analysis.grade import grade_ttft
from llmload.metrics.parts import parts
from llmload.redact import mask
from llmload.report.intervals import render_intervals
from llmload.report.steady_lines import render_steady
from llmload.report.threshold_table import render_thresholds
from llmload.report.warmup_lines import render_warmup
from llmload.results.judgement import SloPass, Verdict
from llmload.results.model import BASELINE_STEP, Phases, RunResult, Stats

__all__ = ["render_summary", "tail_text"]

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


#: Parts from this ``order`` on print their console lines below the errors by kind (backoff: 60), the others above
#: (reconnects: 10).
_BELOW_ERRORS = 50

_Getter = Callable[[str, Stats], Any]
_COLUMNS: tuple[tuple[str, int, _Getter], ...] = (
    # header, width, getter (latencies in ms)
    ("class", 12, lambda name, s: name),
    ("reqs", 7, lambda name, s: s.requests),
    ("errs", 6, lambda name, s: s.errors),
    ("TTFT p50", 9, lambda name, s: s.lat("ttft").p50),
    ("p90", 8, lambda name, s: s.lat("ttft").p90),
    ("p99", 8, lambda name, s: s.lat("ttft").p99),
    ("TPOT p50", 9, lambda name, s: s.lat("tpot").p50),
    ("p99", 8, lambda name, s: s.lat("tpot").p99),
    ("ITL p50", 8, lambda name, s: s.lat("itl").p50),
    ("p99", 8, lambda name, s: s.lat("itl").p99),
    ("E2E p50", 9, lambda name, s: s.lat("e2e").p50),
    ("p99", 9, lambda name, s: s.lat("e2e").p99),
    ("out tok/s", 10, lambda name, s: s.output_tokens_per_s),
    ("recv tok/s", 10, lambda name, s: s.received_output_tokens_per_s),
    ("req/s", 7, lambda name, s: s.requests_per_s),
)
#: The reasoning table, shown only when some request reasoned.
_REASONING_COLUMNS: tuple[tuple[str, int, _Getter], ...] = (
    ("class", 12, lambda name, s: name),
    ("reasoned", 9, lambda name, s: s.reasoned),
    ("TTFO p50", 9, lambda name, s: s.lat("ttfo").p50),
    ("p90", 8, lambda name, s: s.lat("ttfo").p90),
    ("p99", 8, lambda name, s: s.lat("ttfo").p99),
    ("reason p50", 11, lambda name, s: s.lat("reasoning").p50),
    ("p99", 8, lambda name, s: s.lat("reasoning").p99),
    ("reas tok", 9, lambda name, s: s.reasoning_tokens),
    ("tok/req", 8, lambda name, s: s.reasoning_tokens_mean),
    ("hidden", 7, lambda name, s: s.hidden_reasoning),
)


def _fmt(value: Any, width: int) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"
    else:
        text = str(value)
    return text.rjust(width) if not isinstance(value, str) or value == "-" else text.ljust(width)


def render_summary(result: RunResult, out: TextIO) -> None:
    """Write the summary table (latencies in ms) and the error breakdown to ``out``, with any key a server
    echoed masked (:mod:`llmload.redact`: a guard; the records are masked where server text enters them)."""
    buf = io.StringIO()
    _render_summary(result, buf)
    out.write(mask(buf.getvalue()))


def _render_summary(result: RunResult, out: TextIO) -> None:
    o = result.overall
    config = result.config
    out.write(
        f"\nllmload summary: {result.duration_s:.1f} s, up to {result.users_max} users"
        + (f", {result.workers} workers" if result.workers else "")
        + (f", api {config['api']}, model {config['model']}" if config else "")
        + "\n"
    )
    _table(result, _COLUMNS, out)
    usage = o.output_tokens_from_usage_ratio
    out.write(
        f"requests = ok {o.ok} + errors {o.errors} + interrupted {o.interrupted} = {o.requests}; "
        f"latencies in ms over successful requests (TTFT also over interrupted ones that had a first token); "
        f"output tokens {o.output_tokens}"
        + (f" ({usage * 100:.0f}% from server usage)" if usage is not None else "")
        + (f"; received (any outcome) {o.received_output_tokens}" if o.received_output_tokens is not None else "")
        + "\n"
    )
    render_intervals(result, out)
    _render_arrival(result, out)
    if o.reasoned:
        _render_reasoning(result, out)
    if o.buffered_token_jumps:
        out.write(
            f"buffered token jumps: {o.buffered_token_jumps} events carried more than one token (the server's "
            "usage count jumped, e.g. a tool-call parser held text back): ITL has one long gap there\n"
        )
    _render_part_lines(result, out, below_errors=False)
    if result.errors_by_kind:
        kinds = ", ".join(f"{k} {v}" for k, v in result.errors_by_kind.items())
        out.write(f"errors by kind: {kinds}\n")
        for kind, message in result.errors_examples.items():
            out.write(f"  e.g. {kind}: {message or '(no message)'}\n")
    _render_part_lines(result, out, below_errors=True)
    _render_phases(o.phases, out)
    _render_grades(result, out)
    _render_goodput(result, out)
    _render_cache(result, out)
    _render_turns(result, out)
    j = result.judgement
    if j is not None and j.findings and j.findings[0].id in RUN_FAILED and not result.steps:
        f = j.findings[0]
        out.write(f"finding: {f.title} — {'; '.join(f.evidence_text[:3])}\n  change: {f.change}\n")
    _render_ladder(result, out)
    render_warmup(result.extra.get("warmup"), out)
    render_steady(result.extra.get("steady"), out)
    for warning in result.warnings:
        out.write(f"WARNING: {warning}\n")
    render_thresholds(result.thresholds, out)


def _render_part_lines(result: RunResult, out: TextIO, below_errors: bool) -> None:
    """Each part's own lines about the overall figures (:mod:`llmload.metrics.parts`: ``console_lines``), in the
    parts' order; parts ordered from :data:`_BELOW_ERRORS` on print below the errors by kind, the others above."""
    for part in parts():
        if (part.order >= _BELOW_ERRORS) == below_errors:
            for line in result.overall.part(part.figures).console_lines(result.users_max):
                out.write(line + "\n")


def _table(result: RunResult, columns: tuple[tuple[str, int, _Getter], ...], out: TextIO) -> None:
    header = " ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w, _) in enumerate(columns))
    out.write(header + "\n" + "-" * len(header) + "\n")
    for name, s in [*result.classes.items(), ("overall", result.overall)]:
        out.write(" ".join(_fmt(get(name, s), w) for _, w, get in columns) + "\n")


def _render_arrival(result: RunResult, out: TextIO) -> None:
    """Open loop: how requests were offered and how well the client kept the schedule (one line)."""
    a = result.arrival
    if not a.open_loop:
        return
    t = a.trace
    unsent = (f", {a.unsent} still queued in the client at the end (never sent, in no latency; the longest waited "
              f"{(a.unsent_wait_ms or 0) / 1000:.3g} s)") if a.unsent else ""  # fmt: skip
    if t is not None:
        what = (f"trace replay {t.file.rsplit('/', 1)[-1]}: {a.started} of {t.entries} entries sent{unsent} at speedup "
                f"{t.speedup:g} (span {t.span_s:.1f} s, {t.block_reuse:.0%} of hash_ids blocks reused)")  # fmt: skip
    else:
        offered = f"{a.offered_rate:g}/s" if a.offered_rate is not None else "the ladder's rates"
        what = f"arrivals ({a.mode}, offered {offered}): " + (f"{a.arrivals} due, {a.started} sent{unsent}" if a.unsent
                                                               else f"{a.arrivals} sent")  # fmt: skip
    lag = a.schedule_lag
    out.write(
        what
        + (f", achieved {a.achieved_rate:.3g} req/s" if a.achieved_rate is not None else "")
        + (f"; send lag p50 {lag.p50:.2f} ms, p99 {lag.p99:.2f} ms" if lag.p99 is not None else "")
        + (f"; {a.waited} waited for a free user (-u)" if a.waited else "")
        + "\n"
    )


def _render_reasoning(result: RunResult, out: TextIO) -> None:
    """TTFO, reasoning time and tokens per class (only when some request reasoned)."""
    o = result.overall
    out.write(
        "\nreasoning: TTFT above is the first token of any channel (reasoning included); TTFO is the first "
        "answer or tool-call token (ms)\n"
    )
    _table(result, _REASONING_COLUMNS, out)
    out.write(
        f"reasoning tokens {o.reasoning_tokens} over {o.reasoned} requests: from server usage in "
        f"{o.reasoning_from_usage}, counted from the stream in {o.reasoning_counted}\n"
    )
    if o.hidden_reasoning:
        out.write(
            f"hidden reasoning: in {o.hidden_reasoning} requests the server reported reasoning tokens it never "
            "streamed: their thinking time is inside TTFT and TTFO alike\n"
        )


def _render_phases(phases: Phases, out: TextIO) -> None:
    """Where the TTFT tail went (only when some requests carried the server's own timing)."""
    if not phases.timed:
        return
    tails = [t for q in ("p90", "p99") if (t := tail_text(phases, q))]
    cov = f"server timing on {phases.coverage * 100:.0f} % of requests" if phases.coverage is not None else ""
    out.write(f"where the time went ({cov}): {'; '.join(tails) or 'no timed request in the tail'}\n")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def _rate(r: float | None) -> str:
    return "-" if r is None else f"{r:g} req/s"


def _render_grades(result: RunResult, out: TextIO) -> None:
    """TTFT grade per class (p50), and output tokens/s per GPU when the GPU count is known."""
    grades = [f"{name} {g} ({s.lat('ttft').p50:.0f} ms)" for name, s in result.classes.items()
              if (g := grade_ttft(s.lat("ttft").p50)) is not None]  # fmt: skip
    if grades:
        out.write("TTFT p50 grade (excellent < 300 ms, good < 800 ms, pass < 1.5 s, poor < 2 s, bad): "
                  + ", ".join(grades) + "\n")  # fmt: skip
    gpus = result.gpu_count
    if gpus:
        n = "1 GPU" if gpus == 1 else f"{gpus} GPUs"
        out.write(f"output tok/s per GPU: {result.overall.output_tokens_per_s / gpus:.1f} ({n})\n")


def _render_goodput(result: RunResult, out: TextIO) -> None:
    """Goodput and attainment per class and overall (runs with SLOs)."""
    if result.overall.goodput is None:
        return
    slo = result.judgement.verdict.slo if result.judgement is not None else None
    out.write("goodput (good = ok and within every SLO of its class)\n")
    for name, s in [*result.classes.items(), ("overall", result.overall)]:
        g = s.goodput
        if g is None:
            continue
        limits = slo.slos.get(name) if slo is not None and name != "overall" else None
        text = ", ".join(f"{k} <= {v:g}" for k, v in (limits or {}).items())
        out.write(
            f"  {name:<12} {g.good_requests:>7} good of {s.finished:<7} attainment {_pct(g.attainment):>6}  "
            f"{g.requests_per_s:.2f} req/s  {g.output_tokens_per_s:.1f} tok/s" + (f"  ({text})" if text else "") + "\n"
        )
    if slo is not None and not result.steps:
        o = slo.overall
        out.write(f"SLO verdict: {o.status} (attainment {_pct(o.attainment)} against {_pct(slo.target)})"
                  + (f"; most missed: {o.failed_slo}" if o.failed_slo else "") + "\n")  # fmt: skip


def _slo_line(p: SloPass, target: float, rates: dict[int, str]) -> str:
    """The SLO verdict; ``rates`` names a rate ladder's steps (index -> ``2 req/s``), else steps are users."""
    at = lambda step, n: rates.get(step) if step in rates else ("1 user" if n == 1 else f"{n} users")  # noqa: E731
    line = (
        f"SLO attainment >= {_pct(target)} up to {at(p.safe_step, p.safe_users)}"
        if p.safe_users
        else "no step met the SLOs"
    )
    if p.status == "breach":
        line += f"; at {at(p.failed_step, p.failed_users)} {_pct(p.failed_attainment)} (first failed: {p.failed_slo})"
    elif p.status == "insufficient_data":
        line += f" ({p.note})"
    return line


def _engine_cache(result: RunResult) -> str | None:
    """``"engine counters: 61.8 % (1,718 of 2,781 prompt tokens)"``: the engine's own hit rate, when collected."""
    rate = ((result.server or {}).get("signals") or {}).get("prefix_cache_hit_rate") or {}
    value = rate.get("value")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if rate.get("from") == "counters" and rate.get("queries"):
        return f"engine counters: {value * 100:.1f} % ({rate['hits']:,.0f} of {rate['queries']:,.0f} prompt tokens)"
    return f"engine gauge: {value * 100:.1f} % (mean)"


def _render_cache(result: RunResult, out: TextIO) -> None:
    """The client's prefix-cache figures (usage), and beside them the engine's own when collected.

    The engine counts every prompt it started, the client only the answers whose usage arrived:
    the requests cut at the end (``interrupted``) are in the engine's figure alone, so it is named.
    """
    o = result.overall
    engine = _engine_cache(result)
    if o.prefix_cache_hit_ratio is None and engine is None:
        return
    line = "prefix cache"
    if o.prefix_cache_hit_ratio is not None:
        line += (
            f" (the server's usage.cached_tokens): {o.cached_prompt_tokens} prompt tokens cached, "
            f"hit ratio {o.prefix_cache_hit_ratio * 100:.1f} %"
            + "".join(f"; {n} {s.prefix_cache_hit_ratio * 100:.1f} %" for n, s in result.classes.items()
                      if s.prefix_cache_hit_ratio is not None and len(result.classes) > 1)
        )  # fmt: skip
    if engine is not None:
        line += ("; " if o.prefix_cache_hit_ratio is not None else ": ") + engine
        if o.interrupted and o.prefix_cache_hit_ratio is not None:
            line += (
                f", which also counts the prompts of the {o.interrupted} requests interrupted at the end "
                "(no usage reached the client; --stop-timeout lets them finish)"
            )
    out.write(line + "\n")


def _render_turns(result: RunResult, out: TextIO) -> None:
    """Per conversation turn of each conversation class: requests, mean input tokens, cache hits, latencies."""
    for name, s in result.classes.items():
        if not s.by_turn:
            continue
        out.write(f"\nconversation turns of {name} (ms; turns from 10 on merged into 10+)\n"
                  "  turn   reqs  in tok mean  cached %  TTFT p50      p99  TPOT p50   E2E p50\n")  # fmt: skip
        for key, t in s.by_turn.items():
            ratio = t.prefix_cache_hit_ratio
            out.write(
                f"  {key:>4} {t.requests:>6} {_fmt(t.input_tokens_mean, 12)} "
                f"{_fmt(ratio * 100 if ratio is not None else None, 9)} {_fmt(t.lat('ttft').p50, 9)} "
                f"{_fmt(t.lat('ttft').p99, 8)} {_fmt(t.lat('tpot').p50, 9)} {_fmt(t.lat('e2e').p50, 9)}\n"
            )


def _render_ladder(result: RunResult, out: TextIO) -> None:
    """Per-step lines, the verdict and the top findings (ladder runs only)."""
    if not result.steps:
        return
    slos = result.overall.goodput is not None
    by_rate = any(st.rate_offered is not None for st in result.steps)
    head = " offered  achieved" if by_rate else "   users"
    out.write(f"\nladder, steady windows only (ms)\n  {head}  TTFT p50  TPOT p50  out tok/s  errors"
              + ("  attainment  good req/s" if slos else "") + "\n")  # fmt: skip
    for st in result.steps:
        o = st.overall
        label = "baseline" if st.index <= BASELINE_STEP else str(st.users)
        if by_rate:
            label = f"{_fmt(st.rate_offered, 8)}  {_fmt(st.rate_achieved, 8)}"
        tail = tail_text(o.phases, "p99")
        g = o.goodput
        out.write(
            f"  {label:>8}  {_fmt(o.lat('ttft').p50, 8)}  {_fmt(o.lat('tpot').p50, 8)}  "
            f"{_fmt(o.output_tokens_per_s, 9)}  {o.errors:>6}"
            + (f"  {_pct(g.attainment):>10}  {_fmt(g.requests_per_s, 10)}" if g is not None else "")
            + (f"  {tail}" if tail else "")
            + "\n"
        )
    j = result.judgement
    if j is None:
        return
    _render_verdict(j.verdict, result, out)
    for i, f in enumerate(j.findings[:3], 1):
        out.write(f"finding {i}: {f.title} ({f.confidence}) — {'; '.join(f.evidence_text[:2])}\n")


def _render_verdict(v: Verdict, result: RunResult, out: TextIO) -> None:
    """The ladder's verdict line(s) and its SLO line."""
    if v.status == "inconclusive":
        judged = (v.inconclusive or {}).get("judged_status")
        out.write(f"verdict: INCONCLUSIVE — {v.note.removeprefix('inconclusive: ')}\n")
        if v.rate_ladder and (v.safe_rate is not None or judged == "breach"):
            out.write(f"  (as measured, not to rely on: safe rate {_rate(v.safe_rate)}, "
                      f"recommended rate limit {_rate(v.recommended_rate)})\n")  # fmt: skip
        elif v.safe_users is not None or judged == "breach":
            out.write(f"  (as measured, not to rely on: safe concurrency {v.safe_users} users, "
                      f"recommended gateway limit {v.recommended_limit})\n")  # fmt: skip
    elif v.status in ("ok", "breach") and v.rate_ladder:
        line = f"verdict: safe rate {v.safe_rate:g} req/s" if v.safe_rate is not None else "verdict: no safe rate"
        b = v.breach
        if b is not None:
            cmp = "<" if b.metric == "achieved_rate" else ">"
            at = f"{b.rate:g} req/s" if b.rate is not None else f"{b.users} users"
            line += f"; {b.metric} broke the limit at {at} ({b.value:.4g} {cmp} {b.limit:.4g})"
        if v.recommended_rate is not None:
            line += f"; recommended rate limit {_rate(v.recommended_rate)}"
        out.write(line + f" (at -u {v.top_users})\n")
    elif v.status in ("ok", "breach"):
        line = f"verdict: safe concurrency {v.safe_users} users"
        b = v.breach
        if b is not None:
            line += f"; {b.metric} broke the limit at {b.users} users ({b.value:g} > {b.limit:g})"
        if v.recommended_limit is not None:
            line += f"; recommended gateway limit {v.recommended_limit}"
        out.write(line + "\n")
    else:
        out.write(f"verdict: {v.status} {v.note or ''}".rstrip() + "\n")
    if v.slo is not None:
        rates = {st.index: st.label for st in result.steps if st.rate_offered is not None}
        out.write(_slo_line(v.slo.overall, v.slo.target, rates) + "\n")
