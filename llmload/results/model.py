"""The typed results of a run: what was measured, per class, per ladder step and overall.

Built straight from the merged histograms (:mod:`~llmload.results.build`), or read back from
a saved ``summary.json`` (:mod:`~llmload.results.summary_reader`); written out by
:mod:`~llmload.results.summary`. Nothing here is rounded: latencies are milliseconds as the
histograms give them, rates are exact quotients; writers round.

=================  ==========================================================================
type               what
=================  ==========================================================================
:class:`Latency`   one latency metric over successful requests: count, mean, p50/p90/p99, min, max
                   (:mod:`llmload.metrics.latency`)
:class:`Stats`     one request class (or all): the core's counters, rates, latencies and errors by
                   kind, and each part's frozen figures (:mod:`llmload.metrics.parts`: reasoning,
                   phases, goodput, backoff, prefix cache, per conversation turn, ...)
:class:`StepResult`  one ladder step: its window, its steady-window Stats, p50 intervals, signals
:class:`RunResult` the run: overall, classes, steps, its setup and the load generator's state
                   (:mod:`~llmload.results.setup`), collection blocks,
                   and the :class:`~llmload.results.judgement.Judgement` once analysed
=================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from llmload.metrics.definitions import METRICS
from llmload.metrics.latency import Latency
from llmload.metrics.parts import parts
from llmload.metrics.parts.contract import Figures
from llmload.metrics.parts.goodput import Goodput, SloFigures
from llmload.metrics.parts.phases import TAIL_QUANTILES, Phases, TailShare
from llmload.metrics.parts.prefix_cache import CacheFigures
from llmload.metrics.parts.reasoning import ReasoningFigures
from llmload.metrics.parts.reconnects import ReconnectFigures
from llmload.metrics.parts.turns import TurnFigures, TurnResult
from llmload.metrics.parts.waits import BackoffFigures
from llmload.results.judgement import Judgement
from llmload.results.setup import LoadState, RunSetup, WrittenViews
from llmload.results.threshold_verdict import ThresholdResult

__all__ = [
    "BASELINE_STEP",
    "CI_LATENCIES",
    "LATENCY_KEYS",
    "TAIL_QUANTILES",
    "ArrivalResult",
    "Goodput",
    "Latency",
    "Phases",
    "RunResult",
    "SignalStats",
    "Stats",
    "StepResult",
    "TailShare",
    "TraceReplay",
    "TurnResult",
]

#: Step index of the single-request pre-run (``--baseline-requests``).
BASELINE_STEP = -1
#: The latency metrics every Stats holds, in display order.
LATENCY_KEYS = METRICS
#: The headline latencies whose p50/p90/p99 carry a 95 % interval (:mod:`llmload.metrics.confidence`).
CI_LATENCIES = ("ttft", "tpot", "itl", "e2e")

#: Signal statistics over a window: ``{signal: {"mean", "min", "max", "last", "samples"}}``.
SignalStats = dict[str, dict[str, float]]


def _empty_latency() -> dict[str, Latency]:
    return {m: Latency() for m in LATENCY_KEYS}


def _no_parts() -> dict[str, Figures]:
    return {}


_F = TypeVar("_F", bound=Figures)


@dataclass(frozen=True, slots=True)
class Stats:
    """One request class, or all classes, over a span of test time.

    ``requests = ok + errors + interrupted``. Latencies and token counts cover successful
    requests; ``requests_per_s`` is successful requests per second of the span and
    ``output_tokens_per_s`` their output tokens per second. These fields are the core's
    (:mod:`llmload.metrics.parts.outcomes`); every other figure is a part's, in ``parts``
    (figures key → that part's frozen figures, :mod:`llmload.metrics.parts`): :meth:`part`
    reads one (its empty figures when absent), and the properties below name the long-standing ones.
    """

    requests: int = 0
    ok: int = 0
    errors: int = 0
    interrupted: int = 0
    output_tokens: int = 0
    input_tokens: int = 0
    output_tokens_per_s: float = 0.0
    requests_per_s: float = 0.0
    latency: Mapping[str, Latency] = field(default_factory=_empty_latency)
    output_tokens_from_usage_ratio: float | None = None  # share of successful requests whose count came from usage
    partial_output_tokens: int = 0  # tokens received by requests that then failed or were cut
    received_output_tokens: int | None = None  # every output token that arrived, any outcome (None: not recorded)
    received_output_tokens_per_s: float | None = None
    errors_by_kind: Mapping[str, int] = field(default_factory=dict)
    buffered_token_jumps: int = 0  # events that carried k > 1 tokens (usage jumped), any outcome
    errors_examples: Mapping[str, str] = field(default_factory=dict)  # kind -> the server's message, first seen
    client_wait: Latency | None = None  # open loop: actual − intended send of every sent request (None: closed loop)
    parts: Mapping[str, Figures] = field(default_factory=_no_parts)

    def part(self, kind: type[_F]) -> _F:
        """The figures of the part whose figures class is ``kind`` (empty figures when this Stats has none)."""
        got = self.parts.get(kind.key)
        return got if isinstance(got, kind) else kind()

    def with_part(self, figures: Figures) -> Stats:
        """A copy with ``figures`` in place of its part's."""
        return replace(self, parts={**self.parts, figures.key: figures})

    def figures(self) -> list[Figures]:
        """Every registered part's figures, in the parts' order (empty figures for a part this Stats lacks)."""
        return [self.part(p.figures) for p in parts()]

    @property
    def reconnects(self) -> int:  # requests sent again on a fresh connection (stale keep-alive), any outcome
        return self.part(ReconnectFigures).reconnects

    @property
    def reasoning_tokens(self) -> int:  # reasoning tokens of successful requests (usage when sent, else counted)
        return self.part(ReasoningFigures).tokens

    @property
    def reasoning_from_usage(self) -> int:  # successful requests that reasoned, their count from usage
        return self.part(ReasoningFigures).from_usage

    @property
    def reasoning_counted(self) -> int:  # successful requests that reasoned, their count from the stream
        return self.part(ReasoningFigures).counted

    @property
    def hidden_reasoning(self) -> int:  # successful requests whose usage says reasoning the stream never showed
        return self.part(ReasoningFigures).hidden

    @property
    def phases(self) -> Phases:
        return self.part(Phases)

    @property
    def goodput(self) -> Goodput | None:  # None: the run had no SLOs
        return self.part(SloFigures).goodput

    @property
    def backoffs(self) -> int:  # waits after a failed request (--error-backoff)
        return self.part(BackoffFigures).backoffs

    @property
    def backoff_s(self) -> float:  # user-seconds spent in them
        return self.part(BackoffFigures).backoff_s

    @property
    def retry_afters(self) -> int:  # failed requests whose 429/503 carried a readable Retry-After
        return self.part(BackoffFigures).retry_afters

    @property
    def retry_after_s(self) -> float | None:  # the mean wait they asked for (None: none did)
        return self.part(BackoffFigures).retry_after_s

    @property
    def cached_prompt_tokens(self) -> int:  # prompt tokens the server says it served from its prefix cache
        return self.part(CacheFigures).cached_prompt_tokens

    @property
    def prefix_cache_hit_ratio(self) -> float | None:  # cached / prompt tokens where stated (None: never stated)
        return self.part(CacheFigures).prefix_cache_hit_ratio

    @property
    def by_turn(self) -> Mapping[str, TurnResult]:  # conversation turns: "1", "2", ..., "10+"
        return self.part(TurnFigures).by_turn

    def lat(self, metric: str) -> Latency:
        """``"ttft"`` → its :class:`Latency` (empty when unknown)."""
        return self.latency.get(metric) or Latency()

    @property
    def reasoned(self) -> int:
        """Successful requests that reasoned (reasoning tokens > 0, streamed or hidden)."""
        return self.reasoning_from_usage + self.reasoning_counted

    @property
    def reasoning_tokens_mean(self) -> float | None:
        """Reasoning tokens per request that reasoned."""
        return self.reasoning_tokens / self.reasoned if self.reasoned else None

    @property
    def finished(self) -> int:
        """Requests with an outcome the verdict can judge (ok + errors)."""
        return self.ok + self.errors

    @property
    def error_rate(self) -> float | None:
        """``errors / (ok + errors)``; interrupted requests, cut off at the stop, are neither."""
        return self.errors / self.finished if self.finished else None

    def in_flight_mean(self, users: int, span_s: float) -> float | None:
        """Mean requests in flight by Little's law, ``L = λ · W``, capped at ``users``.

        ``λ`` = requests started per second of the span (every outcome), ``W`` = the mean
        E2E of the successful requests (failed ones are assumed to last as long). Users are
        closed loops with at most one request each, hence the cap.
        """
        e2e = self.lat("e2e").mean
        if span_s <= 0 or e2e is None:
            return None
        return min(float(users), self.requests / span_s * e2e / 1000.0)


@dataclass(frozen=True, slots=True)
class TraceReplay:
    """A trace replay (``--trace``): the file's entries (after ``--trace-limit``) and how fast they were sent.

    ``span_s``: first to last arrival at the speedup (trace time / speedup); ``block_reuse``:
    share of the listed ``hash_ids`` blocks that repeat an earlier entry's (the reuse a prefix
    cache can find); ``offered_rate``: entries per second of the span (None for one entry).
    """

    file: str
    entries: int
    speedup: float
    span_s: float
    block_reuse: float

    @property
    def offered_rate(self) -> float | None:
        return self.entries / self.span_s if self.span_s > 0 else None


@dataclass(frozen=True, slots=True)
class ArrivalResult:
    """How requests arrived: ``mode`` ``closed`` (nothing else set), or an open-loop process.

    ``offered_rate`` is the schedule's rate (None for a rate ladder: see its steps), ``achieved_rate``
    requests started per second of test time; ``arrivals`` due in the run, ``sent`` those a user sent
    (None: all, an older summary), ``waited`` the sent that found every user busy and queued (the ``-u``
    cap); :attr:`unsent` the due never sent (queued at the end), ``unsent_wait_ms`` their longest wait;
    ``schedule_lag`` the dispatchers' own lateness (ms); ``scheduler_behind`` its p99 above
    :data:`~llmload.metrics.arrival_stats.SCHEDULE_LAG_P99_BOUND_S`. ``mode`` ``trace``: a trace replay
    (``trace``; its offered rate is the trace's mean rate at the speedup).
    """

    mode: str = "closed"
    offered_rate: float | None = None
    achieved_rate: float | None = None
    arrivals: int = 0
    waited: int = 0
    schedule_lag: Latency = field(default_factory=Latency)
    scheduler_behind: bool = False
    burstiness: float | None = None
    trace: TraceReplay | None = None
    sent: int | None = None
    unsent_wait_ms: float | None = None

    @property
    def open_loop(self) -> bool:
        return self.mode != "closed"

    @property
    def started(self) -> int:
        """Arrivals sent (a request started for each)."""
        return self.arrivals if self.sent is None else self.sent

    @property
    def unsent(self) -> int:
        """Arrivals due that were never sent (still waiting for a free user when the run ended)."""
        return max(self.arrivals - self.started, 0)


@dataclass(frozen=True, slots=True)
class StepResult:
    """One ladder step: when it ran (wall clock, s), and requests that *started* in its steady window.

    ``index`` -1 is the single-request pre-run (:data:`BASELINE_STEP`). Rates are per
    second of the steady window (``steady_s``). ``ci`` holds the 95 % interval of the
    step's p50 (``{"ttft": (lo, hi), "tpot": (lo, hi)}``, ms) when it was built from
    histograms; ``server``/``gpu`` the signals over the steady window when collected.
    """

    index: int
    users: int
    started_at: float
    steady_from: float | None = None
    ended_at: float | None = None
    steady_s: float = 0.0
    overall: Stats = field(default_factory=Stats)
    classes: Mapping[str, Stats] = field(default_factory=dict)
    ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    server: SignalStats = field(default_factory=dict)
    gpu: SignalStats = field(default_factory=dict)
    rate_offered: float | None = None  # a rate ladder's step: its offered rate (requests/s); None otherwise
    rate_achieved: float | None = None  # requests started in the steady window / steady_s

    @property
    def label(self) -> str:
        """``"8 users"``, ``"4 req/s"`` (a rate step) or ``"baseline"``."""
        if self.index == BASELINE_STEP:
            return "baseline"
        if self.rate_offered is not None:
            return f"{self.rate_offered:g} req/s"
        return "1 user" if self.users == 1 else f"{self.users} users"


@dataclass(frozen=True, slots=True)
class RunResult(WrittenViews):
    """A whole run. ``setup``: what it was asked to do, ``load``: the load generator's state (typed:
    :mod:`~llmload.results.setup`); ``server``, ``gpu``, ``timeseries``: the collector's public dicts
    (:mod:`llmload.collect`); ``extra`` keeps keys a loader did not know."""

    duration_s: float
    users_max: int
    overall: Stats
    classes: Mapping[str, Stats] = field(default_factory=dict)
    weights: Mapping[str, float | None] = field(default_factory=dict)
    steps: tuple[StepResult, ...] = ()
    started_at: str | None = None
    setup: RunSetup = field(default_factory=RunSetup)
    load: LoadState = field(default_factory=LoadState)
    warnings: tuple[str, ...] = ()
    server: Mapping[str, Any] | None = None
    gpu: Mapping[str, Any] | None = None
    timeseries: Mapping[str, Any] | None = None
    judgement: Judgement | None = None
    arrival: ArrivalResult = field(default_factory=ArrivalResult)
    schema: str | None = None  # as read back (a live result is written as llmload.summary/2)
    thresholds: tuple[ThresholdResult, ...] = ()  # --threshold / the profile's, judged (llmload.results.threshold_verdict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def errors_by_kind(self) -> Mapping[str, int]:
        return self.overall.errors_by_kind

    @property
    def errors_examples(self) -> Mapping[str, str]:
        return self.overall.errors_examples

    def step(self, index: int | None) -> StepResult | None:
        return next((s for s in self.steps if s.index == index), None)

    @property
    def gpu_count(self) -> int | None:
        """GPUs the collected GPU metrics saw (sidecar, dcgm-exporter, simulator), None when unknown."""
        devices = (self.gpu or {}).get("devices") or ()
        return len(devices) or None
