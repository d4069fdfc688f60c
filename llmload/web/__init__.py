"""llmload's pages in Locust's web UI: the LLM tab (tables and live charts), its start form and its guard.

* :mod:`~llmload.web.tables` — the "LLM" tabs' tables and ``/llmload/live`` (the same numbers as
  JSON), read from the run's :class:`~llmload.runtime.views.LiveViews`;
* :mod:`~llmload.web.series` — one sample of the live numbers every few seconds, in a bounded
  ring buffer, and the columns ``/llmload/series`` serves (pure);
* :mod:`~llmload.web.live_charts` — the sampling greenlet, the routes, and the script tag that
  puts the chart page into the LLM tab (its inputs: :class:`~llmload.runtime.views.ChartInputs`);
* :mod:`~llmload.web.state` — the runner's state as Locust's page is told it (a stop in progress reads as running);
* :mod:`~llmload.web.form` — the start form, checked (and pre-flighted) before Locust's ``/swarm`` starts a test;
* :mod:`~llmload.web.auth` — ``--web-auth user:password``: HTTP basic auth in front of every route;
* ``static/`` — the chart page (``charts.html``, ``charts.js``, ``charts.css``), the tab's
  loader (``loader.js``) and uPlot, vendored (version and licence in ``static/README.md``).

The web package sits on top (beside :mod:`llmload.plugin`, which installs it): it reads the runtime's
live views and options, and nothing below it imports it.
"""

from __future__ import annotations

from llmload.web.live_charts import ChartSampler, install_charts
from llmload.web.series import SeriesBuffer, series_payload

__all__ = ["ChartSampler", "SeriesBuffer", "install_charts", "series_payload"]
