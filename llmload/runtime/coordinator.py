"""The coordinator role (standalone or ``--master``): merging, exporting, collecting, judging, summarising.

:class:`Coordinator` merges the load processes' reports in an
:class:`~llmload.metrics.aggregation.Aggregator` (a standalone process merges its own),
which the exporter, the web UI and the summary read; it drives the ladder
(:class:`~llmload.ladder.plan.LadderDriver`, with a fresh
:class:`~llmload.ladder.judge.LiveJudge` per test), polls engine/GPU metrics during a test
(:mod:`llmload.collect`) and, when the test ends, builds the typed results
(:func:`~llmload.results.build.build_result`), analyses them (:func:`~llmload.analysis.analyze`)
and writes them: the console table, ``--summary-json``, the run directory.

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
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

import gevent
import orjson

from llmload.analysis import analyze
from llmload.collect import Collection, start_collection
from llmload.config import RunConfig
from llmload.exporter import ExportContext, Exporter, start_exporter
from llmload.ladder import MESSAGE as STEP_MESSAGE
from llmload.ladder import LadderDriver, LiveJudge, StepTracker
from llmload.ladder.plan import FixedLoad, cut_short
from llmload.ladder.status import ladder_status
from llmload.metrics.aggregation import Aggregator, ReportWire, Snapshot
from llmload.metrics.slo import class_slos
from llmload.metrics.warmup import warmup_into
from llmload.report.console import render_summary
from llmload.results import BASELINE_STEP, RunResult, RunSetup, build_result, series_from_timeseries, to_summary
from llmload.results.build import arrival_result, load_generator, trace_replay
from llmload.results.thresholds import exit_code as thresholds_exit_code
from llmload.rundir import save_run
from llmload.runtime.workload import run_workload
from llmload.web import ChartInputs
from llmload.workload import Profile, WorkloadSampler
from llmload.workload.traces import Trace

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["BASELINE_MIN_OK", "FINAL_REPORT_WAIT_S", "LADDER_STOP_TIMEOUT_S", "LOCAL_ID", "Coordinator"]

log = logging.getLogger("llmload")
#: How long a master waits for the workers' last reports after a stop before summarising.
FINAL_REPORT_WAIT_S = 4.0
#: The aggregator's name for a standalone process's own reports.
LOCAL_ID = "local"
#: The live baseline (exporter gauges) needs this many successful requests.
BASELINE_MIN_OK = 5
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
        self.users_max = 0
        self._t0_ns = self._t1_ns = 0
        self._stop_timeout_given: Any = _NOT_SET  # Locust's stop timeout before a ladder set its own
        self._started_wall = 0.0
        self._summary_pending = False
        self._summary_greenlet: gevent.Greenlet | None = None
        self._stopped: dict[str, int] = {}  # master: perf_counter_ns of each worker's stop report in this test
        self.last_result: RunResult | None = None
        self.last_summary: dict | None = None

    # -- configuration -------------------------------------------------------------------
    def configure(self, config: RunConfig) -> None:
        """Adopt ``config`` (at start-up and at each test start)."""
        self.config = config
        self.profile: Profile
        self.trace: Trace | None  # --trace: the entries being replayed
        self.profile, self.trace = run_workload(config)
        WorkloadSampler(self.profile, seed=config.seed, user_index=0)  # reads datasets now: errors before load
        self.slos = class_slos({c.name: c.slo for c in self.profile.classes}, config.slo)  # None: no SLOs
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
            self.config.exporter,
            lambda: self.snapshot(window=False, run=False),
            self.export_context,
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
        """When the last live worker stopped, once every live worker's stop report is in (else None)."""
        live = [wid for wid, w in self.aggregator.workers.items() if not w.lost]
        if not live or any(wid not in self._stopped for wid in live):
            return None
        return max(self._stopped[wid] for wid in live)

    def check_workers(self, present: set[str], missing: set[str] = frozenset(), during_test: bool = True) -> None:
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
    def snapshot(self, window: bool = True, run: bool = True) -> Snapshot:
        """The merged state (summary, exporter); no side effects. Lags by a report interval."""
        runner = self._env.runner
        self.aggregator.users = runner.user_count if runner is not None else 0
        return self.aggregator.snapshot(window=window, run=run)

    def live_snapshot(self) -> Snapshot:
        """The web UI's view: the aggregator as last reported (nothing folded, no CPU interval restarted)."""
        return self.aggregator.snapshot()

    def class_order(self) -> list[str]:
        return [c.name for c in self.profile.classes]

    def run_seconds(self) -> float:
        """Test time of the current run: from test start to its stop, or to now."""
        if not self._t0_ns:
            return 0.0
        return max((self._t1_ns or self._clock_ns()) - self._t0_ns, 0) / 1e9

    def _baseline_ok(self) -> int:
        m = self.aggregator.steps.get(BASELINE_STEP)
        return m.overall().counters["ok"] if m is not None else 0

    def live_baseline(self) -> dict[str, float] | None:
        """TTFT/TPOT p50/p99 (s) of the baseline step once it has :data:`BASELINE_MIN_OK` successes, else None.

        The baseline step is the single-request pre-run (-1) when there is one, else the
        ladder's first step.
        """
        if not self.steps.windows:
            return None
        m = self.aggregator.steps.get(self.steps.windows[0].index)
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
        return ChartInputs(
            snapshot=lambda: self.aggregator.snapshot(run=False),
            classes=self.class_order,
            steps=lambda: self.steps.windows,
            baseline=self.live_baseline,
            limit_factor=lambda: 1.0 + self.config.degradation,
            timeline=lambda: self.collection.timeline if self.collection is not None else None,
            ladder=self.ladder_status,
        )

    def ladder_status(self) -> dict[str, Any] | None:
        """The running ladder's step, time left in it and the verdict so far (None without a ladder).

        The judge is asked here too: after the ladder's end no shape ticks, and its last step's
        verdict comes once the reports are in (each step is judged once, whoever asks)."""
        judge = self.driver.judge
        if judge is not None:
            judge.check(self.steps.windows)
        return ladder_status(self.config.ladder, self.steps.windows, self.steps.current(), self.driver.step_ends_at,
                             judge.verdict if judge else None, judge.judged if judge else 0, time.time())  # fmt: skip

    def export_context(self) -> ExportContext:
        cfg = self.config
        step = self.steps.current()
        return ExportContext(cfg.api, cfg.adapter.model, self.profile.name, self.profile.class_names,
                             step=step, baseline=self.live_baseline(), offered_rate=self.offered_rate(step),
                             slo_target=cfg.slo_attainment if self.slos is not None else None)  # fmt: skip

    def offered_rate(self, step: tuple[int, int, bool] | None = None) -> float | None:
        """Open loop: the rate offered now (``--rate``, the running rate-ladder step's, a trace's mean); None in a closed loop."""
        arrival, ladder = self.config.arrival, self.config.ladder
        if not arrival.open_loop:
            return None
        if self.trace is not None and arrival.trace is not None:  # the trace's mean rate at its speedup
            return trace_replay(self.trace, arrival.trace.speedup).offered_rate
        if ladder is not None and ladder.by_rate:
            step = step or self.steps.current()
            return ladder.rate_at(step[0]) if step is not None else None
        return arrival.rate

    # -- run life cycle --------------------------------------------------------------------
    def on_test_start(self, schedule_lead_s: float = 0.0) -> None:
        """A new test. ``schedule_lead_s``: a master's open-loop schedule starts that much later (the
        spawn message that carries it must reach the workers first); the test's time runs from there,
        so rates per second of test time (achieved, tokens/s) do not count the wait."""
        self.aggregator.start_run()
        if self.steps.current() is None:  # else the shape's first tick, just before, entered this test's first step
            self.steps.reset()
        self.users_max = 0
        self._started_wall = time.time()
        self._stopped = {}
        if self.collection is not None:
            self.collection.stop(final=False)
        # The engine's baseline is read here, before any user starts (start_collection waits for it);
        # the test's time runs from after it, so a slow metrics endpoint is not part of the run's duration.
        self.collection = start_collection(self.config.collect, self._started_wall)
        self._t0_ns, self._t1_ns = self._clock_ns() + int(schedule_lead_s * 1e9), 0
        self._summary_pending = True

    def on_spawned(self, user_count: int) -> None:
        self.users_max = max(self.users_max, user_count)

    def on_test_stopping(self) -> None:
        """The load stops now: the last step's window ends here (no request starts after it; Locust's ``test_stop``
        comes after the users' graceful stop, and on a master after up to a second of polling its workers)."""
        if self._summary_pending and not self._t1_ns:
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
        snap = self.snapshot()
        end = self._t1_ns or self._clock_ns()
        collection = self.collection
        load = load_generator(snap, master=self.master, local_id=LOCAL_ID)
        if (cut := cut_short(self.config.ladder, self.steps.windows)) is not None:
            load["warnings"] = (*load["warnings"], cut)
        total_s = max(end - self._t0_ns, 0) / 1e9 if self._t0_ns else 0.0
        self.aggregator.steady.into(load, self.steps.windows, time.time() - max(self._clock_ns() - end, 0) / 1e9)
        result = build_result(
            snap.run,
            duration_s=total_s - warmup_into(load, snap, self.config.warmup, total_s),  # its block, or a warning
            users_max=self.users_max,
            weights={c.name: c.weight for c in self.profile.classes},
            windows=self.steps.windows,
            step_metrics=snap.steps,
            started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started_wall)),
            setup=RunSetup.from_run(self.config, self.profile, self._env.host),
            load=load,
            collection=collection.summary_extra() if collection is not None else None,
            series=series_from_timeseries(collection.timeseries()) if collection is not None else ({}, {}),
            slos=self.slos is not None,
            arrival=self._arrival(snap),
            thresholds=(*self.config.thresholds, *self.profile.thresholds),
        )
        return replace(result, judgement=analyze(result, self.config.degradation))

    def _arrival(self, snap: Snapshot):
        """The arrival block before its achieved rate (build_result computes that from the requests)."""
        a = self.config.arrival
        burst = a.spec.burstiness if a.mode == "gamma" else None
        replay = trace_replay(self.trace, a.trace.speedup) if self.trace is not None and a.trace is not None else None
        rate = replay.offered_rate if replay is not None else a.rate
        return arrival_result(a.mode, rate, snap.arrivals, 0, 0.0, burst, trace=replay)

    def schedule_finished(self) -> bool:
        """A trace replay whose every entry was sent and answered (on every live process): the run can end."""
        return self.trace is not None and self._summary_pending and self.aggregator.schedules_done()

    def write_summary(self) -> None:
        """Once per test: the console table, ``--summary-json``, the run directory (errors are one log line)."""
        if not self._summary_pending:
            return
        self._summary_pending = False
        collection = self.collection
        if collection is not None:
            collection.write_timeseries()
        result = self.result()
        summary = to_summary(result)
        self.last_result, self.last_summary = result, summary
        out = self._out or sys.stdout
        render_summary(result, out)
        out.flush()
        if result.thresholds:  # the process's exit code: 0 passed, 1 one failed, 3 one had no value
            self._env.process_exit_code = thresholds_exit_code(result.thresholds)
        path = self.config.summary_json
        if path:
            try:
                with open(path, "wb") as f:
                    f.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
            except OSError as e:
                log.error("llmload: cannot write --summary-json %s: %s", path, e)
        if self.config.runs_dir:  # runs/<timestamp>-<profile>/: never fails the run (one error line)
            series = collection.timeseries if collection is not None else None
            save_run(result, self.config.runs_dir, out, series=series, host=self._env.host)
