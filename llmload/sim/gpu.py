"""The simulated GPU: utilization, memory-bandwidth utilization, memory and power from the step mix.

Each engine step tells the GPU when it started, how long its GPU part lasts (the
host part follows, GPU idle) and how many bytes it moves (:mod:`.cost`). Over the
last ``window_s`` seconds (1 s, like NVML's sample period)::

    utilization            = GPU-busy time / window                   (temporal, like NVML util.gpu)
    bandwidth utilization  = bytes moved / (window / time_scale x peak bandwidth)
    power                  = idle + (max - idle) x utilization
    memory used            = weights + reserved + the whole KV pool (allocated up front, as vLLM does)

Exposed under the GPU sidecar's names with dcgm-exporter's label set (``gpu``,
``UUID``, ``modelName``, ``hostname``)::

    llmload_gpu_utilization_ratio, llmload_gpu_memory_bandwidth_utilization_ratio,
    llmload_gpu_memory_used_bytes, llmload_gpu_memory_total_bytes, llmload_gpu_power_watts

Pure: times are the caller's clock.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from dataclasses import dataclass

from llmload.sim.metrics import label_text
from llmload.sim.params import EngineParams

__all__ = ["GpuSample", "SimulatedGpu", "gpu_uuid"]


@dataclass(frozen=True, slots=True)
class GpuSample:
    utilization: float
    bandwidth_utilization: float
    memory_used_bytes: int
    memory_total_bytes: int
    power_watts: float


def gpu_uuid(seed: int) -> str:
    """A stable, seed-derived UUID in NVML's form (``GPU-xxxxxxxx-...``)."""
    return f"GPU-{uuid.UUID(int=random.Random(f'llmload-sim-gpu-{seed}').getrandbits(128), version=4)}"


class SimulatedGpu:
    """Windowed GPU gauges over the steps recorded with :meth:`step`."""

    def __init__(self, p: EngineParams, *, uuid_: str, hostname: str, t0: float, window_s: float = 1.0) -> None:
        self.p = p
        self.window_s = window_s
        self.labels = label_text({"gpu": "0", "UUID": uuid_, "modelName": p.gpu_name, "hostname": hostname})
        self._t0 = t0
        self._steps: deque[tuple[float, float, float]] = deque()  # (start, gpu seconds, bytes)
        self._peak_per_real_s = p.peak_bandwidth_bytes_s / p.time_scale  # bytes per real second at peak

    def step(self, start: float, gpu_s: float, bytes_: float) -> None:
        """Record a step whose GPU part runs from ``start`` for ``gpu_s`` real seconds."""
        steps = self._steps
        steps.append((start, gpu_s, bytes_))
        horizon = start - self.window_s
        while steps and steps[0][0] + steps[0][1] < horizon:
            steps.popleft()

    def sample(self, now: float) -> GpuSample:
        window = min(self.window_s, now - self._t0)
        busy = moved = 0.0
        if window > 0:
            lo = now - window
            for start, dur, b in self._steps:
                overlap = min(start + dur, now) - max(start, lo)
                if overlap > 0:
                    busy += overlap
                    moved += b * overlap / dur
        util = min(1.0, busy / window) if window > 0 else 0.0
        bw = min(1.0, moved / (window * self._peak_per_real_s)) if window > 0 else 0.0
        p = self.p
        return GpuSample(
            utilization=util,
            bandwidth_utilization=bw,
            memory_used_bytes=p.memory_used_bytes,
            memory_total_bytes=p.memory_total_bytes,
            power_watts=p.gpu_power_idle_w + (p.gpu_power_max_w - p.gpu_power_idle_w) * util,
        )

    def render(self, now: float) -> list[str]:
        """Exposition lines of the GPU gauges at ``now``."""
        s = self.sample(now)
        out: list[str] = []
        for name, help_, value in (
            ("llmload_gpu_utilization_ratio", "Fraction of time the GPU was busy (simulated).", s.utilization),
            (
                "llmload_gpu_memory_bandwidth_utilization_ratio",
                "Memory bandwidth used / peak (simulated).",
                s.bandwidth_utilization,
            ),
            ("llmload_gpu_memory_used_bytes", "GPU memory used in bytes (simulated).", float(s.memory_used_bytes)),
            ("llmload_gpu_memory_total_bytes", "GPU memory in bytes (simulated).", float(s.memory_total_bytes)),
            ("llmload_gpu_power_watts", "Power draw in watts (simulated).", s.power_watts),
        ):
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} gauge")
            out.append(f"{name}{{{self.labels}}} {value!r}")
        return out
