"""``python -m llmload.sim``: run the simulator in the foreground until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import sys

from llmload.errors import ConfigError
from llmload.sim.config import add_arguments, config_from_args
from llmload.sim.http_server import SimServer
from llmload.sim.runner import serve_until_signal

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m llmload.sim",
        description="Simulated OpenAI-compatible LLM server: a fixed time to first token and inter-token latency "
        "(--mode fixed), or a continuous-batching engine model with a simulated GPU (--preset, see "
        "docs/simulator.md). Prometheus metrics in vLLM's names on /metrics.",
    )
    add_arguments(parser)
    ns = parser.parse_args(argv)
    try:
        config = config_from_args(ns)
    except ConfigError as e:
        parser.error(str(e))
    server = SimServer(config)

    def ready(url: str) -> None:
        print(f"llmload sim listening on {url} ({config.describe()})", flush=True)
        if server.gpu_url:
            print(f"llmload sim GPU metrics on {server.gpu_url}/metrics", flush=True)

    try:
        serve_until_signal(server, ready)
    except OSError as e:  # port in use, address not available
        print(f"llmload sim: cannot listen on {config.host}:{config.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
