"""The simulator's configuration: one frozen object built once from the command line.

Defaults describe a 7B model on one data-centre GPU at concurrency 1: time to first
token 180 ms, then one token every 35 ms.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from llmload.errors import ConfigError

__all__ = ["SimConfig", "add_arguments", "config_from_args", "config_to_args"]


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Settings of one simulator process.

    ``port`` 0 binds a free port (the bound URL is reported by ``serve``'s ``ready``
    callback). ``default_max_tokens`` is used when a request names no token limit.
    ``seed`` seeds the simulator's own RNG (which words a response starts with).
    ``stamp_chunks`` adds the server's send time to every streamed content chunk (see
    :mod:`llmload.sim.api`); for measuring a client's timing error, off by default.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    ttft_ms: float = 180.0
    itl_ms: float = 35.0
    model: str = "llmload-sim"
    seed: int = 0
    default_max_tokens: int = 256
    stamp_chunks: bool = False

    def __post_init__(self) -> None:
        if self.ttft_ms < 0:
            raise ConfigError(f"sim: --ttft-ms must be >= 0, got {self.ttft_ms:g}")
        if self.itl_ms < 0:
            raise ConfigError(f"sim: --itl-ms must be >= 0, got {self.itl_ms:g}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"sim: --port must be in 0..65535, got {self.port}")
        if self.default_max_tokens < 1:
            raise ConfigError(f"sim: --default-max-tokens must be >= 1, got {self.default_max_tokens}")
        if not self.model:
            raise ConfigError("sim: --model must not be empty")

    @property
    def ttft_s(self) -> float:
        return self.ttft_ms / 1000.0

    @property
    def itl_s(self) -> float:
        return self.itl_ms / 1000.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the simulator's flags (``--port``, ``--ttft-ms``, ...) to ``parser``."""
    d = SimConfig()
    g = parser.add_argument_group("simulator")
    g.add_argument("--host", default=d.host, help=f"address to bind (default {d.host})")
    g.add_argument("--port", type=int, default=d.port, help=f"port to bind, 0 = any free port (default {d.port})")
    g.add_argument(
        "--ttft-ms", type=float, default=d.ttft_ms, help=f"time to first token in ms (default {d.ttft_ms:g})"
    )
    g.add_argument("--itl-ms", type=float, default=d.itl_ms, help=f"time between tokens in ms (default {d.itl_ms:g})")
    g.add_argument("--model", default=d.model, help=f"model name served by /v1/models (default {d.model})")
    g.add_argument("--seed", type=int, default=d.seed, help=f"seed of the simulator's RNG (default {d.seed})")
    g.add_argument(
        "--default-max-tokens",
        type=int,
        default=d.default_max_tokens,
        help=f"tokens generated when a request sets no limit (default {d.default_max_tokens})",
    )
    g.add_argument(
        "--stamp-chunks",
        action="store_true",
        default=d.stamp_chunks,
        help='add "llmload_sent_ns" (time.perf_counter_ns() just before the write, CLOCK_MONOTONIC) '
        "to every streamed content chunk, to measure a client's timing error (default off)",
    )


def config_from_args(ns: argparse.Namespace) -> SimConfig:
    """Build a :class:`SimConfig` from flags added by :func:`add_arguments`.

    Raises :class:`~llmload.errors.ConfigError` (one-line message) for invalid values.
    """
    return SimConfig(
        host=ns.host,
        port=ns.port,
        ttft_ms=ns.ttft_ms,
        itl_ms=ns.itl_ms,
        model=ns.model,
        seed=ns.seed,
        default_max_tokens=ns.default_max_tokens,
        stamp_chunks=ns.stamp_chunks,
    )


def config_to_args(config: SimConfig) -> list[str]:
    """The command-line flags that rebuild ``config`` (inverse of :func:`config_from_args`)."""
    args = [
        "--host", config.host,
        "--port", str(config.port),
        "--ttft-ms", repr(config.ttft_ms),
        "--itl-ms", repr(config.itl_ms),
        "--model", config.model,
        "--seed", str(config.seed),
        "--default-max-tokens", str(config.default_max_tokens),
    ]  # fmt: skip
    if config.stamp_chunks:
        args.append("--stamp-chunks")
    return args
