"""A cold start in the fixed-latency simulator: ``--cold-start-s S --cold-start-ttft-ms MS``.

Requests that arrive within ``S`` seconds of the first request the server received get ``MS``
milliseconds more time to first token (a real server compiling kernels, filling caches and
raising its GPU clocks on its first requests); later requests get the plain ``--ttft-ms``.
The window runs from the first request, not from the process start, so a load generator's
own start-up does not use it up. :class:`ColdStartModel` wraps the
:class:`~llmload.sim.latency_model.FixedLatencyModel` (same methods, the arrival time decides).
"""

from __future__ import annotations

import argparse
import math

from llmload.errors import ConfigError
from llmload.sim.latency_model import LatencyModel

__all__ = ["ColdStartModel", "add_cold_start_arguments", "check_cold_start"]


def add_cold_start_arguments(g: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    g.add_argument(
        "--cold-start-s",
        type=float,
        default=0.0,
        help="fixed mode: the first S seconds (from the first request) are slower to first token (default 0: off)",
    )
    g.add_argument(
        "--cold-start-ttft-ms",
        type=float,
        default=0.0,
        help="fixed mode: how much slower, in ms, requests arriving in the cold start get their first token",
    )


def check_cold_start(seconds: float, extra_ms: float, mode: str) -> None:
    """One error line when the cold start is out of range or asked of the engine model."""
    for flag, v in (("--cold-start-s", seconds), ("--cold-start-ttft-ms", extra_ms)):
        if not 0 <= v < math.inf:
            raise ConfigError(f"sim: {flag} must be a number >= 0, got {v:g}")
    if (seconds or extra_ms) and mode != "fixed":
        raise ConfigError("sim: --cold-start-s/--cold-start-ttft-ms belong to the fixed-latency mode (--mode fixed)")


class ColdStartModel:
    """``base``'s schedule, ``extra_s`` later for requests that arrived within ``window_s`` of the first one."""

    __slots__ = ("_base", "_extra_s", "_first", "_window_s")

    def __init__(self, base: LatencyModel, window_s: float, extra_s: float) -> None:
        self._base = base
        self._window_s = window_s
        self._extra_s = extra_s
        self._first: float | None = None  # arrival of the first request (loop seconds)

    @property
    def ttft_s(self) -> float:
        return self._base.ttft_s

    @property
    def itl_s(self) -> float:
        return self._base.itl_s

    def _shift(self, t0: float) -> float:
        if self._first is None:
            self._first = t0
        return self._extra_s if t0 - self._first < self._window_s else 0.0

    def due(self, t0: float, i: int) -> float:
        return self._base.due(t0 + self._shift(t0), i)

    def tokens_due(self, t0: float, now: float, max_tokens: int) -> int:
        return self._base.tokens_due(t0 + self._shift(t0), now, max_tokens)

    def duration(self, n_tokens: int) -> float:
        return self._base.duration(n_tokens)
