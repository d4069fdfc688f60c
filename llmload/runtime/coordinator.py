"""The coordinator role (standalone or ``--master``): merging, lost workers, the ladder, the summary's timing.

:class:`Coordinator` merges the load processes' reports in an
:class:`~llmload.metrics.aggregation.Aggregator` (a standalone process merges its own), marks lost
workers, drives the ladder (:class:`~llmload.ladder.plan.LadderDriver`, with a fresh
:class:`~llmload.ladder.judge.LiveJudge` per test), polls engine/GPU metrics during a test
(:mod:`llmload.collect`) and times the test. What the web UI and the exporter read is its
:class:`~llmload.runtime.views.LiveViews` (``views``); when the test ends it concludes the run
(:func:`~llmload.runtime.conclusion.conclude`) and publishes it (:func:`~llmload.runtime.publish.publish`:
the console table, ``--summary-json``, the run directory).

On a master each worker sends its report at its own test stop (the runtime's stop report,
before Locust's ``client_stopped``), so when the master's ``test_stop`` fires after a stop
(the web UI's, a ladder's end) every live worker's last report is in: the summary is written
then, and the run ends when the last worker stopped (Locust's master polls its workers once a
second before it fires ``test_stop``, which added up to a second to the duration). When a
worker's stop report is missing (``quit``: the master's ``test_stop`` fires before the workers
stop; an old or lost worker) it writes the summary :data:`FINAL_REPORT_WAIT_S` later, or at
``quitting`` (headless: after ``runner.quit()`` has waited for the final reports), whichever
comes first; a test started before that (the web UI) writes it first.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, TextIO

import gevent

from llmload.collect import Collection, start_collection
from llmload.config import RunConfig
from llmload.exporter import Exporter, start_exporter
from llmload.ladder import MESSAGE as STEP_MESSAGE
from llmload.ladder import LadderDriver, LiveJudge, StepTracker
from llmload.ladder.plan import FixedLoad
from llmload.metrics.aggregation import Aggregator, ReportWire
from llmload.results import BASELINE_STEP, RunResult
from llmload.results.threshold_verdict import exit_code as thresholds_exit_code
from llmload.runtime.conclusion import LOCAL_ID, RunSpan, Setup, conclude
from llmload.runtime.publish import publish
from llmload.runtime.views import BASELINE_MIN_OK, LiveViews
from llmload.runtime.workload import run_workload
from llmload.workload import WorkloadSampler

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["BASELINE_MIN_OK", "FINAL_REPORT_WAIT_S", "LADDER_STOP_TIMEOUT_S", "LOCAL_ID", "Coordinator"]

log = logging.getLogger("llmload")
#: How long a master waits for the workers' last reports after a stop before summarising.
FINAL_REPORT_WAIT_S = 4.0
LADDER_STOP_TIMEOUT_S = 600.0
_NOT_SET = object()  # no ladder has set Locust's stop timeout


class Coordinator:
    """See the module docstring. ``master``: the reports come from workers (else from this process)."""

    def __init__(
        self,
        environment: Environment,
        steps: StepTracker,
        *,
        master: bool,
        clock: Callable[[], float] = time.monotonic,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
        out: TextIO | None = None,
        fixed_load: Callable[[], FixedLoad | None] = lambda: None,
    ) -> None:
        self._env = environment
        self.master = master
        self._out = out  # None: sys.stdout at the time of writing
        self.steps = steps
        self.aggregator = Aggregator(clock=clock)
        self._clock_ns = clock_ns  # the run's start and end (its duration)
        self.driver = LadderDriver(steps, self._baseline_ok, fixed_load)  # without a ladder: Locust's -u/-r/-t
        self.exporter: Exporter | None = None
        self.collection: Collection | None = None  # engine / GPU metrics of the current test
        self.setup: Setup  # from configure()
        self.views = LiveViews(environment, self.aggregator, steps, self.driver, setup=lambda: self.setup,
                               collection=lambda: self.collection, run_seconds=self.run_seconds)  # fmt: skip
        self.users_max = 0
        self._t0_ns = self._t1_ns = 0
        self._stop_timeout_given: Any = _NOT_SET  # Locust's stop timeout before a ladder set its own
        self._started_wall = 0.0
        self._summary_pending = False
        self._summary_greenlet: gevent.Greenlet | None = None
        self._stopped: dict[str, int] = {}  # master: perf_counter_ns of each worker's stop report in this test
        self._stopping_ns = 0  # when this test began stopping (test_stopping; 0: not yet, or Locust skipped it)
        self.last_result: RunResult | None = None
        self.last_summary: dict | None = None

    # -- configuration -------------------------------------------------------------------
    def configure(self, config: RunConfig) -> None:
        """Adopt ``config`` (at start-up and at each test start)."""
        profile, trace = run_workload(config)  # trace: --trace's entries being replayed, else None
        WorkloadSampler(profile, seed=config.seed, user_index=0)  # reads datasets now: errors before load
        self.setup = Setup(config, profile, trace, self._env.host)
        self.driver.configure(config.ladder, LiveJudge(lambda: self.aggregator.steps, config.degradation))
        if config.ladder is not None and not self._env.stop_timeout:
            # The last step's requests finish instead of being cut at the end (then they are
            # judged like every other step's); the request deadlines bound the wait.
            self._stop_timeout_given = self._env.stop_timeout
            self._env.stop_timeout = config.request_timeout or LADDER_STOP_TIMEOUT_S
        elif config.ladder is None and self._stop_timeout_given is not _NOT_SET:
            # A plain test after a ladder (the web UI form): the stop is the user's again, not the ladder's wait.
            self._env.stop_timeout, self._stop_timeout_given = self._stop_timeout_given, _NOT_SET

    def prepare_ladder(self, config: RunConfig) -> None:
        """The web UI form's ladder, checked, before its test starts: the shape's first tick (which comes before
        ``test_start``, where :meth:`configure` reads it again) already runs it."""
        self.driver.configure(config.ladder, LiveJudge(lambda: self.aggregator.steps, config.degradation))

    def start_exporter(self) -> None:
        """Bind ``/metrics`` now (a busy port is a ConfigError before any load); served until quitting."""
        runner = self._env.runner
        self.exporter = start_exporter(
            self.setup.config.exporter,
            lambda: self.views.snapshot(window=False, run=False),
            self.views.export_context,
            web_ui=self._env.web_ui,
            group=runner.greenlet if runner is not None else None,
        )

    # -- reports -------------------------------------------------------------------------
    def merge(self, source_id: str, report: ReportWire) -> None:
        self.aggregator.merge_report(source_id, report)
        if self._summary_pending:
            # The test's most users at once, from what the load processes report: Locust fires
            # spawning_complete only when a ramp completes, never for one the test outlives
            # (-u 100 -r 1 -t 60s), which left the summary at "up to 0 users".
            running = sum(w.gauges.users for w in self.aggregator.workers.values() if not w.lost)
            self.users_max = max(self.users_max, running)

    def on_worker_stopped(self, worker_id: str, report: ReportWire) -> None:
        """Master: a worker's report at its test stop (everything it measured in this test)."""
        self.merge(worker_id, report)
        self._stopped[worker_id] = self._clock_ns()

    def _workers_stopped_ns(self) -> int | None:
        """When the last live worker stopped, once every live worker's stop report is in (else None).

        Only stop reports sent after this test began stopping count: a worker whose own test stopped earlier
        (a Ctrl-C on that worker, or one Locust restarted) did not end the test, which ran on until its stop.
        """
        live = [wid for wid, w in self.aggregator.workers.items() if not w.lost]
        if not live or any(wid not in self._stopped for wid in live):
            return None
        early = {wid: self._stopped[wid] for wid in live if self._stopped[wid] < self._stopping_ns}
        if early:
            log.warning("llmload: %d worker(s) sent their stop report %.2f s before the test stopped (%s): the test's "
                        "time runs to its stop, not to theirs", len(early), (self._stopping_ns - min(early.values())) / 1e9,
                        ", ".join(sorted(early)))  # fmt: skip
            return None
        return max(self._stopped[wid] for wid in live)

    def check_workers(self, present: set[str], missing: AbstractSet[str] = frozenset(), during_test: bool = True) -> None:
        """Master: workers Locust marks ``missing`` are lost (their reports stay); during a test also those
        it no longer lists (not in ``present``) and those silent for too long."""
        agg = self.aggregator
        gone = set(missing) | ({wid for wid in agg.workers if wid not in present} if during_test else set())
        lost = [wid for wid in agg.workers if wid in gone and agg.mark_lost(wid)]
        if during_test:
            lost += agg.expire()
        for wid in lost:
            log.warning("llmload: worker %s was lost; the %d reports it sent are kept, the run goes on", wid, agg.workers[wid].reports)

    def broadcast_step(self, msg: dict) -> None:
        """The tracker's step changes, to every worker (a master's only)."""
        if self.master and self._env.runner is not None:
            self._env.runner.send_message(STEP_MESSAGE, msg)

    # -- readers -------------------------------------------------------------------------
    def run_seconds(self) -> float:
        """Test time of the current run: from test start to its stop, or to now."""
        if not self._t0_ns:
            return 0.0
        return max((self._t1_ns or self._clock_ns()) - self._t0_ns, 0) / 1e9

    def _baseline_ok(self) -> int:
        m = self.aggregator.steps.get(BASELINE_STEP)
        return m.overall().counters["ok"] if m is not None else 0

    # -- run life cycle --------------------------------------------------------------------
    def on_test_start(self, schedule_lead_s: float = 0.0) -> None:
        """A new test. ``schedule_lead_s``: a master's open-loop schedule starts that much later (the
        spawn message that carries it must reach the workers first); the test's time runs from there,
        so rates per second of test time (achieved, tokens/s) do not count the wait."""
        if self._summary_pending and not self._t1_ns:  # Locust fires test_start only from a stopped runner
            log.warning("llmload: a new test started while the last one had not stopped (runner state %s): its time "
                        "and figures restart here", getattr(self._env.runner, "state", None))  # fmt: skip
        self.aggregator.start_run()
        if self.steps.current() is None:  # else the shape's first tick, just before, entered this test's first step
            self.steps.reset()
        self.users_max = 0
        self._started_wall = time.time()
        self._stopped, self._stopping_ns = {}, 0
        if self.collection is not None:
            self.collection.stop(final=False)
        # The engine's baseline is read here, before any user starts (start_collection waits for it);
        # the test's time runs from after it, so a slow metrics endpoint is not part of the run's duration.
        self.collection = start_collection(self.setup.config.collect, self._started_wall)
        self._t0_ns, self._t1_ns = self._clock_ns() + int(schedule_lead_s * 1e9), 0
        self._summary_pending = True

    def on_spawned(self, user_count: int) -> None:
        self.users_max = max(self.users_max, user_count)

    def on_test_stopping(self) -> None:
        """The load stops now: the last step's window ends here (no request starts after it; Locust's ``test_stop``
        comes after the users' graceful stop, and on a master after up to a second of polling its workers)."""
        if self._summary_pending and not self._t1_ns:
            self._stopping_ns = self._clock_ns()
            self.steps.close()

    def on_test_stop(self, merge_final: Callable[[], None]) -> None:
        """``merge_final`` folds a standalone process's last report in (a master waits for its workers')."""
        if not self._summary_pending:
            return
        stopped = self._workers_stopped_ns() if self.master else None
        self._t1_ns = stopped or self._clock_ns()
        if self.collection is not None:
            self.collection.stop()  # the last reading closes the run's window
        self.steps.close()  # closed at the stopping already, unless Locust went straight to test_stop
        if self.master and stopped is None:  # the workers' last reports are still on their way
            self._summary_greenlet = gevent.spawn_later(FINAL_REPORT_WAIT_S, self.write_summary)
        else:
            if not self.master:
                merge_final()
            self.write_summary()

    def finish_previous(self) -> None:
        """A stopped test whose summary still waits for the workers' reports: write it now (at quitting,
        and when the next test starts, before its configuration and counts replace this one's)."""
        if self._summary_pending and self._t1_ns:
            if self._summary_greenlet is not None:
                self._summary_greenlet.kill(block=False)
            self.write_summary()

    def on_quitting(self) -> None:
        if self._summary_pending and not self._t1_ns:
            # Quitting with no test_stop (a master's stop cut short by a second Ctrl-C: Locust's quit kills
            # the greenlet waiting for the workers): the summary of what was reported, rather than none.
            self.steps.close()
            self._t1_ns = self._clock_ns()
        self.finish_previous()
        if self.collection is not None:
            self.collection.stop(final=False)

    def close(self) -> None:
        """Last of all at quitting: the exporter (after ``--exporter-linger``, which serves the final counts)."""
        if self.exporter is not None:
            self.exporter.close()

    # -- results -----------------------------------------------------------------------------
    def result(self) -> RunResult:
        """The run's typed results so far, analysed."""
        now_ns = self._clock_ns()
        end = self._t1_ns or now_ns
        span = RunSpan(self._t0_ns, end, self._started_wall, time.time() - max(now_ns - end, 0) / 1e9, self.users_max)
        return conclude(self.views.snapshot(), self.aggregator.steady, self.steps.windows, self.setup, self.collection,
                        span, master=self.master)  # fmt: skip

    def schedule_finished(self) -> bool:
        """A trace replay whose every entry was sent and answered (on every live process): the run can end."""
        return self.setup.trace is not None and self._summary_pending and self.aggregator.schedules_done()

    def write_summary(self) -> None:
        """Once per test: the console table, ``--summary-json``, the run directory (errors are one log line)."""
        if not self._summary_pending:
            return
        self._summary_pending = False
        collection = self.collection
        if collection is not None:
            collection.write_timeseries()
        result = self.result()
        config = self.setup.config
        self.last_result = result
        self.last_summary = publish(result, self._out or sys.stdout, summary_json=config.summary_json,
                                    runs_dir=config.runs_dir, host=self.setup.host,
                                    series=collection.timeseries if collection is not None else None)  # fmt: skip
        if result.thresholds:  # the process's exit code: 0 passed, 1 one failed, 3 one had no value
            self._env.process_exit_code = thresholds_exit_code(result.thresholds)
