"""Thresholds (k6 style): pass/fail limits on a run's figures, ``[CLASS:]FIGURE OP NUMBER``.

Given as ``--threshold EXPR`` (repeatable, or comma-separated) and as a profile's
``thresholds = ["ttft_p99_ms<800", "long:ttft_p99_ms<2000"]``; parsed here once, each bad
expression one :class:`~llmload.errors.ConfigError` line before any load. Whether a run met
them is :mod:`llmload.results.threshold_verdict`.

=====================================  ========================================================
figure                                 what (of the class, or of the whole run without ``CLASS:``)
=====================================  ========================================================
``ttft|tpot|itl|e2e|ttfo`` ``_p50|_p90|_p99|_mean|_max`` ``_ms``
                                       a latency (ms) over successful requests
``error_rate``                         errors / (ok + errors)
``output_tokens_per_s``,               successful requests' output tokens, successful requests,
``requests_per_s``,                    every output token that arrived, per second of test time
``received_output_tokens_per_s``
``requests``, ``ok``, ``errors``       counts (``requests>=1000``: enough samples)
``goodput.attainment``,                runs with SLOs (``--slo``): good / (ok + errors), good
``goodput.requests_per_s``,            requests and their output tokens per second
``goodput.output_tokens_per_s``
``prefix_cache_hit_ratio``             cached / prompt tokens, where the server said
=====================================  ========================================================

Operators: ``<``, ``<=``, ``>``, ``>=``. The limit is a plain number (``0.01``, ``1e3``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llmload.errors import ConfigError

__all__ = ["FIGURES", "OPERATORS", "Threshold", "check_classes", "parse_threshold", "parse_thresholds"]

_LATENCIES = ("ttft", "tpot", "itl", "e2e", "ttfo")
_STATS = ("p50", "p90", "p99", "mean", "max")
#: Every figure a threshold may name.
FIGURES: tuple[str, ...] = (
    *(f"{m}_{s}_ms" for m in _LATENCIES for s in _STATS),
    "error_rate",
    "output_tokens_per_s",
    "requests_per_s",
    "received_output_tokens_per_s",
    "requests",
    "ok",
    "errors",
    "goodput.attainment",
    "goodput.requests_per_s",
    "goodput.output_tokens_per_s",
    "prefix_cache_hit_ratio",
)
#: Operator -> its test.
OPERATORS = {"<=": lambda v, x: v <= x, ">=": lambda v, x: v >= x, "<": lambda v, x: v < x, ">": lambda v, x: v > x}
_EXPR = re.compile(r"^\s*(?:([^:<>=\s][^:<>=]*?)\s*:\s*)?([A-Za-z0-9_.]+)\s*(<=|>=|<|>)\s*(\S+)\s*$")
_EXAMPLE = "e.g. 'ttft_p99_ms<800', 'error_rate<0.01', 'long:tpot_p50_ms<=40'"


@dataclass(frozen=True, slots=True)
class Threshold:
    """``[cls:]figure op limit`` as written (``expr``); ``cls`` None: the whole run."""

    expr: str
    figure: str
    op: str
    limit: float
    cls: str | None = None

    def met(self, value: float) -> bool:
        return bool(OPERATORS[self.op](value, self.limit))

    @property
    def latency(self) -> tuple[str, str] | None:
        """``("ttft", "p99")`` for a latency figure, else None."""
        if not self.figure.endswith("_ms"):
            return None
        metric, _, stat = self.figure[:-3].partition("_")
        return metric, stat


def parse_threshold(text: str, where: str = "--threshold", error: type[Exception] = ConfigError) -> Threshold:
    """One expression (module docstring); ``error`` with one line naming ``where`` when it is not one."""
    m = _EXPR.match(str(text))
    if m is None:
        raise error(f"{where} {text!r}: not a threshold; write [CLASS:]FIGURE OP NUMBER with OP one of "
                    f"<, <=, >, >= ({_EXAMPLE})")  # fmt: skip
    cls, figure, op, number = m.groups()
    if figure not in FIGURES:
        close = [f for f in FIGURES if f.split("_")[0] == figure.split("_")[0]][:6] or FIGURES[:6]
        raise error(f"{where} {text!r}: unknown figure {figure!r}; one of {', '.join(close)}, ... "
                    "(docs/ci.md lists them all)")  # fmt: skip
    try:
        limit = float(number)
    except ValueError:
        limit = math.nan
    if not math.isfinite(limit):
        raise error(f"{where} {text!r}: the limit {number!r} is not a number ({_EXAMPLE})")
    return Threshold(" ".join(str(text).split()), figure, op, limit, cls.strip() if cls else None)


def _items(value: Any) -> list[str]:
    """``None``, a string (comma-separated) or a list of them -> the expressions."""
    if value is None or value == "":
        return []
    parts = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if parts is None:
        raise ConfigError(f"thresholds: expected a list of expressions, got {type(value).__name__}")
    return [p.strip() for part in parts for p in str(part).split(",") if p.strip()]


def parse_thresholds(
    value: Any,
    where: str = "--threshold",
    error: type[Exception] = ConfigError,
    classes: Iterable[str] | None = None,
) -> tuple[Threshold, ...]:
    """Every expression of ``value`` (None, a comma-separated string, a list); ``classes``: the names a
    ``CLASS:`` prefix may take (None: not checked here)."""
    try:
        items = _items(value)
    except ConfigError as e:
        raise error(f"{where}: {e}") from None
    out = tuple(parse_threshold(t, where, error) for t in items)
    if classes is not None:
        check_classes(out, classes, where, error)
    return out


def check_classes(
    thresholds: Sequence[Threshold], classes: Iterable[str], where: str = "--threshold",
    error: type[Exception] = ConfigError,
) -> None:
    """Each ``CLASS:`` names a class of the run's profile (else ``error``, one line)."""
    names = tuple(classes)
    for t in thresholds:
        if t.cls is not None and t.cls not in names:
            raise error(f"{where} {t.expr!r}: no class {t.cls!r} in the profile (its classes: {', '.join(names)}); "
                        "drop the prefix for the whole run")  # fmt: skip
