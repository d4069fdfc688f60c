"""The three roles a Locust process plays, each a small object with the parts it builds and the behaviour it needs.

* :class:`Standalone` — a :class:`~llmload.runtime.load_role.LoadProcess` and a
  :class:`~llmload.runtime.coordinator.Coordinator`: folds its own report every
  :data:`LOCAL_REPORT_INTERVAL_S` and at the stop; a second signal stops the test now;
* :class:`Worker` — a load process: ships its report (every 3 s, at its stop, when its share of a
  trace is done), takes its share of the open-loop arrivals; a signal always ends its test;
* :class:`Master` — a coordinator: merges its workers' reports, marks lost ones, forwards the
  arrivals' schedule; a second signal quits without waiting for the workers.

:class:`~llmload.runtime.process.Runtime` holds one (:func:`make_role`, from the runner that exists at
``init``) and calls its hooks where the life cycle differs by role; the base class's hooks do nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

import gevent
from locust import runners as locust_runners
from locust.runners import STATE_CLEANUP, STATE_RUNNING, STATE_SPAWNING, MasterRunner, WorkerRunner

from llmload.config import RunConfig
from llmload.ladder import StepTracker
from llmload.preflight import check_output_file
from llmload.runtime.checks import preflight
from llmload.runtime.coordinator import LOCAL_ID, Coordinator
from llmload.runtime.drain import DrainGuard
from llmload.runtime.load_role import LoadProcess
from llmload.runtime.locust_workarounds import ready_after_stop
from llmload.runtime.options import Options

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = [
    "DONE_REPORT",
    "LOCAL_REPORT_INTERVAL_S",
    "SCHEDULE_LEAD_S",
    "STOP_REPORT",
    "ROLES",
    "Master",
    "Role",
    "Standalone",
    "Worker",
    "make_role",
    "role_of",
]

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


class Role:
    """What every role shares; each hook is where a role may differ (here: nothing to do)."""

    name: ClassVar[str]
    #: A worker reads the options its master forwards (see :class:`~llmload.runtime.options.Options`).
    forwarded_options: ClassVar[bool] = False
    load: LoadProcess | None = None
    coordinator: Coordinator | None = None
    drain: DrainGuard | None = None

    def __init__(self, environment: Environment, steps: StepTracker, clock: Callable[[], float]) -> None:
        """``clock``: the monotonic clock of a coordinator's aggregator (its live window, lost workers)."""
        self._env = environment
        self.options = Options(environment, worker=self.forwarded_options)

    def _load_parts(self, steps: StepTracker) -> LoadProcess:
        """The load process and its drain guard (the roles that send requests)."""
        env = self._env
        load = LoadProcess(env, steps, user_count=self.user_count, worker_index=self.worker_index,
                           schedule=self.schedule, schedule_done=self.schedule_done)  # fmt: skip
        self.load = load
        self.drain = DrainGuard(self.users, lambda: load.watchdog.in_flight, lambda: env.stop_timeout)
        return load

    # -- what the parts read -------------------------------------------------------------------
    def user_count(self) -> int:
        runner = self._env.runner
        return runner.user_count if runner is not None else 0

    def users(self) -> list[Any]:
        runner = self._env.runner
        return [g.args[0] for g in runner.user_greenlets if g.args] if runner is not None else []

    def worker_index(self) -> int | None:
        return None

    def schedule(self) -> tuple[int, int, float | None] | None:
        """This load process's share of the open-loop arrivals (see :class:`~llmload.runtime.load_role.LoadProcess`):
        all of them, unless a master hands out shares."""
        return 0, 1, None

    def schedule_done(self) -> None:
        """This process's share of a replayed trace is sent and answered (from a user's ``finish``): the
        coordinator hears of it now (a worker's next report could be 3 s away, the master's check 3 s more:
        a 3.2 s replay read 8.0 s, its achieved rate 40 % of the offered one)."""
        gevent.spawn(self.report_done)

    # -- hooks ---------------------------------------------------------------------------------
    def give_up(self) -> Callable[[], None] | None:
        """What a second Ctrl-C/SIGTERM does once the first is ending the test (None: the drain guard's)."""
        return None

    def check_startup(self, config: RunConfig, host: str | None) -> None:
        """The start-up checks this role runs (before any load)."""

    def arms_interrupt(self) -> bool:
        """Whether this process takes Ctrl-C/SIGTERM during a test (to end it as its end does)."""
        return self.options.headless

    def schedule_lead_s(self, config: RunConfig) -> float:
        """How far after the test start the arrivals' schedule starts (s)."""
        return 0.0

    def forward_schedule(self, config: RunConfig) -> None:
        """At a test start: hand the workers their shares of the work."""

    def merge_local(self, final: bool = False) -> None:
        """Fold this process's own report into its aggregator (a process that has both parts)."""

    def report_done(self) -> None:
        """This process's share of a replayed trace is done."""

    def at_test_stop(self) -> None:
        """At ``test_stop``, after the load stopped and before the coordinator concludes."""

    def at_quitting(self) -> None:
        """At ``quitting``, before the coordinator's last summary."""

    def start(self) -> None:
        """After install: this role's background work."""

    def stop(self) -> None:
        """At quitting: the end of :meth:`start`'s work."""


class Worker(Role):
    """``--worker``: the load process; its reports go to the master."""

    name = "worker"
    forwarded_options = True

    def __init__(self, environment: Environment, steps: StepTracker, clock: Callable[[], float]) -> None:
        super().__init__(environment, steps, clock)
        self._load_parts(steps)

    def worker_index(self) -> int | None:
        return getattr(self._env.runner, "worker_index", None)

    def schedule(self) -> tuple[int, int, float | None] | None:
        share = self.options.schedule(getattr(self._env.runner, "client_id", ""))
        if share is None:
            log.warning("llmload: this worker joined after the open-loop test started: it sends no arrivals until the next test")
        return share

    def check_startup(self, config: RunConfig, host: str | None) -> None:
        check_output_file("--records-jsonl", config.records_jsonl)

    def arms_interrupt(self) -> bool:
        return True

    def report_done(self) -> None:
        self.send_report(DONE_REPORT)

    def at_test_stop(self) -> None:
        """Everything it measured in this test, to the master, before Locust says it stopped."""
        self.send_report(STOP_REPORT, final=True)
        ready_after_stop(self._env)

    def send_report(self, kind: str, final: bool = False) -> None:
        """Its report to the master now, as custom message ``kind`` (not at the next 3 s report)."""
        runner = self._env.runner
        if self.load is None or runner is None:
            return
        try:
            runner.send_message(kind, {"llmload": self.load.report(final)})
        except Exception as e:  # a master that is gone: the periodic report (if any) still carries it
            log.warning("llmload: cannot send this worker's report (%s) to the master: %s", kind, e)


class _Coordinating(Role):
    """The roles with a coordinator: the pre-flight at start-up, a background pump, the replay's end."""

    coordinator: Coordinator
    #: The pump's period (s).
    interval_s: ClassVar[float]
    #: The reports come from workers (else from this process).
    merges_workers: ClassVar[bool] = False

    def __init__(self, environment: Environment, steps: StepTracker, clock: Callable[[], float]) -> None:
        super().__init__(environment, steps, clock)
        self.coordinator = Coordinator(environment, steps, master=self.merges_workers, clock=clock,
                                       fixed_load=self.options.fixed_load)  # fmt: skip
        self._pump: gevent.Greenlet | None = None

    def check_startup(self, config: RunConfig, host: str | None) -> None:
        for warning in preflight(config, host, **self.options.preflight_inputs()):
            log.warning("llmload: %s", warning)

    def report_done(self) -> None:
        self.merge_local()
        self.end_replay()

    def start(self) -> None:
        self._pump = gevent.spawn(self._pump_loop)

    def stop(self) -> None:
        if self._pump is not None:
            self._pump.kill(block=False)

    def _pump_loop(self) -> None:
        while True:
            gevent.sleep(self.interval_s)
            self.pump()
            self.end_replay()

    def pump(self) -> None:
        """Every :attr:`interval_s`, before the replay's check."""

    def end_replay(self) -> None:
        """A trace replay is over (every entry sent and answered): stop the test, as Locust does at ``--run-time``.

        Headless, the process quits (and writes the summary); from the web UI, the test stops and
        the UI stays up for the next one.
        """
        runner = self._env.runner
        if runner is None or runner.state not in (STATE_RUNNING, STATE_SPAWNING):
            return
        if not self.coordinator.schedule_finished():
            return
        trace = self.coordinator.setup.trace
        log.info("llmload: the trace is replayed (%d entries sent and answered): stopping the test",
                 len(trace) if trace is not None else 0)  # fmt: skip
        if self.options.headless:
            runner.quit()
        else:
            runner.stop()


class Master(_Coordinating):
    """``--master``: the coordinator; merges its workers' reports and watches for lost workers."""

    name = "master"
    interval_s = locust_runners.WORKER_REPORT_INTERVAL
    merges_workers = True

    def give_up(self) -> Callable[[], None] | None:
        return self._quit_now

    def _quit_now(self) -> None:
        """A second Ctrl-C: no more waiting for the workers; the summary holds what they reported."""
        log.warning("llmload: stopping now: not waiting for the workers any more; the summary holds what they reported")
        if self._env.runner is not None:
            self._env.runner.quit()

    def _schedules(self, config: RunConfig) -> bool:
        """An open-loop run: the master sends its workers their strides and a common start."""
        return config.arrival.open_loop and self._env.runner is not None

    def schedule_lead_s(self, config: RunConfig) -> float:
        return SCHEDULE_LEAD_S if self._schedules(config) else 0.0

    def forward_schedule(self, config: RunConfig) -> None:
        """The strides of the workers Locust dispatches to (a closed loop's with ``--warmup``: N split, the
        origin), and a common start :data:`SCHEDULE_LEAD_S` ahead."""
        runner = cast("MasterRunner | None", self._env.runner)  # (a Master role runs in Locust's master)
        schedules = self._schedules(config)
        if not (schedules or config.warmup.on) or runner is None:
            return
        ids = sorted(c.id for c in runner.clients.ready + runner.clients.running + runner.clients.spawning)
        self.options.forward_schedule(ids, time.time() + SCHEDULE_LEAD_S)
        users = getattr(runner, "target_user_count", 0) or 0
        if ids and users < len(ids) and schedules:
            log.warning("llmload: -u %d is below the %d workers: workers without a user cannot send their share of "
                        "the arrivals; use -u >= %d", users, len(ids), len(ids))  # fmt: skip

    def pump(self) -> None:
        self.check_workers()

    def at_test_stop(self) -> None:
        self.check_workers(during_test=False)  # one marked missing since the last 3 s check: in this summary

    def at_quitting(self) -> None:
        self.check_workers(during_test=False)

    def check_workers(self, during_test: bool | None = None) -> None:
        """Workers Locust marks missing (no heartbeat for ~4 s) are lost, during a test and after it
        (a worker killed late in a test is often marked only after the test's end, before the summary).
        Workers Locust no longer lists, or silent ones, count only during a test: a stop takes each worker
        out of Locust's clients until it is ready again, and a quit for good (headless runs read "workers
        lost" in their summary when the check fell between the workers' quit and the master's)."""
        runner = cast("MasterRunner | None", self._env.runner)  # (a Master role runs in Locust's master)
        if runner is None:
            return
        clients = runner.clients.all
        missing = {c.id for c in clients if c.state == "missing"}
        listed = {c.id for c in clients} - missing
        if during_test is None:
            during_test = runner.state in (STATE_RUNNING, STATE_SPAWNING)
        self.coordinator.check_workers(listed, missing, during_test=during_test)


class Standalone(_Coordinating):
    """One process: the load process and the coordinator, which folds the process's own reports."""

    name = "standalone"
    interval_s = LOCAL_REPORT_INTERVAL_S
    load: LoadProcess

    def __init__(self, environment: Environment, steps: StepTracker, clock: Callable[[], float]) -> None:
        super().__init__(environment, steps, clock)
        self._load_parts(steps)

    def give_up(self) -> Callable[[], None] | None:
        return self._stop_now

    def _stop_now(self) -> None:
        """A second Ctrl-C/SIGTERM that no wait for its requests took (a ladder stops at its next tick): the
        test stops now, then the quit."""
        self._stop_users_now()
        if self._env.runner is not None:
            self._env.runner.quit()

    def _stop_users_now(self) -> None:
        """The test stops now; its requests in flight count as interrupted (a stop under way, waiting for them:
        its users are stopped, and this stop waits for that one; its ``test_stop`` writes the summary)."""
        runner = self._env.runner
        if runner is None:
            return
        self._env.stop_timeout = 0
        if runner.state == STATE_CLEANUP:
            for user in self.users():
                user.stop(force=True)
        runner.stop()

    def merge_local(self, final: bool = False) -> None:
        self.coordinator.merge(LOCAL_ID, self.load.report(final))

    def pump(self) -> None:
        self.merge_local()

    def at_quitting(self) -> None:
        """Quitting while its test runs (Locust's own Ctrl-C or SIGTERM: a third one, one before the test
        started, a web UI process): Locust stops the users only after ``quitting``, when the summary and the
        ``--records-jsonl`` file are written and closed, so the requests then in flight were in neither, and what
        had finished since the last fold was in the file only. The test stops first, now (its requests in flight
        count as interrupted), and its ``test_stop`` folds the final report and writes the summary."""
        runner = self._env.runner
        if runner is not None and runner.state in (STATE_SPAWNING, STATE_RUNNING, STATE_CLEANUP):
            self._stop_users_now()


#: Each role by its :func:`role_of` name.
ROLES: dict[str, type[Role]] = {"master": Master, "worker": Worker, "standalone": Standalone}


def make_role(environment: Environment, steps: StepTracker, clock: Callable[[], float]) -> Role:
    """The role of the runner that exists at ``init`` (``clock``: the coordinator's aggregator's)."""
    return ROLES[role_of(environment.runner)](environment, steps, clock)
