"""One run's collection: poll every source on a greenlet, from test start to test stop.

:func:`start_collection` runs on the process that summarises (standalone or ``--master``;
workers never poll): it takes a first reading at once, before the load starts (the baseline
of every counter and histogram), then one every ``--collect-interval`` on an absolute schedule (a slow poll
delays the next one, never shifts the rest). Each poll reads all sources concurrently,
one greenlet each, within :attr:`CollectConfig.timeout_s`; a source that does not answer
in time counts as unreachable for that poll. :meth:`Collection.stop` takes the last
reading, so the run's increases cover it to its end.

A source that fails is logged once when it stops answering and once when it answers
again; the summary reports it (:mod:`~llmload.collect.endpoint_health`). Nothing here ends a run.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

import gevent
import orjson

from llmload.collect.endpoint_health import UNREACHABLE, EndpointStatus
from llmload.collect.engines import EngineReading, read_engine
from llmload.collect.gpus import GpuReading, read_gpus
from llmload.collect.report import TIMESERIES_SCHEMA, gpu_summary, server_summary, timeseries
from llmload.collect.sources import FetchError, PrometheusSource, ScrapeSource, http_request
from llmload.collect.timeline import Timeline
from llmload.config import CollectConfig, public_url
from llmload.jsonvalue import Json

__all__ = ["Collection", "start_collection"]

log = logging.getLogger("llmload")
#: The last reading, taken at the stop, waits at most this long for slow sources.
FINAL_TIMEOUT_S = 2.0
_ROLE_NAMES = {"engine": "engine metrics", "gpu": "GPU metrics"}


class Collection:
    """Polls ``config``'s sources into a :class:`Timeline` started at wall time ``t0``."""

    def __init__(
        self,
        config: CollectConfig,
        t0: float,
        *,
        request: Callable[..., bytes] = http_request,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = gevent.sleep,
    ) -> None:
        self.config = config
        self.timeline = Timeline(t0)
        self._request = request
        self._clock = clock  # wall time of each reading
        self._monotonic, self._sleep = monotonic, sleep  # the polling schedule
        self.sources: list[ScrapeSource | PrometheusSource] = []
        for url in dict.fromkeys(config.engine_urls + config.gpu_urls):
            roles = {"engine"} if url in config.engine_urls else set()
            roles |= {"gpu"} if url in config.gpu_urls else set()
            self.sources.append(ScrapeSource(url, frozenset(roles)))
        if config.prometheus_url:
            self.sources.append(
                PrometheusSource(
                    config.prometheus_url,
                    frozenset({"engine", "gpu"}),
                    config.prometheus_selector,
                    config.prometheus_gpu_selector,
                )
            )
        self.statuses = {s.url: EndpointStatus(public_url(s.url), s.source) for s in self.sources}
        self._warned_empty: set[tuple[str, str]] = set()
        self._loop: gevent.Greenlet | None = None
        self.stopped = False
        self.series_path: str | None = None  # set once the series are written

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Take the baseline reading now, then poll on a greenlet.

        The baseline is read before this returns: Locust fires ``test_start`` (which calls this)
        before it spawns a user or sends a spawn message, so no request of the run is in it. Read
        on the greenlet instead, it came after the first requests had started: against llama.cpp
        the first prompt's processed tokens fell before the baseline, and the run's increase of
        ``llamacpp:prompt_tokens_total`` was 64 tokens short of the prompts the answers stated.
        A source that does not answer holds the start up to :attr:`CollectConfig.timeout_s`.
        """
        started = self._monotonic()
        self.poll()
        self._loop = gevent.spawn(self._run, started)

    def _run(self, next_at: float) -> None:
        interval = self.config.interval_s
        while True:
            next_at += interval
            now = self._monotonic()
            if next_at < now:  # polls took longer than the interval: skip, keep the cadence
                next_at = now
            self._sleep(next_at - now)
            self.poll()

    def stop(self, final: bool = True) -> None:
        """Stop polling; ``final``: take one last reading first (bounded by :data:`FINAL_TIMEOUT_S`)."""
        if self.stopped:
            return
        self.stopped = True
        if self._loop is not None:
            self._loop.kill(block=True, timeout=1.0)
            self._loop = None
        if final:
            self.poll(min(self.config.timeout_s, FINAL_TIMEOUT_S))

    # -- one poll --------------------------------------------------------------------------
    def _read(self, source: ScrapeSource | PrometheusSource, timeout: float) -> Any:
        """(engine reading or None, GPU readings) of one source, or the :class:`FetchError`."""
        try:
            samples = source.read(timeout, self._request)
            engine = read_engine(samples) if "engine" in source.roles else None
            gpus = read_gpus(samples) if "gpu" in source.roles else {}
            return engine, gpus
        except FetchError as e:
            return e
        except Exception as e:  # a parser or server surprise must not end the run
            return FetchError("bad_answer", f"{type(e).__name__}: {e}")

    def poll(self, timeout: float | None = None) -> None:
        """Read every source now (concurrently) and add the readings to the timeline."""
        timeout = self.config.timeout_s if timeout is None else timeout
        t = self._clock()
        jobs = [gevent.spawn(self._read, s, timeout) for s in self.sources]
        gevent.joinall(jobs, timeout=timeout + 0.5)
        engines: dict[str, EngineReading | None] = {}
        gpus: dict[str, GpuReading] = {}
        for source, job in zip(self.sources, jobs, strict=True):
            if job.ready():
                result = job.value
            else:
                job.kill(block=False)
                result = FetchError(UNREACHABLE, f"no answer within {timeout:g}s")
            status = self.statuses[source.url]
            if "engine" in source.roles:
                engines[source.url] = None
            if isinstance(result, FetchError):
                if status.failed(t, result.kind, str(result)):
                    log.warning(
                        "llmload: %s at %s: %s (%s); the run goes on without them, polling again every %gs",
                        self._what(source),
                        status.url,
                        result.kind.replace("_", " "),
                        result,
                        self.config.interval_s,
                    )
                continue
            if status.answered(t):
                log.info("llmload: %s at %s answer again", self._what(source), status.url)
            reading, found = result
            if "engine" in source.roles:
                engines[source.url] = reading
                if reading is not None:
                    status.engine = reading.engine
                else:
                    self._warn_empty(source, "engine", status)
            if "gpu" in source.roles:
                status.gpus = max(status.gpus, len(found))
                for key, r in found.items():
                    gpus.setdefault(key, r)  # one GPU served by two endpoints counts once
                if not found:
                    self._warn_empty(source, "gpu", status)
        self.timeline.add(t, engines, gpus)

    def _what(self, source: ScrapeSource | PrometheusSource) -> str:
        if source.source == "prometheus":
            return "Prometheus"
        return " and ".join(_ROLE_NAMES[r] for r in sorted(source.roles, key=lambda r: r != "engine"))

    def _warn_empty(self, source: ScrapeSource | PrometheusSource, role: str, status: EndpointStatus) -> None:
        if (source.url, role) in self._warned_empty:
            return
        self._warned_empty.add((source.url, role))
        known = "vllm:, sglang:, tgi_ or llamacpp:" if role == "engine" else "llmload_gpu_, DCGM_FI_ or nvidia_smi_"
        log.warning(
            "llmload: %s answers without %s series (%s*); nothing read from it", status.url, _ROLE_NAMES[role], known
        )

    # -- results ---------------------------------------------------------------------------
    def _statuses(self, role: str) -> list[EndpointStatus]:
        return [self.statuses[s.url] for s in self.sources if role in s.roles]

    def summary_extra(self) -> dict[str, Json]:
        """The summary's ``server``, ``gpu`` and ``timeseries`` keys (those that apply)."""
        out: dict[str, Json] = {}
        cfg = self.config
        source = "prometheus" if cfg.prometheus_url and not cfg.engine_urls else "scrape"
        if cfg.engine_urls or cfg.prometheus_url:
            out["server"] = server_summary(self.timeline, self._statuses("engine"), cfg.interval_s, source)
        if cfg.gpu_urls or cfg.prometheus_url:
            out["gpu"] = gpu_summary(self.timeline, self._statuses("gpu"), cfg.interval_s)
        if self.series_path is not None:
            out["timeseries"] = {"path": cfg.timeseries_ref, "schema": TIMESERIES_SCHEMA, "polls": len(self.timeline)}
        return out

    def timeseries(self) -> dict[str, Json]:
        cfg = self.config
        return timeseries(
            self.timeline,
            cfg.interval_s,
            server=bool(cfg.engine_urls or cfg.prometheus_url),
            gpu=bool(cfg.gpu_urls or cfg.prometheus_url),
        )

    def write_timeseries(self) -> None:
        """Write the series to ``--timeseries-json`` (default: beside the summary), if a path is set."""
        path = self.config.timeseries_json
        if not path:
            return
        try:
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(path, "wb") as f:
                f.write(orjson.dumps(self.timeseries()))
            self.series_path = path
        except OSError as e:
            log.error("llmload: cannot write the time series to %s: %s", path, e)


def start_collection(config: CollectConfig, t0: float) -> Collection | None:
    """A started :class:`Collection`, or None when no source is configured."""
    if not config.enabled:
        return None
    c = Collection(config, t0)
    parts = []
    if config.engine_urls:
        parts.append("engine metrics at " + ", ".join(public_url(u) for u in config.engine_urls))
    if config.gpu_urls:
        parts.append("GPU metrics at " + ", ".join(public_url(u) for u in config.gpu_urls))
    if config.prometheus_url:
        parts.append("engine and GPU metrics from Prometheus at " + public_url(config.prometheus_url))
    log.info("llmload: polling %s every %gs", "; ".join(parts), config.interval_s)
    c.start()
    return c
