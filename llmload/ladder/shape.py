"""The concurrency ladder as a Locust ``LoadTestShape`` (master or standalone only; the web UI shows it).

Locust creates the shape itself (no constructor arguments), so :func:`llmload.plugin.install`
hands it its :class:`~llmload.ladder.plan.LadderDriver` with :meth:`LadderShape.attach`;
without one (llmload not installed) the shape ends at once. Start the test from the web UI
or headless; the LLM tab shows the current step.
"""

from __future__ import annotations

from locust import LoadTestShape

from llmload.ladder.plan import LadderDriver

__all__ = ["LadderShape"]


class LadderShape(LoadTestShape):
    """Holds each ``--ladder`` user count for ``--step-time`` (see :mod:`llmload.ladder.plan`)."""

    _driver: LadderDriver | None = None

    def attach(self, driver: LadderDriver) -> None:
        self._driver = driver

    def tick(self) -> tuple[int, float] | None:
        if self._driver is None:
            return None
        return self._driver.tick(self.get_run_time())
