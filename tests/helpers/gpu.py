"""Shared helpers of the GPU sidecar tests: a sidecar without HTTP, parsed scrapes."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from llmload.gpu import FakeNvml, GpuBackend, GpuCollector, Inventory, Sampler, SidecarInfo, new_registry, probe
from tests.helpers.clock import FakeClock

__all__ = ["Rig", "fake_rig", "parse", "rig", "samples", "scrape"]


@dataclass
class Rig:
    backend: GpuBackend
    inventory: Inventory
    sampler: Sampler
    registry: CollectorRegistry
    clock: FakeClock

    def tick(self, dt: float = 1.0) -> None:
        """Let ``dt`` seconds pass, then sample (as the timer would)."""
        self.clock.advance(dt)
        self.sampler.sample_once()

    def scrape(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        return scrape(self.registry)


def rig(backend: GpuBackend, clock: FakeClock, *, dcgm_names: bool = False, samples: int = 2) -> Rig:
    """Open ``backend``, probe it, and take ``samples`` samples 1 s apart (2: GPM has its first ratios)."""
    backend.open()
    inv = probe(backend, "gpuhost")
    sampler = Sampler(backend, inv, 1.0, clock=clock, wall=lambda: 1.7e9)
    info = SidecarInfo(version="test", backend=backend.name, driver_version=inv.driver_version, dcgm_names=dcgm_names)
    registry = new_registry(GpuCollector(lambda: sampler.snapshot, inv, info))
    r = Rig(backend, inv, sampler, registry, clock)
    for k in range(samples):
        r.tick(1.0 if k else 0.0)
    return r


def fake_rig(gpus: object = 1, *, dcgm_names: bool = False, samples: int = 2) -> Rig:
    """:func:`rig` over a :class:`FakeNvml` of ``gpus`` on a manual clock (``rig.backend`` is the fake)."""
    clock = FakeClock()
    return rig(FakeNvml(gpus, clock=clock), clock, dcgm_names=dcgm_names, samples=samples)


def scrape(registry: CollectorRegistry) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The registry's exposition text, parsed back: sample name → [(labels, value)]."""
    return parse(generate_latest(registry).decode())


def parse(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Exposition text → sample name → [(labels, value)]."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def samples(scraped: dict, name: str, **labels: str) -> list[float]:
    """Values of ``name`` whose labels include ``labels``."""
    return [v for lab, v in scraped.get(name, []) if all(lab.get(k) == x for k, x in labels.items())]
