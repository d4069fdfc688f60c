"""The run's live views: what the web UI, its charts and the ``/metrics`` exporter read while a test runs.

:class:`LiveViews` reads the coordinator's aggregator, step tracker and ladder driver and the
:class:`~llmload.runtime.conclusion.Setup` and engine/GPU collection of the current test; it changes
nothing but the aggregator's user gauge (from Locust's runner, at
:meth:`~llmload.runtime.views.LiveViews.snapshot`). It is the web UI's :class:`~llmload.web.tables.LiveSource`;
the exporter reads :meth:`~llmload.runtime.views.LiveViews.snapshot` and
:meth:`~llmload.runtime.views.LiveViews.export_context`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmload.exporter import ExportContext
from llmload.jsonvalue import Json
from llmload.ladder import LadderDriver, StepTracker
from llmload.ladder.status import ladder_status
from llmload.metrics.aggregation import Aggregator, Snapshot

if TYPE_CHECKING:
    from locust.env import Environment

    from llmload.collect import Collection
    from llmload.collect.timeline import Timeline
    from llmload.runtime.conclusion import Setup

__all__ = ["BASELINE_MIN_OK", "LiveViews"]

#: The live baseline (exporter gauges) needs this many successful requests.
BASELINE_MIN_OK = 5


@dataclass(frozen=True, slots=True)
class ChartInputs:
    """Everything the charts read, as functions (called at each sample or request)."""

    snapshot: Callable[[], Snapshot]  # the aggregator as last reported: window and gauges
    classes: Callable[[], list[str]]  # request classes, profile order
    steps: Callable[[], Sequence[Any]]  # step windows: index, users, started_at, steady_from, ended_at
    baseline: Callable[[], dict[str, float] | None]  # live baseline, seconds: ttft_p50, ttft_p99, tpot_p50, tpot_p99
    limit_factor: Callable[[], float]  # 1 + --degradation
    timeline: Callable[[], Timeline | None]  # engine/GPU readings of the current test, None without collection
    ladder: Callable[[], dict[str, Json] | None] = lambda: None  # the ladder's status line (llmload.ladder.status)


class LiveViews:
    """See the module docstring. ``setup``, ``collection`` and ``run_seconds`` are the coordinator's, asked at
    each read (a new test replaces them)."""

    def __init__(
        self,
        environment: Environment,
        aggregator: Aggregator,
        steps: StepTracker,
        driver: LadderDriver,
        *,
        setup: Callable[[], Setup],
        collection: Callable[[], Collection | None],
        run_seconds: Callable[[], float],
    ) -> None:
        self._env = environment
        self._aggregator = aggregator
        self._steps = steps
        self._driver = driver
        self._setup = setup
        self._collection = collection
        self._run_seconds = run_seconds

    def snapshot(self, window: bool = True, run: bool = True) -> Snapshot:
        """The merged state (summary, exporter) with Locust's user count. Lags by a report interval."""
        runner = self._env.runner
        self._aggregator.users = runner.user_count if runner is not None else 0
        return self._aggregator.snapshot(window=window, run=run)

    def live_snapshot(self) -> Snapshot:
        """The web UI's view: the aggregator as last reported (nothing folded, no CPU interval restarted)."""
        return self._aggregator.snapshot()

    def run_seconds(self) -> float:
        """Test time of the current run: from test start to its stop, or to now."""
        return self._run_seconds()

    def class_order(self) -> list[str]:
        return [c.name for c in self._setup().profile.classes]

    def live_baseline(self) -> dict[str, float] | None:
        """TTFT/TPOT p50/p99 (s) of the baseline step once it has :data:`BASELINE_MIN_OK` successes, else None.

        The baseline step is the single-request pre-run (-1) when there is one, else the
        ladder's first step.
        """
        if not self._steps.windows:
            return None
        m = self._aggregator.steps.get(self._steps.windows[0].index)
        if m is None:
            return None
        o = m.overall()
        if o.counters["ok"] < BASELINE_MIN_OK:
            return None
        out = {}
        for metric in ("ttft", "tpot"):
            h = o.hist[metric]
            if h.count:
                out[f"{metric}_p50"], out[f"{metric}_p99"] = h.percentiles((0.5, 0.99))
        return out or None

    def chart_inputs(self) -> ChartInputs:
        """What the web UI's live charts read, each a function called at every sample."""

        def timeline():
            collection = self._collection()
            return collection.timeline if collection is not None else None

        return ChartInputs(
            snapshot=lambda: self._aggregator.snapshot(run=False),
            classes=self.class_order,
            steps=lambda: self._steps.windows,
            baseline=self.live_baseline,
            limit_factor=lambda: 1.0 + self._setup().config.degradation,
            timeline=timeline,
            ladder=self.ladder_status,
        )

    def ladder_status(self) -> dict[str, Json] | None:
        """The running ladder's step, time left in it and the verdict so far (None without a ladder).

        The judge is asked here too: after the ladder's end no shape ticks, and its last step's
        verdict comes once the reports are in (each step is judged once, whoever asks)."""
        judge, steps = self._driver.judge, self._steps
        if judge is not None:
            judge.check(steps.windows)
        return ladder_status(self._setup().config.ladder, steps.windows, steps.current(), self._driver.step_ends_at,
                             judge.verdict if judge else None, judge.judged if judge else 0, time.time(),
                             judge.sessions if judge else False)  # fmt: skip

    def export_context(self) -> ExportContext:
        setup = self._setup()
        cfg, step = setup.config, self._steps.current()
        return ExportContext(cfg.api, cfg.adapter.model, setup.profile.name, setup.profile.class_names,
                             step=step, baseline=self.live_baseline(), offered_rate=self.offered_rate(step),
                             slo_target=cfg.slo_attainment if setup.slos else None)  # fmt: skip

    def offered_rate(self, step: tuple[int, int, bool] | None = None) -> float | None:
        """Open loop: the rate offered now (the running rate-ladder step's, else the setup's: a trace's mean,
        ``--rate``); None in a closed loop."""
        setup = self._setup()
        arrival, ladder = setup.config.arrival, setup.config.ladder
        if not arrival.open_loop:
            return None
        if setup.replay is None and ladder is not None and ladder.by_rate:
            step = step or self._steps.current()
            return ladder.rate_at(step[0]) if step is not None else None
        return setup.rate
