"""Live charts in the web UI's LLM tab: a sampling greenlet, llmload's own routes, and the seam into Locust's page.

Routes, below the web UI's base path (``--web-base-path``), behind ``--web-login`` when it is on:

* ``llmload/series?class=NAME&since=T&generation=G`` — the ring buffer as columns
  (:func:`~llmload.web.series.series_payload`): samples newer than ``T`` for a reader of
  buffer generation ``G``, all of them otherwise; ``class`` defaults to ``Overall``, an
  unknown one is a 400 naming the known ones;
* ``llmload/charts`` — the chart page (uPlot, vendored: ``static/README.md``), usable on
  its own, e.g. in a window beside the UI; linked from the "Download Data" tab;
* ``llmload/static/<file>`` — its script, styles and uPlot.

**The seam.** Locust's React UI offers tables, not charts, to extensions: an extended tab
renders exactly one table whose cells are text (Locust 2.47; newer versions render
markdown, still no HTML); ``--build-path`` (a hidden flag) swaps the whole UI build, and
building on Locust's npm UI library would mean a JS build of our own. What Locust does
support is adding Flask routes and hooks to ``web_ui.app``. So an ``after_request`` hook
adds one ``<script>`` tag (``static/loader.js``) to the page Locust renders at ``/``;
that script puts an ``<iframe>`` of ``llmload/charts`` at the top of the LLM tab while that
tab is selected, beside React's table (React's own nodes are never touched: the frame is
an extra sibling it ignores, shown and hidden from a MutationObserver). The frame keeps
the charts' code and styles out of Locust's page and works in any Locust version whose
tabs are ``role="tab"`` buttons; if that ever breaks, the tab still shows its table and
the page still works on its own.

**Sampling.** A greenlet on the process with the web UI (standalone or master) records
one sample every :data:`~llmload.web.series.SAMPLE_INTERVAL_S` while a test spawns, runs or
lets its last requests finish (and one more once it has stopped); the first sample of a new test empties the buffer. It
ends when the web UI's server does. It reads what it charts only through :class:`ChartInputs`,
which the coordinator's live views build (:meth:`llmload.runtime.views.LiveViews.chart_inputs`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent
from flask import Response, request, send_from_directory

from llmload.jsonvalue import Json
from llmload.runtime.views import ChartInputs
from llmload.web.series import OVERALL, SAMPLE_INTERVAL_S, SeriesBuffer, series_payload

__all__ = [
    "CHARTS_PATH",
    "SERIES_PATH",
    "STATIC_DIR",
    "ChartInputs",
    "ChartSampler",
    "install_charts",
]

log = logging.getLogger("llmload")

SERIES_PATH = "llmload/series"
CHARTS_PATH = "llmload/charts"
STATIC_PATH = "llmload/static"
STATIC_DIR = Path(__file__).with_name("static")
LOADER = f'<script src="./{STATIC_PATH}/loader.js"></script>'
#: Runner states in which a test is measured: its last requests still finish in cleanup (standalone) and stopping (master).
_ACTIVE = ("spawning", "running", "cleanup", "stopping")


class ChartSampler:
    """Records a sample per tick while a test runs; see the module docstring."""

    def __init__(self, environment: Any, inputs: ChartInputs, buffer: SeriesBuffer | None = None) -> None:
        self.environment = environment
        self.inputs = inputs
        self.buffer = buffer or SeriesBuffer()
        self._active = False
        self._failed = False
        self.greenlet: gevent.Greenlet | None = None  # the sampling loop, once started

    @property
    def state(self) -> str | None:
        runner = self.environment.runner
        return runner.state if runner is not None else None

    def tick(self) -> bool:
        """Sample if a test is running (or has just stopped); True if a sample was taken."""
        active = self.state in _ACTIVE
        if active and not self._active:
            self.buffer.reset()  # a new test
        was, self._active = self._active, active
        if not (active or was):
            return False
        runner = self.environment.runner
        i = self.inputs
        self.buffer.record(i.snapshot(), runner.user_count if runner is not None else 0, i.classes(), i.timeline())
        return True

    def run(self, alive: Callable[[], bool], interval_s: float = SAMPLE_INTERVAL_S) -> None:
        """Tick every ``interval_s`` while ``alive()``; an error is logged once and never ends the loop."""
        while alive():
            try:
                self.tick()
            except Exception:
                if not self._failed:
                    self._failed = True
                    log.exception("llmload: could not sample the live charts")
            gevent.sleep(interval_s)

    def payload(self, class_name: str, since: float | None, generation: int | None) -> dict[str, Json]:
        i = self.inputs
        return series_payload(self.buffer, class_name, classes=i.classes(), since=since, generation=generation,
                              steps=i.steps(), baseline=i.baseline(), limit_factor=i.limit_factor(), state=self.state,
                              ladder=i.ladder())  # fmt: skip


def _base_path(app: Any) -> str:
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "locust.index":
            return rule.rule.rstrip("/")
    return ""


def _number(name: str, kind: type) -> Any:
    text = request.args.get(name)
    if text in (None, ""):
        return None
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{name}={text!r}: must be a number") from None


def install_charts(environment: Any, inputs: ChartInputs, sample: bool = True) -> ChartSampler | None:
    """Add the chart routes and the LLM tab's chart frame to ``environment.web_ui``; None when there is none.

    ``sample``: start the sampling greenlet (tests tick by hand).
    """
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None:
        return None
    existing = getattr(web_ui, "_llmload_charts", None)
    if existing is not None:
        return existing
    sampler = web_ui._llmload_charts = ChartSampler(environment, inputs)
    app, base = web_ui.app, _base_path(web_ui.app)

    ta = web_ui.template_args
    link = {"href": f"./{CHARTS_PATH}", "title": "Open the LLM charts in a page of their own"}
    ta["extended_csv_files"] = [e for e in ta.get("extended_csv_files") or [] if e.get("href") != link["href"]] + [link]

    @web_ui.auth_required_if_enabled
    def llmload_charts() -> Response:
        return send_from_directory(STATIC_DIR, "charts.html")

    def llmload_static(name: str) -> Response:
        return send_from_directory(STATIC_DIR, name)

    app.add_url_rule(f"{base}/{SERIES_PATH}", "llmload_series", web_ui.auth_required_if_enabled(_series_view(sampler)))
    app.add_url_rule(f"{base}/{CHARTS_PATH}", "llmload_charts", llmload_charts)
    app.add_url_rule(f"{base}/{STATIC_PATH}/<path:name>", "llmload_static", llmload_static)
    app.after_request(_add_chart_loader)
    if sample:
        ui = web_ui

        def alive() -> bool:  # until the web UI's server ends (or was never going to start)
            return ui.greenlet is None or not ui.greenlet.dead

        sampler.greenlet = gevent.spawn(sampler.run, alive)
    return sampler


def _series_view(sampler: ChartSampler) -> Callable[[], Response]:
    """The ``llmload/series`` route: the buffer's columns for one class; a 400 naming what is wrong."""

    def llmload_series() -> Response:
        try:
            since, generation = _number("since", float), _number("generation", int)
        except ValueError as e:
            return Response(json.dumps({"error": str(e)}), status=400, mimetype="application/json")
        class_name = request.args.get("class") or OVERALL
        known = sampler.buffer.class_names(sampler.inputs.classes())
        if class_name not in known:
            error = f"class={class_name!r}: unknown request class; choose one of {', '.join(known)}"
            return Response(json.dumps({"error": error}), status=400, mimetype="application/json")
        return Response(json.dumps(sampler.payload(class_name, since, generation)), mimetype="application/json")

    return llmload_series


def _add_chart_loader(resp: Response) -> Response:
    """After each request: Locust's page (``/``) gets the loader script that frames the charts in the LLM tab."""
    if request.endpoint != "locust.index" or resp.status_code != 200 or resp.mimetype != "text/html":
        return resp
    page = resp.get_data(as_text=True)
    if LOADER not in page and "</body>" in page:
        head, _, tail = page.rpartition("</body>")
        resp.set_data(f"{head}{LOADER}</body>{tail}")
    return resp
