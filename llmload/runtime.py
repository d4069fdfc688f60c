"""Per-process llmload state: configuration, the adapter, recording, and the run's bookkeeping.

One :class:`Runtime` lives on ``environment.llmload`` in every Locust process. What it does
depends on the process's role:

* processes with users (standalone or ``--worker``) sample requests, record finished
  requests (:class:`~llmload.metrics.recorder.Recorder`), enforce deadlines and watch their
  own CPU and event loop; every report interval they turn that into a report;
* processes that summarise (standalone or ``--master``) merge reports in an
  :class:`~llmload.metrics.aggregation.Aggregator` (a standalone process merges its own),
  which the summary, the exporter and the web UI read through :meth:`Runtime.snapshot`.
"""

from __future__ import annotations

import itertools
import logging
import sys
import time
from dataclasses import replace
from typing import Any

import gevent
import orjson
from locust import runners as locust_runners
from locust.runners import STATE_STOPPED, MasterRunner, WorkerRunner

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.adapters.base import Framing, RequestSpec
from llmload.analysis import analyze, make_judge, series_from_timeseries
from llmload.collect import Collection, start_collection
from llmload.config import RunConfig
from llmload.discovery import discover_model
from llmload.metrics.aggregation import Aggregator, ReportWire, Snapshot, WorkerGauges
from llmload.metrics.dump import RecordDump, dump_path
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.metrics.selfcheck import ProcessMonitor
from llmload.report.console import render_summary
from llmload.report.summary import build_steps, build_summary, load_generator_section
from llmload.rundir import save_run
from llmload.steps import MESSAGE as STEP_MESSAGE
from llmload.steps import StepTracker
from llmload.users.deadlines import Deadlines, Watchdog
from llmload.workload import WorkloadSampler, load_profile

__all__ = ["Runtime"]

log = logging.getLogger("llmload")
_WORKER_STRIDE = 1009  # user index = local * stride + worker index: unique for < 1009 workers
#: How long a master waits for the workers' last reports after a stop before summarising.
FINAL_REPORT_WAIT_S = 4.0
LOCAL_ID = "local"
LOCAL_REPORT_INTERVAL_S = 1.0
BASELINE_MIN_OK = 5
LADDER_STOP_TIMEOUT_S = 600.0


class Runtime:
    """See the module docstring."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment
        self.recorder = Recorder()
        self.aggregator = Aggregator()
        self.monitor = ProcessMonitor()
        self._user_index = itertools.count()
        self.users_max = 0
        self._t0_ns = self._t1_ns = 0
        self._started_wall = 0.0
        self._summary_pending = False
        self._summary_greenlet: gevent.Greenlet | None = None
        self._pump: gevent.Greenlet | None = None
        self.last_summary: dict[str, Any] | None = None
        self.collection: Collection | None = None  # engine / GPU metrics of the current run (not on workers)
        self.dump: RecordDump | None = None
        self.steps = StepTracker(broadcast=self._broadcast_step)
        self.steps.baseline_count = self._baseline_ok
        self.watchdog: Watchdog
        self._configure(first=True)

    # -- role ------------------------------------------------------------------------
    @property
    def is_master(self) -> bool:
        return isinstance(self.environment.runner, MasterRunner)

    @property
    def is_worker(self) -> bool:
        return isinstance(self.environment.runner, WorkerRunner)

    # -- configuration -----------------------------------------------------------------
    def _configure(self, first: bool) -> None:
        opts = self.environment.parsed_options
        seed = getattr(opts, "seed", -1)
        config = RunConfig.from_options(
            opts, seed=None if first or seed is None or seed < 0 else seed, worker=self.is_worker
        )
        if first and opts is not None and (seed is None or seed < 0):
            opts.seed = config.seed  # a drawn seed goes back into the options: the master hands it to workers
        if config.model_auto and not self.is_worker:
            host = self.environment.host or getattr(opts, "host", None)
            if host:
                model = discover_model(host, api_headers_for(get_adapter_class(config.api), config.api_key))
                config = replace(config, adapter=replace(config.adapter, model=model), model_auto=False)
                opts.model = model  # forwarded to workers with the spawn message
        if first:
            # A worker's own --records-jsonl and API key: the master's (empty) values overwrite
            # its options at spawn, so the worker's own are kept as fallbacks.
            self._records_jsonl, self._own_api_key = config.records_jsonl, config.api_key
        elif not config.api_key and self._own_api_key:
            config = replace(config, api_key=self._own_api_key)
        if opts is not None and not self.is_worker:
            opts.workload = config.profile  # Locust does not forward --profile to workers; this travels
        self.config = config
        self.ladder = config.ladder
        if config.ladder is not None and not self.is_worker and not self.environment.stop_timeout:
            # The last step's requests finish instead of being cut at the end (then they are
            # judged like every other step's); the request deadlines bound the wait.
            self.environment.stop_timeout = config.request_timeout or LADDER_STOP_TIMEOUT_S
        self.steps.judge = make_judge(lambda: self.aggregator.steps, config.degradation)  # --stop-on-breach
        self.profile = load_profile(config.profile)
        WorkloadSampler(self.profile, seed=config.seed, user_index=0)  # reads datasets now: errors before load
        self.adapter = get_adapter_class(config.api)(config.adapter)
        self.headers = api_headers_for(type(self.adapter), config.api_key)  # the adapter's own style; secret
        fmt = config.adapter.stream_format
        self._forced_framing = None if fmt == "auto" else Framing(fmt)
        old = getattr(self, "watchdog", None)
        if old is not None:
            old.stop()
        self.watchdog = Watchdog(Deadlines(config.ttft_timeout, config.stall_timeout, config.request_timeout))

    # -- used by LLMUser ---------------------------------------------------------------
    def new_sampler(self) -> WorkloadSampler:
        """A sampler for the next user of this process.

        The user index is unique across workers: it seeds the user's own RNG (distinct
        prompts everywhere from one run seed) and sets its start offset in the mix.
        """
        worker = getattr(self.environment.runner, "worker_index", 0) or 0
        index = next(self._user_index) * _WORKER_STRIDE + worker
        return WorkloadSampler(self.profile, seed=self.config.seed, user_index=index, max_tokens_cap=self.config.max_tokens_cap)

    def headers_for(self, spec: RequestSpec) -> dict[str, str]:
        return {**spec.headers, **self.headers} if self.headers else spec.headers

    def framing_for(self, content_type: str | None) -> Framing:
        if self._forced_framing is not None:
            return self._forced_framing
        return Framing.from_content_type(content_type, self.adapter.default_framing)

    def on_record(self, rec: RequestRecord) -> None:
        """The built-in ``llmload_request`` listener: statistics, and the JSONL dump when asked."""
        self.recorder.add(rec)
        if self.dump is not None:
            self.dump.add(rec)

    def finish(self, rec: RequestRecord) -> None:
        """Publish a finished record: llmload listeners, then Locust's request events."""
        env = self.environment
        env.events.llmload_request.fire(record=rec, environment=env)
        if rec.outcome == "interrupted":
            return
        fire = env.events.request.fire
        exc = None if rec.outcome == "ok" else RequestFailed(f"{rec.error_kind}: {rec.error_message}")
        fire(
            request_type="E2E",
            name=rec.class_name,
            response_time=(rec.end_ns - rec.start_ns) / 1e6,
            response_length=rec.output_tokens,
            exception=exc,
            context={"output_tokens": rec.output_tokens},
        )
        if rec.chunk_ns and rec.outcome == "ok":
            fire(
                request_type="TTFT",
                name=rec.class_name,
                response_time=(rec.chunk_ns[0] - rec.start_ns) / 1e6,
                response_length=0,
                exception=None,
                context={},
            )

    # -- reports -------------------------------------------------------------------------
    def report(self, final: bool = False) -> ReportWire:
        """What this process tells the aggregator: the statistics delta and its gauges."""
        by_class: dict[str, int] = {}
        for flight in self.watchdog.flights:
            name = flight.record.class_name
            by_class[name] = by_class.get(name, 0) + 1
        if self.dump is not None:
            self.dump.flush()
        cpu, lag = self.monitor.sample()
        gauges = WorkerGauges(
            users=self.environment.runner.user_count if self.environment.runner else 0,
            in_flight=self.watchdog.in_flight,
            in_flight_by_class=by_class,
            cpu_ratio=cpu,
            loop_lag_s=lag,
        )
        return {"m": self.recorder.drain(), "s": self.recorder.drain_steps(), "g": gauges.to_wire(), "final": final}

    def on_report_to_master(self, data: dict[str, Any]) -> None:
        data["llmload"] = self.report(final=self.environment.runner.state == STATE_STOPPED)

    def on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        payload = data.get("llmload")
        if payload:
            self.aggregator.merge_report(client_id, payload)

    def snapshot(self, window: bool = True, run: bool = True) -> Snapshot:
        """The merged state for readers (summary, exporter, web UI); no side effects.

        On a standalone process its own records are folded in every
        :data:`LOCAL_REPORT_INTERVAL_S` (and at the stop), so this may lag by that much,
        like a master lags its workers by their report interval.
        """
        runner = self.environment.runner
        self.aggregator.users = runner.user_count if runner is not None else 0
        return self.aggregator.snapshot(window=window, run=run)

    def _merge_local(self, final: bool = False) -> None:
        if not self.is_master and not self.is_worker:
            self.aggregator.merge_report(LOCAL_ID, self.report(final))

    def _pump_loop(self) -> None:
        """Standalone: fold own records in. Master: notice lost workers."""
        while True:
            if self.is_master:
                gevent.sleep(locust_runners.WORKER_REPORT_INTERVAL)
                self._check_workers()
            else:
                gevent.sleep(LOCAL_REPORT_INTERVAL_S)
                self._merge_local()

    # -- the ladder's steps -------------------------------------------------------------
    def _broadcast_step(self, msg: dict[str, Any]) -> None:
        if self.is_master:
            self.environment.runner.send_message(STEP_MESSAGE, msg)

    def on_step_message(self, msg: Any) -> None:
        """Worker: the master changed step."""
        self.steps.on_message(msg.data)

    def _baseline_ok(self) -> int:
        from llmload.shapes.ladder import BASELINE_STEP

        m = self.aggregator.steps.get(BASELINE_STEP)
        return m.overall().counters["ok"] if m is not None else 0

    def live_baseline(self) -> dict[str, float] | None:
        """TTFT/TPOT p50/p99 (s) of the baseline step once it has enough requests, else None.

        The baseline step is the single-request pre-run (-1) when there is one, else the
        ladder's first step. "Enough" is :data:`BASELINE_MIN_OK` successful requests.
        """
        if not self.steps.windows:
            return None
        index = self.steps.windows[0].index
        m = self.aggregator.steps.get(index)
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

    def _check_workers(self) -> None:
        runner = self.environment.runner
        present = {c.id for c in runner.clients.all if c.state != "missing"}
        lost = [wid for wid in self.aggregator.workers if wid not in present and self.aggregator.mark_lost(wid)]
        lost += self.aggregator.expire()
        for wid in lost:
            w = self.aggregator.workers[wid]
            log.warning("llmload: worker %s was lost; the %d reports it sent are kept, the run goes on", wid, w.reports)

    # -- run lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """After install: background work that does not wait for a test."""
        if not self.is_worker:
            self._pump = gevent.spawn(self._pump_loop)
        if not self.is_master:
            self.monitor.start()

    def on_test_start(self) -> None:
        from llmload.errors import ConfigError

        try:
            self._configure(first=False)
        except ConfigError as e:
            log.error("llmload: %s", e)
            self.environment.process_exit_code = 2
            self.environment.runner.quit()
            return
        self._merge_local()  # standalone: what finished since the last fold belongs to the previous run
        self.monitor.sample()  # start-up work before the test is not the test's CPU
        self._open_dump()
        self.aggregator.start_run()
        self.steps.reset()
        self.users_max = 0
        self._t0_ns, self._t1_ns = time.perf_counter_ns(), 0
        self._started_wall = time.time()
        if self.collection is not None:
            self.collection.stop(final=False)
        self.collection = None if self.is_worker else start_collection(self.config.collect, self._started_wall)
        self._summary_pending = True

    def _open_dump(self) -> None:
        if self.dump is not None:
            self.dump.close()
            self.dump = None
        path = self.config.records_jsonl or self._records_jsonl
        if path and not self.is_master:
            index = self.environment.runner.worker_index if self.is_worker else None
            self.dump = RecordDump(dump_path(path, index))

    def on_spawned(self, user_count: int) -> None:
        self.users_max = max(self.users_max, user_count)

    def on_test_stop(self) -> None:
        if self.is_worker or not self._summary_pending:
            return
        self._t1_ns = time.perf_counter_ns()
        if self.collection is not None:
            self.collection.stop()  # the last reading closes the run's window
        self.steps.close()
        if self.is_master:  # the workers' last reports are still on their way
            self._summary_greenlet = gevent.spawn_later(FINAL_REPORT_WAIT_S, self.write_summary)
        else:
            self._merge_local(final=True)
            self.write_summary()

    def on_quitting(self) -> None:
        if self._summary_pending and not self.is_worker and self._t1_ns:
            if self._summary_greenlet is not None:
                self._summary_greenlet.kill(block=False)
            self.write_summary()
        if self.dump is not None:
            self.dump.close()
            self.dump = None
        if self.collection is not None:
            self.collection.stop(final=False)
        self.watchdog.stop()
        self.monitor.stop()
        if self._pump is not None:
            self._pump.kill(block=False)

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        snap = self.snapshot()
        end = self._t1_ns or time.perf_counter_ns()
        extra: dict[str, Any] = {
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started_wall)),
            "config": self.config.public_dict(),
            "profile": self.profile.to_dict(),
        }
        extra.update(load_generator_section(snap, master=self.is_master, local_id=LOCAL_ID))
        weights = {c.name: c.weight for c in self.profile.classes}
        if self.steps.windows:
            extra["steps"] = build_steps(self.steps.windows, snap.steps, weights)
        if self.collection is not None:
            extra.update(self.collection.summary_extra())  # "server", "gpu", "timeseries"
        summary = build_summary(
            snap.run,
            duration_s=(end - self._t0_ns) / 1e9 if self._t0_ns else 0.0,
            users_max=self.users_max,
            weights=weights,
            extra=extra,
        )
        # llmload.analysis: per-step figures and signals, baseline, verdict, findings (schema llmload.summary/2)
        server, gpu = series_from_timeseries(self.collection.timeseries()) if self.collection is not None else ({}, {})
        return analyze(summary, degradation=self.config.degradation, server=server, gpu=gpu, step_metrics=snap.steps)

    def write_summary(self) -> None:
        if not self._summary_pending:
            return
        self._summary_pending = False
        if self.collection is not None:
            self.collection.write_timeseries()
        summary = self.summary()
        self.last_summary = summary
        render_summary(summary, sys.stdout)
        sys.stdout.flush()
        path = self.config.summary_json
        if path:
            try:
                with open(path, "wb") as f:
                    f.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
            except OSError as e:
                log.error("llmload: cannot write --summary-json %s: %s", path, e)
        if self.config.runs_dir:  # runs/<timestamp>-<profile>/: never fails the run (one error line)
            series = self.collection.timeseries if self.collection is not None else None
            save_run(summary, self.config.runs_dir, sys.stdout, series=series, host=self.environment.host)


class RequestFailed(Exception):
    """The exception Locust's failure table shows for a failed LLM request."""
