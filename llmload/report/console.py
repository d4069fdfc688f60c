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
from llmload.analysis.sessions import over_sessions, result_over_sessions
from llmload.analysis.steps import batched
from llmload.metrics.parts import parts
from llmload.redact import mask
from llmload.report.console_ladder import cell as _fmt
from llmload.report.console_ladder import pct as _pct
from llmload.report.console_ladder import render_ladder, tail_text
from llmload.report.intervals import render_intervals
from llmload.report.steady_lines import render_steady
from llmload.report.threshold_table import render_thresholds
from llmload.report.warmup_lines import render_warmup
from llmload.results.model import Phases, RunResult, Stats

__all__ = ["render_summary", "tail_text"]

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


def render_summary(result: RunResult, out: TextIO) -> None:
    """Write the summary table (latencies in ms) and the error breakdown to ``out``, with any key a server
    echoed masked (:mod:`llmload.redact`: a guard; the records are masked where server text enters them)."""
    buf = io.StringIO()
    _render_summary(result, buf)
    out.write(mask(buf.getvalue()))


def _unit(result: RunResult) -> str:
    """What the run's users were: ``sessions`` when every request was a conversation or agent session's turn
    (:mod:`llmload.analysis.sessions`: each user holds one session), else ``users`` (the summary says users either way)."""
    if not over_sessions([result.overall]):
        return "users"
    return "session" if result.users_max == 1 else "sessions"


def _render_summary(result: RunResult, out: TextIO) -> None:
    o = result.overall
    config = result.config
    out.write(
        f"\nllmload summary: {result.duration_s:.1f} s, up to {result.users_max} {_unit(result)}"
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
    render_ladder(result, out)
    render_warmup(result.extra.get("warmup"), out)
    render_steady(result.extra.get("steady"), out, "sessions" if result_over_sessions(result) else "users")
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
    a, o = result.arrival, result.overall
    if not a.open_loop:
        return
    t = a.trace
    unsent = (f", {a.unsent} still queued in the client at the end (never sent, in no latency; the longest waited "
              f"{(a.unsent_wait_ms or 0) / 1000:.3g} s)") if a.unsent else ""  # fmt: skip
    if t is not None:
        sent = (f"{a.started} of {t.entries} sessions sent ({o.requests} turns)" if over_sessions([o])
                else f"{a.started} of {t.entries} entries sent")  # a trace of sessions only: its entries are sessions
        what = (f"trace replay {t.file.rsplit('/', 1)[-1]}: {sent}{unsent} at speedup "
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


def _render_grades(result: RunResult, out: TextIO) -> None:
    """TTFT grade per class (p50; an embeddings or rerank run: its latency, E2E), and output tokens/s per GPU when the GPU count is known."""
    metric, what = ("e2e", "latency p50 grade (E2E; ") if batched(result.overall) else ("ttft", "TTFT p50 grade (")
    grades = [f"{name} {g} ({s.lat(metric).p50:.0f} ms)" for name, s in result.classes.items()
              if (g := grade_ttft(s.lat(metric).p50)) is not None]  # fmt: skip
    if grades:
        out.write(f"{what}excellent < 300 ms, good < 800 ms, pass < 1.5 s, poor < 2 s, bad): "
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
