"""Serving the exporter's registry over HTTP, and wiring it into a Locust process.

The coordinator (:mod:`llmload.runtime.coordinator`, on the master or a standalone process;
workers hold no merged state and export nothing) calls :func:`start_exporter`, which serves
``/metrics`` in two places:

* a dedicated listener on ``--exporter-host:--exporter-port`` (default ``127.0.0.1:9646``),
  in headless and web-UI mode alike, so one scrape config fits every run;
* the Locust web UI's Flask app, when the web UI runs: ``<--web-base-path>/metrics``, same
  answer, on the web port (not behind ``--web-login``, which Prometheus cannot pass).

The listener is gevent's ``pywsgi`` server (like Locust's web UI), so a scrape runs in
a greenlet of the process's own loop and reads the aggregator without locks. It binds
during ``init``: a busy port is a :class:`~llmload.errors.ConfigError` (one error line,
exit 2, no load sent). It is closed when the runner quits (its holder greenlet lives in
``runner.greenlet``) or at ``quitting`` after the summary, after ``--exporter-linger``
seconds, so a headless run can let Prometheus take a last scrape with the final counts.
The flags are :class:`~llmload.config.ExporterConfig`.
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable
from typing import Any

import gevent
from gevent.event import Event
from gevent.pool import Pool
from gevent.pywsgi import WSGIServer
from prometheus_client import make_wsgi_app
from prometheus_client.registry import CollectorRegistry

from llmload.config import ExporterConfig
from llmload.errors import ConfigError
from llmload.exporter.collector import ExportContext, LlmloadCollector, new_registry
from llmload.metrics.aggregation import Snapshot

__all__ = ["Exporter", "MetricsServer", "start_exporter"]

log = logging.getLogger("llmload")

_MAX_CONNECTIONS = 16  # concurrent scrapes served; more wait in the accept queue


class MetricsServer:
    """``/metrics`` (any path, in fact) of one registry on a gevent WSGI listener."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        self._server = WSGIServer((host, port), make_wsgi_app(registry), spawn=Pool(_MAX_CONNECTIONS), log=None)
        self._stopped = Event()
        self.host, self.port = host, port

    def start(self) -> None:
        """Bind and accept now; a bind failure is a one-line :class:`ConfigError`."""
        where = f"{self.host}:{self.port}"
        try:
            self._server.start()
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"--exporter-port {self.port}: {where} is already in use (another llmload?); "
                    "choose another port with --exporter-port, or turn the exporter off with --no-exporter"
                ) from None
            reason = f"unknown host ({e})" if isinstance(e, socket.gaierror) else (e.strerror or str(e))
            raise ConfigError(f"--exporter-host {self.host}: cannot listen on {where}: {reason}") from None
        self.port = self._server.server_port  # the bound port when 0 was asked

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self._server.stop(timeout=1)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"


class Exporter:
    """The registry, its optional dedicated listener, and the greenlet that holds it open."""

    def __init__(
        self,
        registry: CollectorRegistry,
        server: MetricsServer | None,
        linger_s: float,
        sleep: Callable[[float], None] = gevent.sleep,
    ) -> None:
        self.registry = registry
        self.server = server
        self.linger_s = linger_s
        self._sleep = sleep
        self._holder: gevent.Greenlet | None = None

    def hold(self, group: Any | None) -> None:
        """Keep the listener open until the holder is killed (runner quit or :meth:`close`)."""
        if self.server is None:
            return
        server = self.server
        self._holder = group.spawn(self._hold, server) if group is not None else gevent.spawn(self._hold, server)
        self._holder.link(lambda _: server.stop())  # also when killed before it ever ran
        gevent.sleep(0)  # let it start: only a running holder can linger

    def _hold(self, server: MetricsServer) -> None:
        try:
            Event().wait()
        except gevent.GreenletExit:
            if self.linger_s > 0:
                log.info(
                    "llmload: serving %s %gs more for a last scrape (--exporter-linger)", server.url, self.linger_s
                )
                self._sleep(self.linger_s)
        finally:
            server.stop()

    def close(self) -> None:
        """Linger (if asked), then stop the listener; blocks until it is closed."""
        if self._holder is not None:
            self._holder.kill(block=True)
        elif self.server is not None:
            self.server.stop()


def _serve_on_web_ui(web_ui: Any, registry: CollectorRegistry) -> None:
    from flask import Response, request

    app = make_wsgi_app(registry)  # same answer as the listener: content negotiation, gzip, name[] filter

    def metrics() -> Any:
        return Response.from_app(app, request.environ)

    # Under --web-base-path, beside Locust's own pages (read from where Locust mounted "/").
    base = next((r.rule.rstrip("/") for r in web_ui.app.url_map.iter_rules() if r.endpoint == "locust.index"), "")
    web_ui.app.add_url_rule(f"{base}/metrics", "llmload_metrics", metrics)


def start_exporter(
    config: ExporterConfig,
    snapshot: Callable[[], Snapshot],
    context: Callable[[], ExportContext],
    *,
    web_ui: Any = None,
    group: Any = None,
) -> Exporter | None:
    """Serve ``snapshot()`` and ``context()`` as ``/metrics`` (None when ``--no-exporter``).

    Binds the dedicated listener now (a busy port is a :class:`ConfigError`), adds the
    route to ``web_ui`` when there is one, and holds the listener open in ``group`` (the
    runner's greenlet group: the listener closes when the runner quits) until
    :meth:`Exporter.close`.
    """
    if not config.enabled:
        return None
    registry = new_registry(LlmloadCollector(snapshot, context))
    server = None
    if config.port:
        server = MetricsServer(registry, config.host, config.port)
        server.start()
        log.info("llmload: Prometheus metrics at %s", server.url)
    if web_ui is not None:
        _serve_on_web_ui(web_ui, registry)
    exporter = Exporter(registry, server, config.linger_s)
    exporter.hold(group)
    return exporter
