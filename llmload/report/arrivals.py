"""The report's Arrivals section: how an open-loop run offered its requests and how well the client kept the schedule.

Only open-loop runs (``--arrival constant|poisson|gamma --rate R``, ``--rate-ladder``,
``--trace``) have one; a closed loop's report is unchanged. :func:`arrival_data` is
report.json's ``arrival`` (null in a closed loop), read from the summary's ``arrival`` block
(:func:`llmload.results.summary.arrival_dict`) and the overall ``client_wait_ms``::

    {"mode": "constant" | "poisson" | "gamma" | "trace", "burstiness": K | null,
     "offered_rate": req/s | null,            # null for a rate ladder: its steps' rates are "ladder_rates"
     "ladder_rates": [req/s] | null,
     "achieved_rate": req/s | null,           # requests started / test time, whole run
     "arrivals": n, "sent": n,                # due in the run; sent (a request started for each)
     "unsent": n, "unsent_wait_ms": ms | null,# due, never sent (queued in the client at the end); their longest wait
     "waited": n,                             # of the sent, found every user busy and queued (the -u cap)
     "held_back": n,                          # waited + unsent (unless the unsent waited only the loop's jitter)
     "cap": n,                                # -u: the most requests in flight
     "client_wait_ms": {"p50", "p99"} | null, # actual - intended send of every sent request
     "schedule_lag_ms": {"p50", "p99"},       # the dispatchers' own lateness
     "scheduler_behind": bool,                # schedule lag p99 over SCHEDULE_LAG_P99_BOUND_S
     "trace": {"file", "entries", "speedup", "span_s", "block_reuse", "sent", "complete", "turns"?} | null}

A trace of sessions only (every request a recorded session's turn, :mod:`llmload.analysis.sessions`):
its entries, as ``--trace`` counts them, are its sessions (each replayed turn after turn), and
``trace.turns`` (present for such a trace only) is the turns sent; the writers say ``16 of 16
sessions sent (64 turns)``.

:func:`arrival_html` and :func:`arrival_markdown` write the section; :func:`plain_headline`
is the headline of an open-loop run without a ladder (it has no users to name, only a rate).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from pathlib import PurePath
from typing import Any, TypedDict

from llmload.analysis.sessions import over_sessions
from llmload.metrics.arrival_stats import HELD_BACK_SHARE, SCHEDULE_LAG_P99_BOUND_S
from llmload.report import fmt
from llmload.results.arrival_block import held_back
from llmload.results.model import Latency, RunResult

__all__ = ["ArrivalData", "arrival_data", "arrival_html", "arrival_markdown", "plain_headline"]

_BOUND_MS = SCHEDULE_LAG_P99_BOUND_S * 1000.0


class LatencyPair(TypedDict):
    p50: float | None
    p99: float | None


class _TraceKeys(TypedDict):
    file: str
    entries: int
    speedup: float
    span_s: float
    block_reuse: float
    sent: int
    complete: bool


class TraceData(_TraceKeys, total=False):
    turns: int  # a trace of sessions only: the turns sent (its entries are sessions)


class ArrivalData(TypedDict):
    """report.json's ``arrival`` (module docstring)."""

    mode: str
    burstiness: float | None
    offered_rate: float | None
    ladder_rates: list[float] | None
    achieved_rate: float | None
    arrivals: int
    sent: int
    unsent: int
    unsent_wait_ms: float | None
    waited: int
    held_back: int
    cap: int
    client_wait_ms: LatencyPair | None
    schedule_lag_ms: LatencyPair | None
    scheduler_behind: bool
    trace: TraceData | None


def _lat(lat: Latency | None) -> LatencyPair | None:
    if lat is None or lat.p50 is None and lat.p99 is None:
        return None
    return {
        "p50": None if lat.p50 is None else round(lat.p50, 3),
        "p99": None if lat.p99 is None else round(lat.p99, 3),
    }


def arrival_data(result: RunResult) -> ArrivalData | None:
    """report.json's ``arrival`` (module docstring); None in a closed loop."""
    a = result.arrival
    if not a.open_loop:
        return None
    t = a.trace
    rates = result.setup.ladder.rates if a.offered_rate is None and result.setup.ladder is not None else None
    trace: TraceData | None = None
    if t is not None:
        trace = {"file": t.file, "entries": t.entries, "speedup": t.speedup, "span_s": round(t.span_s, 3),
                 "block_reuse": round(t.block_reuse, 4), "sent": a.started, "complete": a.started >= t.entries}  # fmt: skip
        if over_sessions([result.overall]):
            trace["turns"] = result.overall.requests
    return {
        "mode": a.mode,
        "burstiness": a.burstiness,
        "offered_rate": a.offered_rate,
        "ladder_rates": list(rates) if rates else None,
        "achieved_rate": a.achieved_rate,
        "arrivals": a.arrivals,
        "sent": a.started,
        "unsent": a.unsent,
        "unsent_wait_ms": a.unsent_wait_ms if a.unsent else None,
        "waited": a.waited,
        "held_back": held_back(a),
        "cap": result.users_max,
        "client_wait_ms": _lat(result.overall.client_wait),
        "schedule_lag_ms": _lat(a.schedule_lag),
        "scheduler_behind": a.scheduler_behind,
        "trace": trace,
    }


def _process(a: ArrivalData) -> str:
    if a["mode"] == "trace":
        return "trace replay (each entry sent at its timestamp / speedup)"
    if a["mode"] == "gamma" and a.get("burstiness") is not None:
        return f"gamma, burstiness {a['burstiness']:g} (1 = Poisson, lower = burstier)"
    return str(a["mode"])


def _offered(a: ArrivalData) -> str:
    if a.get("offered_rate") is not None:
        return fmt.rate(a["offered_rate"]) + (" (the trace's mean rate at its speedup)" if a["mode"] == "trace" else "")
    if rates := a.get("ladder_rates"):
        return f"{', '.join(f'{r:g}' for r in rates)} req/s, one per rate-ladder step (each step's achieved rate is in its row)"
    return fmt.DASH


def _achieved(a: ArrivalData) -> str:
    text = fmt.rate(a.get("achieved_rate"))
    offered, achieved = a.get("offered_rate"), a.get("achieved_rate")
    if offered and achieved is not None:
        text += f" ({fmt.pct(achieved / offered)} of offered)"
    return text + ", whole run"


def _pair(lat: LatencyPair | None) -> str | None:
    return None if lat is None else f"p50 {fmt.ms(lat.get('p50'))}, p99 {fmt.ms(lat.get('p99'))}"


def _waited(a: ArrivalData) -> str:
    n, waited, unsent = a.get("arrivals") or 0, a.get("waited") or 0, a.get("unsent") or 0
    sent = a.get("sent", n)
    share = f" ({fmt.pct(waited / sent)})" if sent else ""
    text = f"{n:,} sent" if not unsent else (
        f"{n:,} due, {sent:,} sent, {unsent:,} still queued in the client at the end (never sent, in no count or "
        f"latency; the longest waited {fmt.ms(a.get('unsent_wait_ms'))})"
    )  # fmt: skip
    return text + f"; {waited:,}{share} of the sent found all {fmt.users(a.get('cap'))} (the -u cap) busy and waited in the client"


def _trace_rows(t: TraceData, unsent: int) -> list[tuple[str, str]]:
    sent = f"{t['sent']:,} of {t['entries']:,} entries"
    if "turns" in t:  # a trace of sessions: its entries are sessions
        sent = f"{t['sent']:,} of {t['entries']:,} sessions ({t['turns']:,} turns)"
    if t.get("complete"):
        sent += " (complete)"
    elif unsent:
        sent += f" ({unsent:,} due but still waiting for a free user at the end: the -u cap; raise -u)"
    else:
        sent += " (the run ended first: raise --run-time, or use --trace-limit / --trace-speedup)"
    return [
        ("trace", f"{PurePath(str(t['file'])).name}: {t['entries']:,} {'sessions' if 'turns' in t else 'entries'} "
                  f"at speedup {t['speedup']:g}, "
                  f"span {fmt.num(t['span_s'])} s"),
        ("sent", sent),
        ("block reuse", f"{fmt.pct(t['block_reuse'])} of hash_ids blocks repeat an earlier entry's (what a prefix cache can hit)"),
    ]  # fmt: skip


def _rows(a: ArrivalData) -> list[tuple[str, str]]:
    rows = [("process", _process(a)), ("offered", _offered(a)), ("achieved", _achieved(a)), ("arrivals", _waited(a))]
    rows += [
        (k, v)
        for k, v in (("client wait", _pair(a.get("client_wait_ms"))), ("send lag", _pair(a.get("schedule_lag_ms"))))
        if v
    ]
    if trace := a.get("trace"):
        rows += _trace_rows(trace, a.get("unsent") or 0)
    return rows


#: What the two waits mean: one sentence, the same in every writer.
MEANING = (
    "Client wait is actual minus intended send of each request, and TTFT and E2E include it: a request waits when every "
    "user is busy (it queues for a free slot under the -u cap) or when the generator itself is late; send lag is that "
    f"lateness alone (over {_BOUND_MS:g} ms p99, the client, not the server, delayed sends)."
)


def _reading(a: ArrivalData) -> str:
    """What this run's figures say: the cap held arrivals back, the generator fell behind, or the schedule was kept."""
    n, waited = a.get("arrivals") or 0, a.get("waited") or 0
    held = a.get("held_back", waited)
    lag = a.get("schedule_lag_ms")
    lag99 = lag.get("p99") if lag else None
    out = []
    if n and held > HELD_BACK_SHARE * n:
        never = f" ({a['unsent']:,} of them never sent)" if a.get("unsent") else ""
        out.append(f"Here {fmt.pct(held / n)} of arrivals waited for a free user{never}: the -u cap, not the server, "
                   "held them back; raise -u to offer the whole rate to the server.")  # fmt: skip
    if a.get("scheduler_behind"):
        out.append(f"The generator fell behind its schedule (send lag p99 {fmt.ms(lag99)} > {_BOUND_MS:g} ms): add "
                   "processes (--processes N) or lower the rate.")  # fmt: skip
    if not out:
        out.append("Here the client kept the schedule: " + ("no arrival" if not waited else "almost no arrival")
                   + f" waited for a user and the send lag stayed under {_BOUND_MS:g} ms p99.")  # fmt: skip
    return " ".join(out)


def arrival_html(r: Mapping[str, Any]) -> str:
    """The HTML section; "" for a closed loop."""
    a = r.get("arrival")
    if not a:
        return ""
    e = lambda v: escape(str(v), quote=True)  # noqa: E731
    rows = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in _rows(a))
    return (f'<section><h2>Arrivals</h2><p class="note">{e(MEANING)}</p><dl class="kv">{rows}</dl>'
            f'<p class="note">{e(_reading(a))}</p></section>')  # fmt: skip


def arrival_markdown(r: Mapping[str, Any]) -> list[str]:
    """The record's arrival facts (a list item with one sub-item per figure); [] for a closed loop."""
    a = r.get("arrival")
    if not a:
        return []
    return ["- arrivals (open loop):", *(f"  - {k}: {v}" for k, v in _rows(a)), f"  - {_reading(a)}", f"  - {MEANING}"]


def plain_headline(r: Mapping[str, Any]) -> tuple[str, str] | None:
    """(headline, the sentence under it) of an open-loop run without a ladder; None for a closed loop."""
    a, run = r.get("arrival"), r["run"]
    if not a:
        return None
    took = f"for {fmt.num(run.get('duration_s'))} s"
    if a["mode"] == "trace" and a.get("trace"):
        name = PurePath(str(a["trace"]["file"])).name
        return (f"Trace replay: {name} {took}, achieved {fmt.rate(a.get('achieved_rate'))}",
                "A trace replay has no ladder, so no safe-rate verdict; the Arrivals section says how the schedule was kept.")  # fmt: skip
    return (f"Open-loop run: {a['mode']} at {fmt.rate(a.get('offered_rate'))} {took} (-u cap {a.get('cap')})",
            "No ladder in this run, so no safe-rate verdict. Run with --rate-ladder 1,2,4,8 (offered rates) to find it.")  # fmt: skip
