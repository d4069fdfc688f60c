"""Wiring llmload into Locust: the ONE place where listeners and events are registered.

A locustfile calls :func:`activate` once at import (Locust parses the command line right
after importing locustfiles, so the flag group must be added then); everything else is
installed on the ``init`` event by :func:`install`:

===========================  ================================================================
Locust event                 what llmload does
===========================  ================================================================
init_command_line_parser     adds the llmload flags (:mod:`llmload.options`)
init                         validates flags and profile (one error line, exit 2, no load sent),
                             creates the :class:`Runtime` as ``environment.llmload``
test_start                   re-reads flags (web UI form, workers), resets the run's statistics
spawning_complete            tracks the largest user count
report_to_master (worker)    ships ``recorder.drain()`` under ``data["llmload"]``
worker_report (master)       merges the worker's delta into the run's statistics
test_stop / quitting         builds the summary, prints the table, writes ``--summary-json``
===========================  ================================================================

llmload's own event, declared here:

``environment.events.llmload_request(record: RequestRecord, environment)``
    fired once per finished request (ok, error or interrupted) with its raw record; the
    recorder is one listener, add your own in an ``init`` listener.
"""

from __future__ import annotations

import itertools
import logging
import sys
import time
from typing import Any

import gevent
import orjson
from locust.event import EventHook
from locust.runners import MasterRunner, WorkerRunner

from llmload.adapters import get_adapter_class
from llmload.adapters.base import Framing, RequestSpec
from llmload.config import RunConfig
from llmload.discovery import discover_model
from llmload.errors import ConfigError
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet, Recorder
from llmload.options import add_arguments
from llmload.report.console import render_summary
from llmload.report.summary import build_summary
from llmload.users.deadlines import Deadlines, Watchdog
from llmload.workload import WorkloadSampler, load_profile

__all__ = ["Runtime", "activate", "install"]

log = logging.getLogger("llmload")
_WORKER_STRIDE = 1009  # a prime larger than any worker count we expect
#: How long the master waits for workers' last reports after a stop before summarising.
FINAL_REPORT_WAIT_S = 4.0


def activate(events: Any, **defaults: Any) -> None:
    """Call once from a locustfile: ``activate(locust.events)`` (optionally ``api=...``)."""
    events.init_command_line_parser.add_listener(lambda parser, **_: add_arguments(parser, defaults))
    events.init.add_listener(lambda environment, **_: install(environment))


def install(environment: Any) -> Runtime:
    """Create the runtime and register every listener. Exits with one error line on bad input."""
    try:
        runtime = Runtime(environment)
    except ConfigError as e:
        sys.stderr.write(f"llmload: error: {e}\n")
        sys.exit(2)
    environment.llmload = runtime
    ev = environment.events
    ev.llmload_request = EventHook()
    ev.llmload_request.add_listener(lambda record, **_: runtime.recorder.add(record))
    ev.test_start.add_listener(lambda **_: runtime.on_test_start())
    ev.spawning_complete.add_listener(lambda user_count, **_: runtime.on_spawned(user_count))
    ev.test_stop.add_listener(lambda **_: runtime.on_test_stop())
    ev.quitting.add_listener(lambda **_: runtime.on_quitting())
    ev.report_to_master.add_listener(lambda client_id, data, **_: runtime.on_report_to_master(data))
    ev.worker_report.add_listener(lambda client_id, data, **_: runtime.on_worker_report(client_id, data))
    return runtime


class Runtime:
    """Per-process llmload state: config, adapter, recorder, watchdog, run bookkeeping."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment
        self.recorder = Recorder()
        self.merged = MetricSet()  # master: what workers reported this run
        self._user_index = itertools.count()
        self.users_max = 0
        self.workers_seen: set[str] = set()
        self._t0_ns = self._t1_ns = 0
        self._started_wall = 0.0
        self._summary_pending = False
        self._summary_greenlet: gevent.Greenlet | None = None
        self.last_summary: dict[str, Any] | None = None
        self.watchdog: Watchdog
        self._configure(first=True)

    # -- configuration -----------------------------------------------------------------
    @property
    def is_master(self) -> bool:
        return isinstance(self.environment.runner, MasterRunner)

    @property
    def is_worker(self) -> bool:
        return isinstance(self.environment.runner, WorkerRunner)

    def _configure(self, first: bool) -> None:
        opts = self.environment.parsed_options
        seed = None if first else self._seed_from(opts)
        config = RunConfig.from_options(opts, seed=seed)
        if first and opts is not None and (getattr(opts, "seed", -1) or -1) < 0:
            # A drawn seed goes back into the options, so the master hands it to its workers.
            opts.seed = config.seed
        if config.model_auto and not self.is_worker:
            host = self.environment.host or getattr(opts, "host", None)
            if host:
                model = discover_model(host, config.api_key)
                config = _with_model(config, model)
                opts.model = model  # forwarded to workers with the spawn message
        self.config = config
        self.profile = load_profile(config.profile)
        WorkloadSampler(self.profile, seed=config.seed, user_index=0).next()  # reads datasets now: errors before load
        self.adapter = get_adapter_class(config.api)(config.adapter)
        self.headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._forced_framing = None if config.adapter.stream_format == "auto" else Framing(config.adapter.stream_format)
        old = getattr(self, "watchdog", None)
        if old is not None:
            old.stop()
        self.watchdog = Watchdog(Deadlines(config.ttft_timeout, config.stall_timeout, config.request_timeout))

    @staticmethod
    def _seed_from(opts: Any) -> int | None:
        seed = getattr(opts, "seed", -1)
        return seed if seed is not None and seed >= 0 else None

    # -- used by LLMUser ---------------------------------------------------------------
    def new_sampler(self) -> WorkloadSampler:
        """A sampler for the next user of this process.

        The user index is unique across workers (``local * 1009 + worker``, for up to 1009
        workers): it seeds the user's own RNG (distinct prompts everywhere, one run seed) and
        sets its start offset in the mix. Shared prefixes depend only on the run seed.
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

    def finish(self, rec: RequestRecord) -> None:
        """Publish a finished record: llmload listeners, then Locust's request events."""
        env = self.environment
        env.events.llmload_request.fire(record=rec, environment=env)
        if rec.outcome == "interrupted":
            return
        fire = env.events.request.fire
        exc = None if rec.outcome == "ok" else _RequestFailed(f"{rec.error_kind}: {rec.error_message}")
        e2e_ms = (rec.end_ns - rec.start_ns) / 1e6
        fire(
            request_type="E2E",
            name=rec.class_name,
            response_time=e2e_ms,
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

    # -- run lifecycle -------------------------------------------------------------------
    def on_test_start(self) -> None:
        try:
            self._configure(first=False)
        except ConfigError as e:
            log.error("llmload: %s", e)
            self.environment.runner.quit()
            self.environment.process_exit_code = 2
            return
        self.recorder.reset()
        self.merged = MetricSet()
        self.users_max = 0
        self.workers_seen = set()
        self._t0_ns, self._t1_ns = time.perf_counter_ns(), 0
        self._started_wall = time.time()
        self._summary_pending = True

    def on_spawned(self, user_count: int) -> None:
        self.users_max = max(self.users_max, user_count)

    def on_report_to_master(self, data: dict[str, Any]) -> None:
        data["llmload"] = {"m": self.recorder.drain(), "in_flight": self.watchdog.in_flight}

    def on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        payload = data.get("llmload")
        if not payload:
            return
        self.workers_seen.add(client_id)
        self.merged.merge(MetricSet.from_wire(payload["m"]))

    def on_test_stop(self) -> None:
        if self.is_worker or not self._summary_pending:
            return
        self._t1_ns = time.perf_counter_ns()
        if self.is_master:  # the workers' last reports are still on their way
            self._summary_greenlet = gevent.spawn_later(FINAL_REPORT_WAIT_S, self.write_summary)
        else:
            self.write_summary()

    def on_quitting(self) -> None:
        if self._summary_pending and not self.is_worker and self._t1_ns:
            if self._summary_greenlet is not None:
                self._summary_greenlet.kill(block=False)
            self.write_summary()
        self.watchdog.stop()

    def snapshot(self) -> MetricSet:
        """This run's statistics: merged worker reports on a master, own records otherwise."""
        return self.merged.copy() if self.is_master else self.recorder.snapshot()

    def summary(self) -> dict[str, Any]:
        end = self._t1_ns or time.perf_counter_ns()
        extra: dict[str, Any] = {
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started_wall)),
            "config": self.config.public_dict(),
            "profile": self.profile.to_dict(),
        }
        if self.is_master:
            extra["workers"] = len(self.workers_seen)
        return build_summary(
            self.snapshot(),
            duration_s=(end - self._t0_ns) / 1e9 if self._t0_ns else 0.0,
            users_max=self.users_max,
            weights={c.name: c.weight for c in self.profile.classes},
            extra=extra,
        )

    def write_summary(self) -> None:
        if not self._summary_pending:
            return
        self._summary_pending = False
        summary = self.summary()
        self.last_summary = summary
        render_summary(summary, sys.stdout)
        sys.stdout.flush()
        path = self.config.summary_json
        if path:
            try:
                with open(path, "wb") as f:
                    f.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
            except OSError as e:
                log.error("llmload: cannot write --summary-json %s: %s", path, e)


class _RequestFailed(Exception):
    """The exception Locust's failure table shows for a failed LLM request."""


def _with_model(config: RunConfig, model: str) -> RunConfig:
    from dataclasses import replace

    return replace(config, adapter=replace(config.adapter, model=model), model_auto=False)
