"""One llmload :class:`Runtime` per Locust process: the roles it plays, and their life cycle.

=============  ===============================================  ===========================================
process        roles                                            reports
=============  ===============================================  ===========================================
standalone     :class:`~llmload.runtime.load.LoadProcess` +     its own, folded in every
               :class:`~llmload.runtime.coordinator.Coordinator`  :data:`LOCAL_REPORT_INTERVAL_S` and at the stop
``--worker``   load process                                     shipped in ``report_to_master``
``--master``   coordinator                                      merged from ``worker_report``
=============  ===============================================  ===========================================

The role is decided once, from the runner that exists at ``init``. At start-up the
coordinator runs the pre-flight (:mod:`llmload.runtime.checks`: host, connect, outputs,
ports, ranges): a problem is one error line and exit code 2 before any load. The configuration comes
from :class:`~llmload.runtime.options.Options` at start-up and again at every test start
(the web UI's form and a master's spawn message change the options); a bad value at a test
start ends the test with one error line and exit code 2. :func:`llmload.plugin.install`
creates the runtime and routes Locust's events to the methods below.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import gevent
from locust import runners as locust_runners
from locust.runners import STATE_CLEANUP, STATE_RUNNING, STATE_SPAWNING, STATE_STOPPED, MasterRunner, WorkerRunner

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.config import RunConfig
from llmload.config.targets import split_hosts
from llmload.discovery import discover_model
from llmload.errors import ConfigError
from llmload.ladder import StepTracker
from llmload.preflight import check_output_file
from llmload.runtime.checks import preflight
from llmload.runtime.coordinator import LOCAL_ID, Coordinator
from llmload.runtime.drain import DrainGuard, RunInterrupt
from llmload.runtime.load import LoadProcess
from llmload.runtime.locust_workarounds import ready_after_stop
from llmload.runtime.options import Options

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["DONE_REPORT", "LOCAL_REPORT_INTERVAL_S", "SCHEDULE_LEAD_S", "STOP_REPORT", "Runtime", "role_of"]

log = logging.getLogger("llmload")
#: How often a standalone process folds its own records into its aggregator.
LOCAL_REPORT_INTERVAL_S = 1.0
#: Open loop with workers: the schedule starts this long after the master's test start, so that
#: the spawn message (which carries it) reaches every worker before the first arrival is due.
SCHEDULE_LEAD_S = 0.25
#: Worker -> master custom message: the worker's report at its test stop (``{"llmload": report}``).
#: Sent from ``test_stop``, before Locust's ``client_stopped``, so the master has it when its own
#: ``test_stop`` fires (which waits for every worker's ``client_stopped``).
STOP_REPORT = "llmload_stop_report"
#: Worker -> master custom message: a report out of the 3 s cycle, when the worker's share of a
#: replayed trace has been sent and answered, so that the master ends the replay at once.
DONE_REPORT = "llmload_done_report"


def role_of(runner: object) -> str:
    """``"master"``, ``"worker"`` or ``"standalone"`` (a local runner, or none yet)."""
    if isinstance(runner, MasterRunner):
        return "master"
    return "worker" if isinstance(runner, WorkerRunner) else "standalone"


class Runtime:
    """See the module docstring. Raises :class:`ConfigError` on bad flags or profile (before any load).

    ``clock`` is the monotonic clock of the coordinator's aggregator (its live window, lost workers).
    """

    def __init__(self, environment: Environment, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._env = environment
        self.role = role_of(environment.runner)
        self.options = Options(environment, worker=self.role == "worker")
        self.steps = StepTracker(broadcast=self._broadcast_step)
        self.load: LoadProcess | None = None
        self.coordinator: Coordinator | None = None
        self.drain: DrainGuard | None = None
        if self.role != "master":
            self.load = LoadProcess(environment, self.steps, user_count=self._user_count, worker_index=self._worker_index,
                                    schedule=self._schedule, schedule_done=self._schedule_done)  # fmt: skip
            load = self.load
            self.drain = DrainGuard(self._users, lambda: load.watchdog.in_flight, lambda: environment.stop_timeout)
        if self.role != "worker":
            self.coordinator = Coordinator(environment, self.steps, master=self.role == "master", clock=clock,
                                           fixed_load=self.options.fixed_load)  # fmt: skip
        # Ctrl-C / SIGTERM during a headless test or on a worker: the test ends as its end does (the drain guard
        # takes the second during the wait); a master's or one process's second signal stops now.
        give_up = {"master": self._quit_now, "standalone": self._stop_now}.get(self.role)
        self.interrupt = RunInterrupt(self._end_test, give_up, lambda: environment.stop_timeout)
        self._pump: gevent.Greenlet | None = None
        self.configure(startup=True)

    def _end_test(self) -> None:
        """End the running test as its end does, then quit. A ladder (a shape, on a master or one process): its
        next tick (a master stops the workers and waits for them; then Locust quits); else a graceful stop (its
        users' requests finish within the stop timeout; a worker's sends its stop report before the quit tells
        the master it is gone) and a quit here."""
        runner = self._env.runner
        if runner is None:
            return
        if self.coordinator is not None and getattr(runner, "shape_greenlet", None):
            self.coordinator.driver.end_now()
        else:
            runner.stop()
            runner.quit()

    def _quit_now(self) -> None:
        """Master, a second Ctrl-C: no more waiting for the workers; the summary holds what they reported."""
        log.warning("llmload: stopping now: not waiting for the workers any more; the summary holds what they reported")
        if self._env.runner is not None:
            self._env.runner.quit()

    def _stop_now(self) -> None:
        """One process, a second Ctrl-C/SIGTERM that no wait for its requests took (a ladder stops at its next
        tick): the test stops now, then the quit."""
        self._stop_users_now()
        if self._env.runner is not None:
            self._env.runner.quit()

    def _stop_users_now(self) -> None:
        """One process: the test stops now; its requests in flight count as interrupted (a stop under way, waiting
        for them: its users are stopped, and this stop waits for that one; its ``test_stop`` writes the summary)."""
        runner = self._env.runner
        if runner is None:
            return
        self._env.stop_timeout = 0
        if runner.state == STATE_CLEANUP:
            for user in self._users():
                user.stop(force=True)
        runner.stop()

    def _user_count(self) -> int:
        runner = self._env.runner
        return runner.user_count if runner is not None else 0

    def _users(self) -> list[Any]:
        runner = self._env.runner
        return [g.args[0] for g in runner.user_greenlets if g.args] if runner is not None else []

    def _broadcast_step(self, msg: dict[str, Any]) -> None:
        if self.coordinator is not None:
            self.coordinator.broadcast_step(msg)

    def _worker_index(self) -> int | None:
        return getattr(self._env.runner, "worker_index", None) if self.role == "worker" else None

    def _schedule(self) -> tuple[int, int, float | None] | None:
        """This load process's share of the open-loop arrivals: see :class:`~llmload.runtime.load.LoadProcess`."""
        if self.role != "worker":
            return 0, 1, None
        share = self.options.schedule(getattr(self._env.runner, "client_id", ""))
        if share is None:
            log.warning("llmload: this worker joined after the open-loop test started: it sends no arrivals until the next test")
        return share

    def _schedule_done(self) -> None:
        """This process's share of a replayed trace is sent and answered (from a user's ``finish``): tell the
        coordinator now (a worker's next report could be 3 s away, the master's check 3 s more: a 3.2 s
        replay read 8.0 s, its achieved rate 40 % of the offered one)."""
        gevent.spawn(self._report_done)

    def _report_done(self) -> None:
        if self.role != "worker":
            self._merge_local()
            self._end_replay()
        else:
            self._send_report(DONE_REPORT)

    def on_done_report(self, client_id: str, data: dict[str, Any]) -> None:
        """Master: a worker's share of the trace is done; the replay may be over (checked on a greenlet of its
        own: ending it quits the runner, whose greenlets include the one that delivered this message)."""
        self.on_worker_report(client_id, data)
        gevent.spawn(self._end_replay)

    def _schedules(self) -> bool:
        """A master of an open-loop run: it sends its workers their strides and a common start."""
        return self.role == "master" and self.config.arrival.open_loop and self._env.runner is not None

    def _forward_schedule(self) -> float:
        """Master: the strides of the workers Locust dispatches to, and a common start just ahead.

        Returns how far ahead the schedule starts (s; 0 when nothing was forwarded)."""
        runner = self._env.runner
        warmup_shares = self.role == "master" and self.config.warmup.on  # a closed loop's workers: N split, the origin
        if not (self._schedules() or warmup_shares) or runner is None:
            return 0.0
        ids = sorted(c.id for c in runner.clients.ready + runner.clients.running + runner.clients.spawning)
        self.options.forward_schedule(ids, time.time() + SCHEDULE_LEAD_S)
        users = getattr(runner, "target_user_count", 0) or 0
        if ids and users < len(ids) and self._schedules():
            log.warning("llmload: -u %d is below the %d workers: workers without a user cannot send their share of "
                        "the arrivals; use -u >= %d", users, len(ids), len(ids))  # fmt: skip
        return SCHEDULE_LEAD_S

    # -- configuration -------------------------------------------------------------------
    def configure(self, startup: bool = False) -> None:
        """Read the options into a :class:`RunConfig`, forward what workers need, hand it to the roles.

        At ``startup`` the coordinator runs the pre-flight first (:mod:`llmload.runtime.checks`);
        a worker checks its own ``--records-jsonl``.
        """
        config = self.options.config()
        host = self.options.host
        if startup and self.coordinator is not None:
            for warning in preflight(config, host, **self.options.preflight_inputs()):
                log.warning("llmload: %s", warning)
        elif startup:
            check_output_file("--records-jsonl", config.records_jsonl)
        if config.model_auto and self.coordinator is not None and host:
            model = discover_model(split_hosts(host)[0], api_headers_for(get_adapter_class(config.api), config.api_key))
            config = replace(config, adapter=replace(config.adapter, model=model), model_auto=False)
        self.options.forward(config)
        self.config: RunConfig = config
        if self.load is not None:
            self.load.configure(config)
        if self.coordinator is not None:
            self.coordinator.configure(config)

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """After install: background work that does not wait for a test."""
        if self.coordinator is not None:
            self._pump = gevent.spawn(self._pump_loop)
        if self.load is not None:
            self.load.start()

    def on_test_start(self) -> None:
        if self.coordinator is not None:
            self.coordinator.finish_previous()  # before this test's configuration replaces the last one's
        try:
            self.configure()
        except ConfigError as e:
            log.error("llmload: %s", e)
            self._env.process_exit_code = 2
            if self._env.runner is not None:
                self._env.runner.quit()
            return
        self._merge_local()  # standalone: what finished since the last fold belongs to the previous run
        if self.load is not None:
            self.load.on_test_start()
            self.load.open_dump(self.config.records_jsonl)
        if self.coordinator is not None:
            # first the engine metrics' baseline (read before any load), then the common start just ahead of now
            self.coordinator.on_test_start(schedule_lead_s=SCHEDULE_LEAD_S if self._schedules() else 0.0)
        self._forward_schedule()
        if self.role == "worker" or self.options.headless:
            self.interrupt.arm()

    def on_spawned(self, user_count: int) -> None:
        if self.coordinator is not None:
            self.coordinator.on_spawned(user_count)

    def on_test_stopping(self) -> None:
        """Before users stop: no new arrivals (a user stopped while waiting for one is not a lost request)."""
        if self.load is not None:
            self.load.on_test_stop()
        if self.drain is not None:
            self.drain.begin()
        if self.coordinator is not None:
            self.coordinator.on_test_stopping()

    def on_test_stop(self) -> None:
        if self.drain is not None:
            self.drain.end()
        if self.load is not None:
            self.load.on_test_stop()
        if self.role == "worker":
            self._send_stop_report()
        if self.coordinator is not None:
            if self.role == "master":
                self._check_workers(during_test=False)  # one marked missing since the last 3 s check: in this summary
            self.coordinator.on_test_stop(lambda: self._merge_local(final=True))

    def on_quitting(self) -> None:
        if self.role == "standalone":
            self._stop_before_quit()
        if self.coordinator is not None:
            if self.role == "master":
                self._check_workers(during_test=False)
            self.coordinator.on_quitting()
        if self.drain is not None:
            self.drain.end()
        self.interrupt.disarm()
        if self.load is not None:
            self.load.stop()
        if self._pump is not None:
            self._pump.kill(block=False)
        if self.coordinator is not None:
            self.coordinator.close()

    def _stop_before_quit(self) -> None:
        """One process quitting while its test runs (Locust's own Ctrl-C or SIGTERM: a third one, one before the
        test started, a web UI process): Locust stops the users only after ``quitting``, when the summary and the
        ``--records-jsonl`` file are written and closed, so the requests then in flight were in neither, and what
        had finished since the last fold was in the file only. The test stops first, now (its requests in flight
        count as interrupted), and its ``test_stop`` folds the final report and writes the summary."""
        runner = self._env.runner
        if runner is not None and runner.state in (STATE_SPAWNING, STATE_RUNNING, STATE_CLEANUP):
            self._stop_users_now()

    # -- reports and messages ----------------------------------------------------------------
    def on_report_to_master(self, data: dict[str, Any]) -> None:
        """Worker: this interval's report travels under ``data["llmload"]``."""
        if self.load is not None:
            runner = self._env.runner
            data["llmload"] = self.load.report(final=runner is not None and runner.state == STATE_STOPPED)

    def on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        """Master: a worker's report."""
        payload = data.get("llmload")
        if payload and self.coordinator is not None:
            self.coordinator.merge(client_id, payload)

    def _send_report(self, kind: str, final: bool = False) -> None:
        """Worker: its report to the master now, as custom message ``kind`` (not at the next 3 s report)."""
        runner = self._env.runner
        if self.load is None or runner is None:
            return
        try:
            runner.send_message(kind, {"llmload": self.load.report(final)})
        except Exception as e:  # a master that is gone: the periodic report (if any) still carries it
            log.warning("llmload: cannot send this worker's report (%s) to the master: %s", kind, e)

    def _send_stop_report(self) -> None:
        """Worker: everything it measured in this test, to the master at its test stop."""
        self._send_report(STOP_REPORT, final=True)
        ready_after_stop(self._env)

    def on_stop_report(self, client_id: str, data: dict[str, Any]) -> None:
        """Master: a worker's report at its test stop."""
        payload = (data or {}).get("llmload")
        if payload and self.coordinator is not None:
            self.coordinator.on_worker_stopped(client_id, payload)

    def on_step_message(self, msg: Any) -> None:
        """Worker: the master changed step."""
        self.steps.on_message(msg.data)

    def _merge_local(self, final: bool = False) -> None:
        """Standalone: fold this process's own report into its aggregator."""
        if self.load is not None and self.coordinator is not None:
            self.coordinator.merge(LOCAL_ID, self.load.report(final))

    def _pump_loop(self) -> None:
        """Standalone: fold own records in. Master: notice lost workers. Both: end a replayed trace."""
        assert self.coordinator is not None
        while True:
            if self.role == "master":
                gevent.sleep(locust_runners.WORKER_REPORT_INTERVAL)
                self._check_workers()
            else:
                gevent.sleep(LOCAL_REPORT_INTERVAL_S)
                self._merge_local()
            self._end_replay()

    def _check_workers(self, during_test: bool | None = None) -> None:
        """Master: workers Locust marks missing (no heartbeat for ~4 s) are lost, during a test and after it
        (a worker killed late in a test is often marked only after the test's end, before the summary).
        Workers Locust no longer lists, or silent ones, count only during a test: a stop takes each worker
        out of Locust's clients until it is ready again, and a quit for good (headless runs read "workers
        lost" in their summary when the check fell between the workers' quit and the master's)."""
        runner = self._env.runner
        if self.coordinator is None or runner is None:
            return
        clients = runner.clients.all
        missing = {c.id for c in clients if c.state == "missing"}
        listed = {c.id for c in clients} - missing
        if during_test is None:
            during_test = runner.state in (STATE_RUNNING, STATE_SPAWNING)
        self.coordinator.check_workers(listed, missing, during_test=during_test)

    def _end_replay(self) -> None:
        """A trace replay is over (every entry sent and answered): stop the test, as Locust does at ``--run-time``.

        Headless, the process quits (and writes the summary); from the web UI, the test stops and
        the UI stays up for the next one.
        """
        runner = self._env.runner
        coordinator = self.coordinator
        if runner is None or coordinator is None or runner.state not in (STATE_RUNNING, STATE_SPAWNING):
            return
        if not coordinator.schedule_finished():
            return
        trace = coordinator.trace
        log.info("llmload: the trace is replayed (%d entries sent and answered): stopping the test",
                 len(trace) if trace is not None else 0)  # fmt: skip
        if self.options.headless:
            runner.quit()
        else:
            runner.stop()
