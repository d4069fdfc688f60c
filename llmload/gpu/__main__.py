"""``llmload gpu-sidecar`` / ``python -m llmload.gpu``: serve this host's GPU metrics until SIGINT/SIGTERM.

Exit codes: 0 stopped by a signal; 2 bad flags or the port cannot be bound; 3 no usable
GPU (``nvidia-ml-py`` missing, no driver, NVML error at start, no device) — one line on
stderr says which and how to fix it, unless ``--allow-missing`` keeps the sidecar
serving ``llmload_gpu_devices 0``.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from llmload.errors import ConfigError
from llmload.gpu.backend import GpuUnavailable
from llmload.gpu.sidecar import DEFAULT_PORT, Sidecar, SidecarConfig

__all__ = ["EXIT_CONFIG", "EXIT_NO_GPU", "build_parser", "main"]

EXIT_CONFIG = 2
EXIT_NO_GPU = 3
_PROG = "llmload gpu-sidecar"

log = logging.getLogger("llmload.gpu")


def build_parser(prog: str = _PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Prometheus exporter of this host's NVIDIA GPUs through NVML (pip install 'llmload[gpu]'): "
        "utilization, memory-bandwidth utilization (GPM where supported), SM activity, memory, power, "
        "temperature, SM clock, PCIe, per-process memory; MIG instances. Sampled on its own timer; "
        "scrapes read the last sample. See docs/gpu.md.",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port of /metrics (default {DEFAULT_PORT})")
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="sample every SECONDS (default 1; not per scrape)",
    )
    parser.add_argument(
        "--dcgm-names",
        action="store_true",
        help="export dcgm-exporter's names and units (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED, ...) "
        "instead of llmload_gpu_*, for existing DCGM dashboards",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="without a usable GPU, keep serving (llmload_gpu_devices 0, reason in llmload_gpu_sidecar_info) "
        f"instead of exiting {EXIT_NO_GPU}",
    )
    parser.add_argument("--hostname", default="", help="the hostname label (default: this host's name)")
    parser.add_argument(
        "--fake-gpus",
        type=int,
        default=0,
        metavar="N",
        help="serve N simulated H200s instead of NVML (dashboards and tests without a GPU)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="default INFO"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    logging.basicConfig(
        level=ns.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s llmload.gpu: %(message)s"
    )
    logging.getLogger("llmload.gpu").setLevel(ns.log_level)
    try:
        config = SidecarConfig(
            host=ns.host,
            port=ns.port,
            interval_s=ns.interval,
            dcgm_names=ns.dcgm_names,
            allow_missing=ns.allow_missing,
            hostname=ns.hostname,
            fake_gpus=ns.fake_gpus,
        )
    except ConfigError as e:
        parser.error(str(e))  # exits 2
    sidecar = Sidecar(config)
    try:
        sidecar.start()
    except GpuUnavailable as e:
        sys.stderr.write(f"{_PROG}: no usable GPU: {e} (or pass --allow-missing to serve without one)\n")
        return EXIT_NO_GPU
    except ConfigError as e:
        sys.stderr.write(f"{_PROG}: error: {e}\n")
        return EXIT_CONFIG
    names = "dcgm-exporter" if config.dcgm_names else "llmload_gpu_*"
    log.info(
        "listening on %s, scrape %s: %d GPU(s), sampled every %gs, %s names",
        sidecar.listen_address,
        sidecar.url,
        len(sidecar.inventory.gpus),
        config.interval_s,
        names,
    )
    try:
        _wait_for_signal()
    finally:
        sidecar.stop()
    log.info("stopped")
    return 0


def _wait_for_signal() -> None:
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
