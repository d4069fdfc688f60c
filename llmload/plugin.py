"""Wiring llmload into Locust: the ONE place where listeners and events are registered.

A locustfile calls :func:`activate` once at import (Locust parses the command line right
after importing locustfiles, so the flag group must be added then); everything else is
installed on the ``init`` event by :func:`install`:

===========================  ================================================================
Locust event                 what llmload does
===========================  ================================================================
init_command_line_parser     adds the llmload flags (:mod:`llmload.options`)
init                         validates flags and profile (one error line, exit 2, no load sent),
                             creates the :class:`~llmload.runtime.Runtime` as ``environment.llmload``
test_start                   re-reads flags (web UI form, workers), starts a new run view
spawning_complete            tracks the largest user count
report_to_master (worker)    ships a report (statistics delta + gauges) under ``data["llmload"]``
worker_report (master)       merges the worker's report
llmload_step (custom msg)    master → workers: the ladder's step changed (:mod:`llmload.steps`)
test_stop / quitting         builds the summary, prints the table, writes ``--summary-json``;
                             then closes the Prometheus listener (:mod:`llmload.exporter`)
===========================  ================================================================

llmload's own event, declared here:

``environment.events.llmload_request(record: RequestRecord, environment)``
    fired once per finished request (ok, error or interrupted) with its raw record; the
    recorder is one listener, add your own in an ``init`` listener.
"""

from __future__ import annotations

import sys
from typing import Any

from locust.event import EventHook

from llmload.errors import ConfigError
from llmload.exporter import install_exporter
from llmload.options import add_arguments
from llmload.runtime import Runtime
from llmload.steps import MESSAGE as STEP_MESSAGE
from llmload.webui import install_web_ui

__all__ = ["activate", "install"]


def activate(events: Any, **defaults: Any) -> None:
    """Call once from a locustfile: ``activate(locust.events)`` (optionally ``api=...``)."""
    events.init_command_line_parser.add_listener(lambda parser, **_: add_arguments(parser, defaults))
    events.init.add_listener(lambda environment, **_: install(environment))


def install(environment: Any) -> Runtime:
    """Create the runtime and register every listener. Exits with one error line on bad input."""
    try:
        runtime = Runtime(environment)
        # Binds the Prometheus listener now (a busy port exits here, before load); its
        # quitting listener goes first so that it runs last (quitting fires in reverse).
        install_exporter(environment, runtime)
    except ConfigError as e:
        sys.stderr.write(f"llmload: error: {e}\n")
        sys.exit(2)
    environment.llmload = runtime
    ev = environment.events
    ev.llmload_request = EventHook()
    ev.llmload_request.add_listener(lambda record, **_: runtime.on_record(record))
    ev.test_start.add_listener(lambda **_: runtime.on_test_start())
    ev.spawning_complete.add_listener(lambda user_count, **_: runtime.on_spawned(user_count))
    ev.test_stop.add_listener(lambda **_: runtime.on_test_stop())
    ev.quitting.add_listener(lambda **_: runtime.on_quitting())
    ev.report_to_master.add_listener(lambda client_id, data, **_: runtime.on_report_to_master(data))
    ev.worker_report.add_listener(lambda client_id, data, **_: runtime.on_worker_report(client_id, data))
    if runtime.is_worker:
        environment.runner.register_message(STEP_MESSAGE, lambda msg, **_: runtime.on_step_message(msg))
    runtime.start()
    install_web_ui(environment, runtime)  # the LLM tabs; nothing without a web UI
    return runtime
