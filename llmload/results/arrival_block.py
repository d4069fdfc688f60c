"""The results' ``arrival`` block of an open-loop run, and what it warns about.

:func:`arrival_result` makes the block from the dispatchers' merged
:class:`~llmload.metrics.arrival_stats.ArrivalStats` (arrivals due, sent, waited, the longest wait of
the unsent, the schedule lag); :func:`trace_replay` says what a replayed trace was;
:func:`arrival_warnings` are the summary's warnings: the ``-u`` cap held arrivals back (the
sent ones that waited for a free user and the unsent ones: :func:`held_back`), a trace not
replayed to its end (entries still queued, or not due yet), the dispatcher behind its schedule.
"""

from __future__ import annotations

from llmload.metrics.arrival_stats import HELD_BACK_SHARE, QUEUE_JITTER_S, SCHEDULE_LAG_P99_BOUND_S, ArrivalStats
from llmload.metrics.definitions import achieved_rate
from llmload.results.model import ArrivalResult, Latency, Stats, TraceReplay
from llmload.workload.traces import Trace

__all__ = ["arrival_result", "arrival_warnings", "held_back", "trace_replay"]


def arrival_result(
    mode: str, offered_rate: float | None, stats: ArrivalStats | None, requests: int, duration_s: float,
    burstiness: float | None = None, trace: TraceReplay | None = None,
) -> ArrivalResult:
    """The ``arrival`` block: ``closed``, or the open loop's offered/achieved rates and its dispatchers' statistics."""
    if mode == "closed":
        return ArrivalResult()
    stats = stats or ArrivalStats()
    lag = Latency.from_histogram(stats.lag)
    behind = lag.p99 is not None and lag.p99 > SCHEDULE_LAG_P99_BOUND_S * 1000.0
    unsent_wait = stats.unsent_wait * 1000.0 if stats.unsent else None
    return ArrivalResult(mode, offered_rate, achieved_rate(requests, duration_s), stats.arrivals, stats.waited, lag,
                         behind, burstiness, trace, stats.sent, unsent_wait)  # fmt: skip


def trace_replay(trace: Trace, speedup: float) -> TraceReplay:
    """What the summary says of a replayed trace (``--trace``)."""
    return TraceReplay(str(trace.path), len(trace.arrivals), speedup, trace.duration_ms / 1000.0 / speedup, trace.block_reuse())


def held_back(a: ArrivalResult) -> int:
    """Arrivals the ``-u`` cap held back: the sent ones that waited for a free user, and the unsent ones (unless
    even the longest of their waits is the event loop's jitter: an arrival due just as the run ended)."""
    unsent_waited = a.unsent_wait_ms is not None and a.unsent_wait_ms > QUEUE_JITTER_S * 1000.0
    return a.waited + (a.unsent if unsent_waited else 0)


def arrival_warnings(a: ArrivalResult, overall: Stats, users: int) -> list[str]:
    """Open loop: the ``-u`` cap held arrivals back (some never sent); a trace not replayed to its end; the dispatcher
    fell behind its schedule."""
    out = []
    held, unsent = held_back(a), a.unsent
    if a.open_loop and a.arrivals and held > HELD_BACK_SHARE * a.arrivals:
        wait = overall.client_wait.p50 if overall.client_wait is not None else None
        offered = f"{round(a.offered_rate, 2):g}/s" if a.offered_rate is not None else "the ladder's rates"
        never = (f"; {unsent} of them were still queued at the end (the longest for {(a.unsent_wait_ms or 0) / 1000:.3g} s) "
                 "and never sent: they are in no count and no latency") if unsent else ""  # fmt: skip
        out.append(
            f"the -u cap ({users} requests in flight) held arrivals back: {held} of {a.arrivals} arrivals "
            f"({held / a.arrivals:.0%}) found every user busy and waited in the client"
            f"{f' (client wait p50 {wait:.0f} ms)' if wait is not None else ''}{never}; offered {offered}, achieved "
            f"{a.achieved_rate or 0:.3g}/s. Latencies include that wait (they run from the intended send time); "
            "raise -u to offer the whole rate to the server"
        )
    if a.trace is not None and a.started < a.trace.entries:
        not_due = max(a.trace.entries - a.arrivals, 0)
        why = []
        if unsent:
            why.append(f"{unsent} were due but still waiting for a free user at the end (the -u cap: raise -u)")
        if not_due:
            why.append(f"{not_due} were not due yet when the run ended (the replay needs {a.trace.span_s:.0f} s at "
                       f"speedup {a.trace.speedup:g}: raise --run-time, or use --trace-limit / --trace-speedup)")  # fmt: skip
        out.append(f"the trace was not replayed to its end: {a.started} of its {a.trace.entries} entries were sent"
                   + "".join(f"; {w}" for w in why))  # fmt: skip
    if a.scheduler_behind:
        out.append(
            f"the arrival scheduler fell behind: schedule lag p99 {a.schedule_lag.p99:.1f} ms > "
            f"{SCHEDULE_LAG_P99_BOUND_S * 1000:g} ms (the client, not the server, delayed sends); add processes "
            "(--processes N) or lower the rate"
        )
    return out
