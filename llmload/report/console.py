"""Console rendering of a run summary: one table, per class and overall."""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["render_summary"]

_COLUMNS = (
    # header, width, getter
    ("class", 12, lambda s: s["_name"]),
    ("reqs", 7, lambda s: s["requests"]),
    ("errs", 6, lambda s: s["errors"]),
    ("TTFT p50", 9, lambda s: s["ttft_ms"]["p50"]),
    ("p90", 8, lambda s: s["ttft_ms"]["p90"]),
    ("p99", 8, lambda s: s["ttft_ms"]["p99"]),
    ("TPOT p50", 9, lambda s: s["tpot_ms"]["p50"]),
    ("p99", 8, lambda s: s["tpot_ms"]["p99"]),
    ("ITL p50", 8, lambda s: s["itl_ms"]["p50"]),
    ("p99", 8, lambda s: s["itl_ms"]["p99"]),
    ("E2E p50", 9, lambda s: s["e2e_ms"]["p50"]),
    ("p99", 9, lambda s: s["e2e_ms"]["p99"]),
    ("out tok/s", 10, lambda s: s["output_tokens_per_s"]),
    ("recv tok/s", 10, lambda s: s.get("received_output_tokens_per_s")),
    ("req/s", 7, lambda s: s["requests_per_s"]),
)


def _fmt(value: Any, width: int) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"
    else:
        text = str(value)
    return text.rjust(width) if not isinstance(value, str) or value == "-" else text.ljust(width)


def render_summary(summary: dict[str, Any], out: TextIO) -> None:
    """Write the summary table (latencies in ms) and the error breakdown to ``out``."""
    o = summary["overall"]
    out.write(
        f"\nllmload summary: {summary['duration_s']:.1f} s, up to {summary['users_max']} users"
        + (f", {summary['workers']} workers" if summary.get("workers") else "")
        + (f", api {summary['config']['api']}, model {summary['config']['model']}" if summary.get("config") else "")
        + "\n"
    )
    header = " ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w, _) in enumerate(_COLUMNS))
    out.write(header + "\n" + "-" * len(header) + "\n")
    rows = [{**s, "_name": name} for name, s in summary["classes"].items()]
    rows.append({**o, "_name": "overall"})
    for row in rows:
        out.write(" ".join(_fmt(get(row), w) for _, w, get in _COLUMNS) + "\n")
    out.write(
        f"requests = ok {o['ok']} + errors {o['errors']} + interrupted {o['interrupted']} = {o['requests']}; "
        f"latencies in ms over successful requests (TTFT also over interrupted ones that had a first token); output tokens {o['output_tokens']}"
        + (
            f" ({o['output_tokens_from_usage_ratio'] * 100:.0f}% from server usage)"
            if o.get("output_tokens_from_usage_ratio") is not None
            else ""
        )
        + (f"; received (any outcome) {o['received_output_tokens']}" if "received_output_tokens" in o else "")
        + "\n"
    )
    if o.get("reconnects"):
        out.write(
            f"reconnects: {o['reconnects']} requests sent again on a fresh connection "
            "(the server had closed a pooled keep-alive connection before answering)\n"
        )
    if summary["errors_by_kind"]:
        kinds = ", ".join(f"{k} {v}" for k, v in summary["errors_by_kind"].items())
        out.write(f"errors by kind: {kinds}\n")
    _render_ladder(summary, out)
    for warning in summary.get("warnings", []):
        out.write(f"WARNING: {warning}\n")


def _render_ladder(summary: dict[str, Any], out: TextIO) -> None:
    """Per-step lines, the verdict and the top findings (ladder runs only)."""
    steps = summary.get("steps") or []
    if not steps:
        return
    out.write("\nladder, steady windows only (ms)\n     users  TTFT p50  TPOT p50  out tok/s  errors\n")
    for st in steps:
        o = st["overall"]
        label = "baseline" if st["index"] < 0 else str(st["users"])
        out.write(
            f"  {label:>8}  {_fmt(o['ttft_ms']['p50'], 8)}  {_fmt(o['tpot_ms']['p50'], 8)}  "
            f"{_fmt(o['output_tokens_per_s'], 9)}  {o['errors']:>6}\n"
        )
    v = summary.get("verdict") or {}
    if v.get("status") in ("ok", "breach"):
        line = f"verdict: safe concurrency {v.get('safe_users')} users"
        b = v.get("breach")
        if b:
            line += f"; {b['metric']} broke the limit at {b['users']} users ({b['value']:g} > {b['limit']:g})"
        if v.get("recommended_limit") is not None:
            line += f"; recommended gateway limit {v['recommended_limit']}"
        out.write(line + "\n")
    elif v:
        out.write(f"verdict: {v.get('status')} {v.get('note') or ''}".rstrip() + "\n")
    for i, f in enumerate((summary.get("findings") or [])[:3], 1):
        out.write(f"finding {i}: {f['title']} ({f['confidence']}) — {'; '.join(f.get('evidence_text', [])[:2])}\n")
