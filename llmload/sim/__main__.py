"""``python -m llmload.sim``: run the simulator in the foreground until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import sys

from llmload.errors import ConfigError
from llmload.sim.config import add_arguments, config_from_args
from llmload.sim.server import serve

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m llmload.sim",
        description="Simulated OpenAI-compatible LLM server: fixed time to first token, then one token every ITL.",
    )
    add_arguments(parser)
    ns = parser.parse_args(argv)
    try:
        config = config_from_args(ns)
    except ConfigError as e:
        parser.error(str(e))

    def ready(url: str) -> None:
        print(f"llmload sim listening on {url} (ttft {config.ttft_ms:g} ms, itl {config.itl_ms:g} ms)", flush=True)

    try:
        serve(config, ready)
    except OSError as e:  # port in use, address not available
        print(f"llmload sim: cannot listen on {config.host}:{config.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
