"""The sidecar's Prometheus collector: the sampler's last snapshot, in llmload or dcgm-exporter names.

:class:`GpuCollector` is a pull collector (client_python "custom collectors") in its own
``CollectorRegistry`` (:func:`new_registry`), like :mod:`llmload.exporter.collector`. A
scrape reads one :class:`~llmload.gpu.gpu_sampler.Snapshot` and makes no backend call, so
any number of scrapers cost no NVML time and cannot shrink a GPM window.

Series and units are listed in :mod:`llmload.gpu.names`. Rows of a MIG instance carry
two labels more than whole-GPU rows (``GPU_I_PROFILE``, ``GPU_I_ID``), as in
dcgm-exporter's output; a series the GPU does not support is absent, never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from llmload.gpu import names
from llmload.gpu.gpu_sampler import Snapshot
from llmload.gpu.probe import Inventory

__all__ = ["GpuCollector", "SidecarInfo", "new_registry"]


@dataclass(frozen=True, slots=True)
class SidecarInfo:
    """What ``llmload_gpu_sidecar_info`` says. ``reason``: why there is no GPU ("" when there are)."""

    version: str
    backend: str
    driver_version: str = ""
    dcgm_names: bool = False
    reason: str = ""


class GpuCollector(Collector):
    """Pull collector over ``snapshot()`` (see the module docstring)."""

    def __init__(self, snapshot: Callable[[], Snapshot], inventory: Inventory, info: SidecarInfo) -> None:
        self._snapshot = snapshot
        self._inventory = inventory
        self._info = info

    def describe(self) -> list[Metric]:
        return []  # registering must not read a snapshot

    def collect(self) -> Iterator[Metric]:
        snap = self._snapshot()
        yield from (_dcgm_families(snap) if self._info.dcgm_names else _llmload_families(snap))
        yield from self._health(snap)

    def _health(self, snap: Snapshot) -> Iterator[Metric]:
        gpus = self._inventory.gpus
        if snap.processes:
            proc = Metric(names.PROCESS_MEMORY, "Device memory used by one compute process, in bytes", "gauge")
            for row in snap.processes:
                proc.add_sample(names.PROCESS_MEMORY, row.labels, row.values["used"])
            yield proc
        if gpus:
            up = Metric(
                names.UP, "1 while the GPU answers; 0 once it is lost (its other series are then absent)", "gauge"
            )
            sup = Metric(
                names.SIGNAL_SUPPORTED,
                "1 if the signal is read on this GPU, 0 if it is left out (not supported)",
                "gauge",
            )
            for plan in gpus:
                up.add_sample(names.UP, plan.labels, 0.0 if plan.index in snap.lost else 1.0)
                supported = snap.supported.get(plan.index, plan.supported)
                for signal in names.SIGNALS:
                    sup.add_sample(
                        names.SIGNAL_SUPPORTED, {**plan.labels, "signal": signal}, float(signal in supported)
                    )
            yield up
            yield sup
        yield GaugeMetricFamily(names.DEVICES, "GPUs found at start (lost ones included)", value=len(gpus))
        yield GaugeMetricFamily(names.SIDECAR_UP, "1: the GPU sidecar is serving", value=1)
        i = self._info
        info = InfoMetricFamily(names.SIDECAR_INFO, "GPU sidecar version, backend, and why there is no GPU if so")
        info.add_metric(
            (),
            {
                "version": i.version,
                "backend": i.backend,
                "driver_version": i.driver_version,
                "names": "dcgm" if i.dcgm_names else "llmload",
                "reason": i.reason,
            },
        )
        yield info
        yield CounterMetricFamily(names.SAMPLES, "GPU samples taken (on the sidecar's timer)", value=snap.samples)
        if snap.wall_time is not None:
            yield GaugeMetricFamily(
                names.SAMPLE_TIMESTAMP, "Wall-clock time of the last sample (Unix seconds)", value=snap.wall_time
            )
            yield GaugeMetricFamily(
                names.SAMPLE_DURATION, "How long the last sample took, in seconds", value=snap.duration_s
            )


def _llmload_families(snap: Snapshot) -> Iterator[Metric]:
    families: dict[str, Metric] = {}
    for row in snap.rows:
        for key, value in row.values.items():
            if key == "memory_free":
                continue
            labels = row.labels
            if key in ("dram_bandwidth", "memory_busy"):
                source = names.SOURCE_GPM if key == "dram_bandwidth" else names.SOURCE_MEMORY_BUSY
                if row.bandwidth_source != source:
                    continue
                labels = {**labels, "source": source}
            export = names.LLMLOAD[key]
            fam = families.get(export.name)
            if fam is None:
                fam = families[export.name] = Metric(export.name, export.help, "gauge")
            fam.add_sample(export.name, labels, value)
    yield from families.values()


def _dcgm_families(snap: Snapshot) -> Iterator[Metric]:
    families: dict[str, Metric] = {}
    for row in snap.rows:
        for key, value in row.values.items():
            export = names.DCGM[key]
            fam = families.get(export.name)
            if fam is None:
                fam = families[export.name] = Metric(export.name, export.help, "gauge")
            fam.add_sample(export.name, row.labels, export.value(value))
    yield from families.values()


def new_registry(collector: GpuCollector) -> CollectorRegistry:
    """A fresh registry holding only ``collector`` (never the process-global REGISTRY)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry
