"""Wiring llmload into Locust: the ONE place that registers event listeners and message handlers.

The web UI's routes (the LLM tabs, ``/metrics``) are added by the installers this module calls
(:func:`llmload.web.tables.install_web_ui`, the coordinator's exporter); they register no listener.

A locustfile calls :func:`activate` once at import (Locust parses the command line right
after importing locustfiles, so the flag group must be added then); everything else is
installed on the ``init`` event by :func:`install`, which creates the process's
:class:`~llmload.runtime.process.Runtime` (its roles: load process, coordinator, or both)
and connects it:

===========================  ================================================================
Locust seam                  what llmload does
===========================  ================================================================
init_command_line_parser     adds the llmload flags (:data:`llmload.config.FLAGS`)
init_command_line_parser     (also: under --processes the master binds 127.0.0.1 unless told otherwise)
init                         validates flags and profile, runs the pre-flight (one error line, exit 2,
                             no load sent), puts --web-auth in front of the web UI,
                             binds the Prometheus exporter, creates the runtime as
                             ``environment.llmload``, hands the users their load context
                             (:mod:`llmload.users.context`) and the ladder shape its driver
test_start                   re-reads flags (web UI form, workers), starts a new run view
spawning_complete            tracks the largest user count; freezes the objects alive (the users) out of the
                             garbage collector's full collections (:mod:`llmload.runtime.gc_pauses`);
                             ``test_stop`` gives them back
report_to_master (worker)    ships a report (statistics delta + gauges) under ``data["llmload"]``
worker_report (master)       merges the worker's report
llmload_step (custom msg)    master → workers: the ladder's step changed (:mod:`llmload.ladder.tracker`)
llmload_stop_report (msg)    worker → master: the worker's report at its test stop, before Locust's
                             ``client_stopped``: the master summarises at its ``test_stop`` with it
llmload_done_report (msg)    worker → master: its share of a replayed trace is sent and answered
test_stopping                the open-loop dispatcher stops releasing arrivals (before users stop)
test_stop / quitting         builds the summary, prints the table, writes ``--summary-json`` and the
                             run directory; then closes the Prometheus listener
(not a seam)                 :mod:`llmload.runtime.locust_workarounds`: Locust internals that distort a
                             worker's timing (a parser built per option of each spawn message), mended
web UI                       the LLM tabs and ``/llmload/live`` (:mod:`llmload.web.tables`), ``/metrics``,
                             the start form checked before ``/swarm`` (:mod:`llmload.web.form`)
===========================  ================================================================

llmload's own event, declared here:

``environment.events.llmload_request(record: RequestRecord, environment)``
    fired once per finished request (ok, error or interrupted) with its raw record; the
    recorder is one listener, add your own in an ``init`` listener.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from locust.event import EventHook

from llmload.config import add_arguments
from llmload.config.flags import local_master_default
from llmload.config.origin import located
from llmload.errors import ConfigError
from llmload.ladder import MESSAGE as STEP_MESSAGE
from llmload.ladder.shape import LadderShape
from llmload.runtime import Runtime
from llmload.runtime.gc_pauses import freeze_users, thaw
from llmload.runtime.locust_workarounds import install_locust_workarounds
from llmload.runtime.process import DONE_REPORT, STOP_REPORT
from llmload.users.context import attach
from llmload.web.auth import check_web_login, install_web_auth
from llmload.web.form import install_form_check
from llmload.web.tables import install_web_ui

__all__ = ["activate", "install"]


def activate(events: Any, **defaults: Any) -> None:
    """Call once from a locustfile: ``activate(locust.events)`` (optionally ``api=...``, ``profile=...``, ``ladder=...``)."""

    parsers: list[Any] = []  # the parser Locust read the options with: where each value came from

    def add_flags(parser: Any, **_: Any) -> None:
        add_arguments(parser, defaults)
        local_master_default(parser, sys.argv[1:], os.environ)
        parsers[:] = [parser]

    events.init_command_line_parser.add_listener(add_flags)
    events.init.add_listener(lambda environment, **_: install(environment, parser=parsers[-1] if parsers else None))


def install(environment: Any, runtime: Runtime | None = None, *, parser: Any = None) -> Runtime:
    """Create the runtime (unless given one for ``environment``) and register every listener.

    Exits with one error line on bad input; a value from an environment variable or a config file is named
    there as the user set it (``parser``: Locust's, which recorded where each value came from).
    """
    install_locust_workarounds()  # before a worker's first spawn message
    try:
        with located(parser):
            runtime = runtime or Runtime(environment)
            if runtime.coordinator is not None:
                runtime.coordinator.start_exporter()  # binds now: a busy port exits here, before load
            web_ui = getattr(environment, "web_ui", None)
            if web_ui is not None:
                check_web_login(web_ui, runtime.options.web_login)
                credentials = runtime.options.web_auth()
                if credentials is not None:
                    install_web_auth(web_ui, credentials)  # first: every route below is behind it
    except ConfigError as e:
        sys.stderr.write(f"llmload: error: {e}\n")
        sys.exit(2)
    environment.llmload = runtime
    ev = environment.events
    ev.llmload_request = EventHook()
    if runtime.load is not None:
        load = runtime.load
        attach(environment, load)
        ev.llmload_request.add_listener(lambda record, **_: load.on_record(record))
    ev.test_start.add_listener(lambda **_: runtime.on_test_start())

    def spawned(user_count: int, **_: Any) -> None:
        runtime.on_spawned(user_count)
        freeze_users(environment)

    def stopped(**_: Any) -> None:
        runtime.on_test_stop()
        thaw()

    ev.spawning_complete.add_listener(spawned)
    ev.test_stopping.add_listener(lambda **_: runtime.on_test_stopping())
    ev.test_stop.add_listener(stopped)
    ev.quitting.add_listener(lambda **_: runtime.on_quitting())
    ev.report_to_master.add_listener(lambda client_id, data, **_: runtime.on_report_to_master(data))
    ev.worker_report.add_listener(lambda client_id, data, **_: runtime.on_worker_report(client_id, data))
    if runtime.role == "worker":
        environment.runner.register_message(STEP_MESSAGE, lambda msg, **_: runtime.on_step_message(msg))
    if runtime.role == "master":
        environment.runner.register_message(STOP_REPORT, lambda msg, **_: runtime.on_stop_report(msg.node_id, msg.data))
        environment.runner.register_message(DONE_REPORT, lambda msg, **_: runtime.on_done_report(msg.node_id, msg.data))
    if runtime.coordinator is not None:
        if isinstance(environment.shape_class, LadderShape):
            environment.shape_class.attach(runtime.coordinator.driver, headless=lambda: runtime.options.headless)
        install_web_ui(environment, runtime.coordinator.views)  # the LLM tabs; nothing without a web UI
        install_form_check(environment, runtime.options, runtime.coordinator.prepare_ladder)  # errors shown in the page
    runtime.start()
    return runtime
