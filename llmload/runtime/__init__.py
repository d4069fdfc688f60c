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
  configuration at start-up and per test, the event handlers :func:`llmload.plugin.install` registers.
"""

from __future__ import annotations

from llmload.runtime.coordinator import Coordinator
from llmload.runtime.load_role import LoadProcess
from llmload.runtime.options import Options
from llmload.runtime.process import Runtime, role_of

__all__ = ["Coordinator", "LoadProcess", "Options", "Runtime", "role_of"]
