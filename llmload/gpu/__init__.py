"""The GPU sidecar: NVML metrics of the inference server's host, as Prometheus ``/metrics``.

Runs on the GPU host (``llmload gpu-sidecar``, ``python -m llmload.gpu``), never
imports Locust or gevent, and imports ``pynvml`` (the ``gpu`` extra, ``nvidia-ml-py``)
only when it starts. One concept per module:

* :mod:`~llmload.gpu.names` — the metric and label names (llmload and dcgm-exporter), units;
* :mod:`~llmload.gpu.backend` — the small :class:`GpuBackend` interface, value types, errors;
* :mod:`~llmload.gpu.nvml` — :class:`NvmlBackend` over the real ``pynvml``;
* :mod:`~llmload.gpu.fake` — :class:`FakeNvml`, seeded with real H200 figures;
* :mod:`~llmload.gpu.probe` — each signal probed once per GPU; MIG layout; sources;
* :mod:`~llmload.gpu.gpu_sampler` — the timer, GPM sample pairs, lost GPUs;
* :mod:`~llmload.gpu.gpu_collector` — the pull collector over the last snapshot;
* :mod:`~llmload.gpu.sidecar` — all of it together behind an HTTP listener;
* :mod:`~llmload.gpu.__main__` — the command line (exit 3 without a GPU).

See docs/gpu.md.
"""

from __future__ import annotations

from llmload.gpu.backend import (
    DeviceInfo,
    GpmMetrics,
    GpuBackend,
    GpuError,
    GpuLost,
    GpuUnavailable,
    MemoryInfo,
    MigInstance,
    NvmlCallError,
    ProcessMemory,
    Unsupported,
    Utilization,
)
from llmload.gpu.fake import FakeGpu, FakeMig, FakeNvml, h200, h200_mig
from llmload.gpu.gpu_collector import GpuCollector, SidecarInfo, new_registry
from llmload.gpu.gpu_sampler import Sampler, Snapshot
from llmload.gpu.nvml import INSTALL_HINT, NvmlBackend
from llmload.gpu.probe import GpuPlan, Inventory, probe
from llmload.gpu.sidecar import DEFAULT_PORT, Sidecar, SidecarConfig

__all__ = [
    "DEFAULT_PORT",
    "INSTALL_HINT",
    "DeviceInfo",
    "FakeGpu",
    "FakeMig",
    "FakeNvml",
    "GpmMetrics",
    "GpuBackend",
    "GpuCollector",
    "GpuError",
    "GpuLost",
    "GpuPlan",
    "GpuUnavailable",
    "Inventory",
    "MemoryInfo",
    "MigInstance",
    "NvmlBackend",
    "NvmlCallError",
    "ProcessMemory",
    "Sampler",
    "Sidecar",
    "SidecarConfig",
    "SidecarInfo",
    "Snapshot",
    "Unsupported",
    "Utilization",
    "h200",
    "h200_mig",
    "new_registry",
    "probe",
]
