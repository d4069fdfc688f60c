"""The run's coordination in a Locust process, split by role.

* :mod:`~llmload.runtime.options` — the one reader of ``environment.parsed_options``, and
  :meth:`~llmload.runtime.options.Options.forward`, the one way values travel to workers;
* :mod:`~llmload.runtime.load` — :class:`LoadProcess`, the load-process role (standalone,
  ``--worker``): its users' :class:`~llmload.users.context.LoadContext`, recording, reports;
* :mod:`~llmload.runtime.coordinator` — :class:`Coordinator`, the master/standalone role:
  aggregation, exporter, ladder driver, collection, results, summary, run directory;
* :mod:`~llmload.runtime.process` — :class:`Runtime`: which roles this process plays
  (standalone composes both), configuration at start-up and per test, the event handlers
  :func:`llmload.plugin.install` registers.
"""

from __future__ import annotations

from llmload.runtime.coordinator import Coordinator
from llmload.runtime.load import LoadProcess
from llmload.runtime.options import Options
from llmload.runtime.process import Runtime, role_of

__all__ = ["Coordinator", "LoadProcess", "Options", "Runtime", "role_of"]
