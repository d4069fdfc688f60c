"""The locustfile ``llmload run --ladder ...`` uses: the LLM user plus the concurrency-ladder shape."""

from __future__ import annotations

from locust import events

from llmload.ladder.shape import LadderShape
from llmload.plugin import activate
from llmload.users import LLMUser

activate(events, ladder="1,5,10,20,30,50")


class LLMStreamUser(LLMUser):
    """Sends the workload profile's mix (``--profile``) to the endpoint chosen by ``--api``."""


class Ladder(LadderShape):
    """Holds each ``--ladder`` user count for ``--step-time``; see llmload/ladder/plan.py."""
