"""The locustfile ``llmload run`` uses: one closed-loop LLM user, the endpoint set by ``--api``.

Copy ``locustfiles/chat_stream.py`` to start your own; this one is what ships in the package.
"""

from __future__ import annotations

from locust import events

from llmload.plugin import activate
from llmload.users import LLMUser

activate(events)


class LLMStreamUser(LLMUser):
    """Sends the workload profile's mix (``--profile``) to the endpoint chosen by ``--api``."""
