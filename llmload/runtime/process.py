"""One llmload :class:`Runtime` per Locust process: its role's parts and their life cycle.

=============  ===============================================  ===========================================
process        parts                                            reports
=============  ===============================================  ===========================================
standalone     :class:`~llmload.runtime.load_role.LoadProcess` +     its own, folded in every
               :class:`~llmload.runtime.coordinator.Coordinator`  :data:`LOCAL_REPORT_INTERVAL_S` and at the stop
``--worker``   load process                                     shipped in ``report_to_master``
``--master``   coordinator                                      merged from ``worker_report``
=============  ===============================================  ===========================================

The role is decided once, from the runner that exists at ``init``: a
:class:`~llmload.runtime.roles.Role` object (``plays``) builds the parts and does what differs by
role; the runtime routes each event to the parts it has and to the role's hook. At start-up the
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

from locust.runners import STATE_STOPPED

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.config import RunConfig
from llmload.config.targets import split_hosts
from llmload.discovery import discover_model
from llmload.errors import ConfigError
from llmload.ladder import StepTracker
from llmload.runtime.drain import RunInterrupt
from llmload.runtime.roles import DONE_REPORT, LOCAL_REPORT_INTERVAL_S, SCHEDULE_LEAD_S, STOP_REPORT, make_role, role_of

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["DONE_REPORT", "LOCAL_REPORT_INTERVAL_S", "SCHEDULE_LEAD_S", "STOP_REPORT", "Runtime", "role_of"]

log = logging.getLogger("llmload")


class Runtime:
    """See the module docstring. Raises :class:`ConfigError` on bad flags or profile (before any load).

    ``clock`` is the monotonic clock of the coordinator's aggregator (its live window, lost workers).
    """

    def __init__(self, environment: Environment, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._env = environment
        self.steps = StepTracker(broadcast=self._broadcast_step)
        self.plays = make_role(environment, self.steps, clock)
        self.role = self.plays.name
        self.options = self.plays.options
        self.load, self.coordinator, self.drain = self.plays.load, self.plays.coordinator, self.plays.drain
        # Ctrl-C / SIGTERM during a headless test or on a worker: the test ends as its end does (the drain guard
        # takes the second during the wait); a master's or one process's second signal stops now.
        self.interrupt = RunInterrupt(self._end_test, self.plays.give_up(), lambda: environment.stop_timeout)
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

    def _broadcast_step(self, msg: dict[str, Any]) -> None:
        if self.coordinator is not None:
            self.coordinator.broadcast_step(msg)

    def on_done_report(self, client_id: str, data: dict[str, Any]) -> None:
        """Master: a worker's share of the trace is done; the replay may be over (checked on a greenlet of its
        own: ending it quits the runner, whose greenlets include the one that delivered this message)."""
        self.on_worker_report(client_id, data)
        self.plays.schedule_done()

    # -- configuration -------------------------------------------------------------------
    def configure(self, startup: bool = False) -> None:
        """Read the options into a :class:`RunConfig`, forward what workers need, hand it to the parts.

        At ``startup`` the role runs its checks (a coordinator the pre-flight, :mod:`llmload.runtime.checks`;
        a worker its own ``--records-jsonl``).
        """
        config = self.options.config()
        host = self.options.host
        if startup:
            self.plays.check_startup(config, host)
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
        self.plays.start()
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
        self.plays.merge_local()  # standalone: what finished since the last fold belongs to the previous run
        if self.load is not None:
            self.load.on_test_start()
            self.load.open_dump(self.config.records_jsonl)
        if self.coordinator is not None:
            # first the engine metrics' baseline (read before any load), then the common start just ahead of now
            self.coordinator.on_test_start(schedule_lead_s=self.plays.schedule_lead_s(self.config))
        self.plays.forward_schedule(self.config)
        if self.plays.arms_interrupt():
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
        self.plays.at_test_stop()  # a worker's stop report; a master's last look for missing workers
        if self.coordinator is not None:
            self.coordinator.on_test_stop(lambda: self.plays.merge_local(final=True))

    def on_quitting(self) -> None:
        self.plays.at_quitting()  # one process: a running test stops first; a master: missing workers
        if self.coordinator is not None:
            self.coordinator.on_quitting()
        if self.drain is not None:
            self.drain.end()
        self.interrupt.disarm()
        if self.load is not None:
            self.load.stop()
        self.plays.stop()
        if self.coordinator is not None:
            self.coordinator.close()

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

    def on_stop_report(self, client_id: str, data: dict[str, Any]) -> None:
        """Master: a worker's report at its test stop."""
        payload = (data or {}).get("llmload")
        if payload and self.coordinator is not None:
            self.coordinator.on_worker_stopped(client_id, payload)

    def on_step_message(self, msg: Any) -> None:
        """Worker: the master changed step."""
        self.steps.on_message(msg.data)
