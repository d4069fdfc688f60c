"""The run's coordination in a Locust process, split by role.

* :mod:`~llmload.runtime.options` — the one reader of ``environment.parsed_options``, and
  :meth:`~llmload.runtime.options.Options.forward`, the one way values travel to workers;
* :mod:`~llmload.runtime.load_role` — :class:`LoadProcess`, the load-process role (standalone,
  ``--worker``): its users' :class:`~llmload.users.context.LoadContext`, recording, reports;
* :mod:`~llmload.runtime.coordinator` — :class:`Coordinator`, the master/standalone part:
  merging, lost workers, ladder driver, exporter, collection, the summary's timing;
* :mod:`~llmload.runtime.views` — :class:`~llmload.runtime.views.LiveViews`, what the web UI, its
  charts and the exporter read during a test (one ``offered_rate``);
* :mod:`~llmload.runtime.conclusion` — :func:`~llmload.runtime.conclusion.conclude`, the run's
  results from what the coordinator knows at its end (a pure function);
* :mod:`~llmload.runtime.publish` — :func:`~llmload.runtime.publish.publish`: the console table,
  ``--summary-json`` and the run directory from one summary;
* :mod:`~llmload.runtime.roles` — :class:`~llmload.runtime.roles.Role`: standalone, worker and
  master, each its parts and the behaviour its role needs;
* :mod:`~llmload.runtime.process` — :class:`Runtime`: the role this process plays,
  configuration at start-up and per test, the event handlers :func:`llmload.plugin.install` registers;
* :mod:`~llmload.runtime.workload` — :func:`~llmload.runtime.workload.run_workload`, the run's workload for
  every role: the profile, or the trace replayed (``--trace``) and its profile;
* :mod:`~llmload.runtime.checks` — :func:`~llmload.runtime.checks.preflight`: every check of
  :mod:`llmload.preflight` that applies, at start-up and for each web UI form;
* :mod:`~llmload.runtime.drain` — :class:`~llmload.runtime.drain.DrainGuard` (the wait for requests in
  flight when a test stops, which a Ctrl-C cuts short) and :class:`~llmload.runtime.drain.RunInterrupt`;
* :mod:`~llmload.runtime.repeat_runner` — :func:`~llmload.runtime.repeat_runner.run_repeated`:
  ``llmload run --repeat N``, the same test N times as child processes, one run directory;
* :mod:`~llmload.runtime.locust_workarounds` — workarounds for Locust internals that distort what a
  worker measures (:func:`~llmload.runtime.locust_workarounds.install_locust_workarounds`);
* :mod:`~llmload.runtime.gc_pauses` — the objects alive when spawning completes frozen out of the
  garbage collector's full collections, whose pauses grow with the sessions a process holds.
"""

from __future__ import annotations

from llmload.runtime.coordinator import Coordinator
from llmload.runtime.load_role import LoadProcess
from llmload.runtime.options import Options
from llmload.runtime.process import Runtime, role_of

__all__ = ["Coordinator", "LoadProcess", "Options", "Runtime", "role_of"]
