"""The locustfile ``llmload run`` uses for the web UI: the LLM user plus the ladder shape, no ladder by default.

The shape runs what the start form says (:mod:`llmload.ladder.shape`): its users, spawn rate
and run time, or the ladder (``ladder``, ``rate_ladder``, ``step_time``, ...) when one is
filled in, as ``llmload run`` would on the command line. Headless runs use ``locustfile.py``
(or ``locustfile_ladder.py`` with ``--ladder``).
"""

from __future__ import annotations

from locust import events

from llmload.ladder import shape  # the module, not the class: Locust takes every shape class it finds here
from llmload.plugin import activate
from llmload.users import LLMUser

activate(events)


class LLMStreamUser(LLMUser):
    """Sends the workload profile's mix (``--profile``) to the endpoint chosen by ``--api``."""


class FormLoad(shape.LadderShape):
    """The form's users, or its ladder when one is set; see llmload/ladder/plan.py."""
