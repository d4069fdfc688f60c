"""The sidecar as one object: open the backend, probe, sample on a timer, serve ``/metrics``.

:class:`Sidecar` owns a backend (:class:`~llmload.gpu.nvml.NvmlBackend` by default, or
:class:`~llmload.gpu.fake.FakeNvml` with ``fake_gpus``), the :class:`~llmload.gpu.gpu_sampler.Sampler`
thread, the :class:`~llmload.gpu.gpu_collector.GpuCollector` in its own registry, and a
threaded ``wsgiref`` HTTP listener (plain threads: no gevent, no Locust, so it stays
light beside the inference server). Every path answers ``/metrics`` (client_python's
WSGI app: gzip, OpenMetrics negotiation, ``name[]`` filters).

:meth:`Sidecar.start` raises :class:`~llmload.gpu.backend.GpuUnavailable` when there is
no library, no driver or no GPU (unless ``allow_missing``: then it serves
``llmload_gpu_devices 0`` and the reason in ``llmload_gpu_sidecar_info``), and
:class:`~llmload.errors.ConfigError` when the port cannot be bound.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app
from prometheus_client.registry import CollectorRegistry

from llmload.errors import ConfigError
from llmload.gpu.backend import GpuBackend, GpuLost, GpuUnavailable, NvmlCallError, Unsupported
from llmload.gpu.gpu_collector import GpuCollector, SidecarInfo, new_registry
from llmload.gpu.gpu_sampler import Sampler
from llmload.gpu.probe import Inventory, probe

__all__ = ["DEFAULT_PORT", "MIN_INTERVAL_S", "Sidecar", "SidecarConfig", "version"]

log = logging.getLogger("llmload.gpu")

#: Default port: next to dcgm-exporter's 9400, so both can run on one host.
DEFAULT_PORT = 9401
MIN_INTERVAL_S = 0.1


def version() -> str:
    try:
        from importlib.metadata import version as _version

        return _version("llmload")
    except Exception:  # running from a source tree
        return "unknown"


@dataclass(frozen=True, slots=True)
class SidecarConfig:
    """The sidecar's flags, validated once (:class:`ConfigError`: one line, what and how to fix)."""

    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    interval_s: float = 1.0
    dcgm_names: bool = False
    allow_missing: bool = False
    hostname: str = ""  # "" = socket.gethostname()
    fake_gpus: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port {self.port}: must be 0..65535 (default {DEFAULT_PORT})")
        if not MIN_INTERVAL_S <= self.interval_s <= 3600:
            raise ConfigError(
                f"--interval {self.interval_s:g}: must be {MIN_INTERVAL_S:g}..3600 seconds (default 1; "
                "GPM needs samples at least 0.1 s apart)"
            )
        if self.fake_gpus < 0:
            raise ConfigError(f"--fake-gpus {self.fake_gpus}: must be 0 or more")


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        pass


class Sidecar:
    """Start with :meth:`start`, stop with :meth:`stop`; :attr:`url` is the metrics address."""

    def __init__(self, config: SidecarConfig, backend: GpuBackend | None = None) -> None:
        self.config = config
        if backend is None:
            if config.fake_gpus:
                from llmload.gpu.fake import FakeNvml

                backend = FakeNvml(config.fake_gpus)
            else:
                from llmload.gpu.nvml import NvmlBackend

                backend = NvmlBackend()
        self.backend = backend
        self.hostname = config.hostname or socket.gethostname()
        self.inventory = Inventory("", self.hostname, ())
        self.sampler: Sampler | None = None
        self.registry: CollectorRegistry | None = None
        self.reason = ""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._opened = False

    @property
    def url(self) -> str:
        host = self.config.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
        return f"http://{shown}:{self.port}/metrics"

    @property
    def listen_address(self) -> str:
        """Where the listener is bound, as a user reads it: ``0.0.0.0:9400 (all interfaces)``."""
        host = self.config.host or "0.0.0.0"
        where = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        return f"{where} (all interfaces)" if host in ("0.0.0.0", "::") else where

    @property
    def port(self) -> int:
        return self._server.server_port if self._server is not None else self.config.port

    def start(self) -> None:
        """Open, probe, take the first sample, start the timer, and listen."""
        try:
            self.backend.open()
            self._opened = True
            try:
                self.inventory = probe(self.backend, self.hostname)
            except (NvmlCallError, GpuLost, Unsupported) as e:  # e.g. nvmlDeviceGetCount failing
                raise GpuUnavailable(f"NVML error at start: {e}") from None
            if not self.inventory.gpus:
                raise GpuUnavailable("NVML works but found no GPU (nvidia-smi -L lists none)")
        except GpuUnavailable as e:
            self._close_backend()
            if not self.config.allow_missing:
                raise
            self.reason = str(e)
            self.inventory = Inventory("", self.hostname, ())
            log.warning("no GPU: %s; serving llmload_gpu_devices 0 (--allow-missing)", self.reason)
        self.sampler = Sampler(self.backend, self.inventory, self.config.interval_s)
        info = SidecarInfo(
            version=version(),
            backend=self.backend.name,
            driver_version=self.inventory.driver_version,
            dcgm_names=self.config.dcgm_names,
            reason=self.reason,
        )
        sampler = self.sampler
        self.registry = new_registry(GpuCollector(lambda: sampler.snapshot, self.inventory, info))
        try:
            self._listen(self.registry)
        except ConfigError:
            self._close_backend()
            raise
        if self.inventory.gpus:
            sampler.sample_once()  # the first scrape already has values (GPM: from the second sample on)
            sampler.start()

    def stop(self) -> None:
        """Stop listening and sampling, and release NVML. Idempotent."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self.sampler is not None:
            self.sampler.stop()
        self._close_backend()

    def _listen(self, registry: CollectorRegistry) -> None:
        host, port = self.config.host, self.config.port
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

        class Server(_Server):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        try:
            self._server = make_server(host, port, make_wsgi_app(registry), Server, handler_class=_QuietHandler)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"--port {port}: {where} is already in use (another sidecar? dcgm-exporter uses 9400); "
                    "choose another port with --port"
                ) from None
            reason = f"unknown host ({e})" if isinstance(e, socket.gaierror) else (e.strerror or str(e))
            raise ConfigError(f"--host {host}: cannot listen on {where}: {reason}") from None
        self._thread = threading.Thread(target=self._server.serve_forever, name="llmload-gpu-http", daemon=True)
        self._thread.start()

    def _close_backend(self) -> None:
        if self._opened:
            self._opened = False
            self.backend.close()
