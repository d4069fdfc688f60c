"""The ladder as a Locust ``LoadTestShape`` (master or standalone only; the web UI shows it).

Locust creates the shape itself (no constructor arguments), so :func:`llmload.plugin.install`
hands it its :class:`~llmload.ladder.plan.LadderDriver` with :meth:`LadderShape.attach`;
without one (llmload not installed) the shape ends at once. The shape reads Locust's common
options (``use_common_options``): the web UI form keeps its user count, spawn rate and run
time, which run when no ladder is set (and cap a rate ladder's requests in flight), so
the one shape runs what the form says, ladder or not. The LLM tab shows the current step.
"""

from __future__ import annotations

from locust import LoadTestShape

from llmload.ladder.plan import LadderDriver

__all__ = ["LadderShape"]


class LadderShape(LoadTestShape):
    """Holds each ``--ladder`` user count for ``--step-time``, or ``-u``/``-r`` without a ladder (:mod:`llmload.ladder.plan`)."""

    use_common_options = True
    _driver: LadderDriver | None = None

    def attach(self, driver: LadderDriver) -> None:
        self._driver = driver

    def tick(self) -> tuple[int, float] | None:
        if self._driver is None:
            return None
        return self._driver.tick(self.get_run_time())
