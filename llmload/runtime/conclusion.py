"""The run's conclusion: what the coordinator knows when a test ends -> the typed, analysed :class:`RunResult`.

:func:`conclude` is a pure function of its inputs (no clock, no Locust, no output): the merged
:class:`~llmload.metrics.aggregation.Snapshot` and the aggregator's steady-state slices, the ladder's
step windows, the :class:`Setup` adopted at the test start, the engine/GPU collection (None without
one) and the test's :class:`RunSpan`. The coordinator (:mod:`llmload.runtime.coordinator`) times the
run and calls it; the publisher (:mod:`llmload.runtime.publish`) writes what it returns.

:func:`offer` is the one place the offered rate of a run's setup is decided (a replayed trace's
mean rate at its speedup, else ``--rate``): the conclusion's arrival block and the live views'
:meth:`~llmload.runtime.views.LiveViews.offered_rate` both read it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from llmload.analysis import analyze
from llmload.config import RunConfig
from llmload.ladder.plan import cut_short
from llmload.metrics.warmup_window import warmup_into
from llmload.results import RunResult, RunSetup, build_result, series_from_timeseries
from llmload.results.build import arrival_result, load_generator, trace_replay
from llmload.workload import Profile
from llmload.workload.traces import Trace

if TYPE_CHECKING:
    from llmload.collect import Collection
    from llmload.ladder.tracker import StepWindow
    from llmload.metrics.aggregation import Snapshot
    from llmload.metrics.steady import SteadySlices
    from llmload.results.arrival_block import TraceReplay

__all__ = ["LOCAL_ID", "RunSpan", "Setup", "conclude", "offer"]

#: The aggregator's name for a standalone process's own reports.
LOCAL_ID = "local"


def offer(config: RunConfig, trace: Trace | None) -> tuple[TraceReplay | None, float | None]:
    """(the replayed trace's summary block or None, the rate the setup offers: the trace's mean at its speedup,
    else ``--rate``; None in a closed loop without one). A rate ladder's per-step rate is the live views'."""
    arrival = config.arrival
    replay = trace_replay(trace, arrival.trace.speedup) if trace is not None and arrival.trace is not None else None
    return replay, (replay.offered_rate if replay is not None else arrival.rate)


@dataclass(frozen=True)
class Setup:
    """What the coordinator adopted at a test start: the run's configuration, the profile it runs (a trace
    replay's own), the replayed trace (``--trace``; else None) and the Locust host the load went to."""

    config: RunConfig
    profile: Profile
    trace: Trace | None = None
    host: str | None = None
    #: Whether any request class has an SLO (every Stats then gets ``goodput``).
    slos: bool = field(init=False)
    #: :func:`offer` of this setup, decided once.
    replay: TraceReplay | None = field(init=False)
    rate: float | None = field(init=False)

    def __post_init__(self) -> None:
        slos = RunSetup.from_run(self.config, self.profile).slos is not None
        object.__setattr__(self, "slos", slos)
        replay, rate = offer(self.config, self.trace)
        object.__setattr__(self, "replay", replay)
        object.__setattr__(self, "rate", rate)


@dataclass(frozen=True)
class RunSpan:
    """The test's times: ``start_ns``/``end_ns`` on the coordinator's monotonic ns clock (``start_ns`` 0: no
    test started), the wall clock at its start and at ``end_ns``, and its most users at once."""

    start_ns: int
    end_ns: int
    started_wall: float
    ended_wall: float
    users_max: int = 0

    @property
    def seconds(self) -> float:
        return max(self.end_ns - self.start_ns, 0) / 1e9 if self.start_ns else 0.0


def conclude(
    snap: Snapshot,
    steady: SteadySlices,
    windows: Sequence[StepWindow],
    setup: Setup,
    collection: Collection | None,
    span: RunSpan,
    *,
    master: bool,
) -> RunResult:
    """The run's typed results, analysed. ``master``: the reports came from workers (the summary counts them)."""
    config, profile = setup.config, setup.profile
    load = load_generator(snap, master=master, local_id=LOCAL_ID)
    if (cut := cut_short(config.ladder, list(windows))) is not None:
        load["warnings"] = (*load["warnings"], cut)
    total_s = span.seconds
    steady.into(load, windows, span.ended_wall)
    arrival = config.arrival
    burst = arrival.spec.burstiness if arrival.mode == "gamma" else None
    result = build_result(
        snap.run,
        duration_s=total_s - warmup_into(load, snap, config.warmup, total_s),  # its block, or a warning
        users_max=span.users_max,
        weights={c.name: c.weight for c in profile.classes},
        windows=windows,
        step_metrics=snap.steps,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(span.started_wall)),
        setup=RunSetup.from_run(config, profile, setup.host),
        load=load,
        collection=collection.summary_extra() if collection is not None else None,
        series=series_from_timeseries(collection.timeseries()) if collection is not None else ({}, {}),
        slos=setup.slos,
        # the arrival block before its achieved rate (build_result computes that from the requests)
        arrival=arrival_result(arrival.mode, setup.rate, snap.arrivals, 0, 0.0, burst, trace=setup.replay),
        thresholds=(*config.thresholds, *profile.thresholds),
    )
    return replace(result, judgement=analyze(result, config.degradation))
