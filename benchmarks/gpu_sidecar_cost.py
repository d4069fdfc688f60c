"""What the GPU sidecar costs on the GPU host: CPU per sample, per scrape, and idle CPU at 1 s.

Run: ``.venv/bin/python benchmarks/gpu_sidecar_cost.py [--gpus 8] [--samples 2000] [--idle-seconds 10]``.

On :class:`~llmload.gpu.fake.FakeNvml` (H200 figures; GPM on, so PCIe comes from GPM),
measured as this process's CPU time (``time.process_time``), not wall time:

* **sample** — one :meth:`Sampler.sample_once` over ``--gpus`` GPUs (what the timer does
  every ``--interval``), split into the fake backend's own calls and the sidecar's part
  (snapshot, GPM pairing, error handling). On a real GPU the NVML calls add driver time
  on top (microseconds each; ``nvmlDeviceGetPcieThroughput`` would block 2 × 20 ms per GPU,
  which is why PCIe is read from GPM where GPM works);
* **scrape** — collect + exposition text of the last snapshot (no backend call), in
  llmload names and in dcgm-exporter names, and its size;
* **idle** — the whole sidecar (HTTP listener + timer thread) left alone for
  ``--idle-seconds`` at a 1 s interval: CPU time / wall time, in percent of one core.
"""

from __future__ import annotations

import argparse
import time

from prometheus_client import generate_latest

from llmload.gpu import FakeNvml, GpuCollector, Sampler, Sidecar, SidecarConfig, SidecarInfo, new_registry, probe


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def cpu_us_per_call(fn, n: int) -> float:
    fn()  # warm
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n * 1e6


def backend_calls(fake: FakeNvml, gpus: int):
    """The backend calls one sample makes (GPM sample + metrics + release per GPU), without the sidecar."""
    prev = [fake.gpm_sample(i) for i in range(gpus)]

    def once() -> None:
        for i in range(gpus):
            fake.utilization(i)
            fake.memory(i)
            fake.power_w(i)
            fake.power_limit_w(i)
            fake.temperature_c(i)
            fake.sm_clock_hz(i)
            fake.processes(i)
            cur = fake.gpm_sample(i)
            fake.gpm_metrics(prev[i], cur)
            fake.gpm_release(prev[i])
            prev[i] = cur

    return once


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--scrapes", type=int, default=500)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    args = ap.parse_args()

    clock = Clock()  # 1 s between samples, as at the default interval (GPM computes a ratio every time)
    fake = FakeNvml(args.gpus, clock=clock)
    fake.open()
    inventory = probe(fake, "bench")
    sampler = Sampler(fake, inventory, 1.0, clock=clock)

    def one_sample() -> None:
        clock.t += 1.0
        sampler.sample_once()

    sample_us = cpu_us_per_call(one_sample, args.samples)
    assert fake.calls["gpm_metrics"] >= args.samples * args.gpus
    clock2 = Clock()
    calls = backend_calls(FakeNvml(args.gpus, clock=clock2), args.gpus)

    def backend_only() -> None:
        clock2.t += 1.0
        calls()

    backend_us = cpu_us_per_call(backend_only, args.samples)

    results = {}
    for dcgm in (False, True):
        info = SidecarInfo(version="bench", backend="fake", driver_version="590.48.01", dcgm_names=dcgm)
        registry = new_registry(GpuCollector(lambda: sampler.snapshot, inventory, info))
        text = generate_latest(registry)
        results[dcgm] = (cpu_us_per_call(lambda r=registry: generate_latest(r), args.scrapes), len(text))

    sidecar = Sidecar(SidecarConfig(host="127.0.0.1", port=0, interval_s=1.0, fake_gpus=args.gpus))
    sidecar.start()
    time.sleep(1.0)  # past start-up
    c0, w0 = time.process_time(), time.monotonic()
    time.sleep(args.idle_seconds)
    idle_pct = (time.process_time() - c0) / (time.monotonic() - w0) * 100
    sidecar.stop()

    print(f"GPU sidecar cost, {args.gpus} fake H200s (GPM on), process CPU time")
    print(
        f"  per sample:  {sample_us:8.1f} µs  (fake backend calls {backend_us:.1f} µs, "
        f"sidecar {sample_us - backend_us:.1f} µs; {(sample_us - backend_us) / args.gpus:.1f} µs per GPU)"
    )
    for dcgm, (us, size) in results.items():
        label = "dcgm names" if dcgm else "llmload names"
        print(f"  per scrape:  {us:8.1f} µs  ({label}, {size} bytes, no backend call)")
    print(
        f"  idle at a 1 s interval: {idle_pct:.3f} % of one core over {args.idle_seconds:g} s "
        f"(sample cost alone: {sample_us / 1e6 * 100:.4f} %)"
    )


if __name__ == "__main__":
    main()
