"""llmload's own pages in Locust's web UI: the LLM tab's live charts.

* :mod:`~llmload.web.series` — one sample of the live numbers every few seconds, in a bounded
  ring buffer, and the columns ``/llmload/series`` serves (pure);
* :mod:`~llmload.web.charts` — the sampling greenlet, the routes, and the script tag that
  puts the chart page into the LLM tab;
* ``static/`` — the chart page (``charts.html``, ``charts.js``, ``charts.css``), the tab's
  loader (``loader.js``) and uPlot, vendored (version and licence in ``static/README.md``).

The LLM tab's tables themselves are :mod:`llmload.webui`'s.
"""

from __future__ import annotations

from llmload.web.charts import ChartInputs, ChartSampler, install_charts
from llmload.web.series import SeriesBuffer, series_payload

__all__ = ["ChartInputs", "ChartSampler", "SeriesBuffer", "install_charts", "series_payload"]
