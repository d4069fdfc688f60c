"""Samples from a ``/metrics`` text or from a Prometheus query answer, indexed by name.

Both inputs become a :class:`Samples` index, the only thing the engine and GPU readers
(:mod:`~llmload.collect.engines`, :mod:`~llmload.collect.gpus`) look at. Names are
normalised so that one alias fits every way a series reaches us: a trailing ``_total``
is dropped (prometheus_client's parser adds it to every counter sample, TGI's exporter
never writes it, Prometheus stores what was exposed), so ``vllm:num_preemptions_total``
and TGI's ``tgi_request_count`` are found as ``vllm:num_preemptions`` and
``tgi_request_count``. NaN and infinite values are left out.

:func:`parse_exposition` runs on the load generator's event loop, so it is built for
speed: it keeps only the samples whose name the readers know (an engine's page is mostly
histograms and process series it never reads) and reads each kept line with one regular
expression, sending only the lines that do not match it to ``prometheus_client``'s
parser. On the recorded vLLM page that is 0.7 ms instead of 5.7 ms with
``prometheus_client`` alone (``benchmarks/collect_cost.py``); the tests check that both
read every recorded page the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Row", "Samples", "parse_exposition", "samples_from_query"]

Row = tuple[dict[str, str], float]


class Samples:
    """One reading of one source: normalised sample name -> rows of (labels, value)."""

    __slots__ = ("_rows",)

    def __init__(self, samples: Iterable[tuple[str, dict[str, str], float]] = ()) -> None:
        rows: dict[str, list[Row]] = {}
        for name, labels, value in samples:
            if not math.isfinite(value):
                continue
            if name.endswith("_total"):
                name = name[:-6]
            rows.setdefault(name, []).append((labels, float(value)))
        self._rows = rows

    @classmethod
    def merge(cls, parts: Iterable[Samples]) -> Samples:
        """One index holding the rows of all ``parts``."""
        out = cls()
        for part in parts:
            for name, rows in part._rows.items():
                out._rows.setdefault(name, []).extend(rows)
        return out

    def get(self, name: str) -> list[Row]:
        """Rows of ``name`` (normalised: no ``_total``); empty when absent."""
        return self._rows.get(name, [])

    def first(self, names: Iterable[str]) -> tuple[str, list[Row]] | None:
        """The first of ``names`` that is present, with its rows (alias lists: preferred first)."""
        for name in names:
            rows = self._rows.get(name)
            if rows:
                return name, rows
        return None

    def names(self) -> Iterator[str]:
        return iter(self._rows)

    def count_prefix(self, prefix: str) -> int:
        """How many distinct names start with ``prefix``."""
        return sum(1 for n in self._rows if n.startswith(prefix))

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)


_LINE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_ESCAPED = re.compile(r"\\[\\\"n]")


def _name(line: str) -> str:
    """The metric name a sample line starts with (up to ``{`` or the first blank)."""
    for i, ch in enumerate(line):
        if ch in "{ \t":
            return line[:i]
    return line


def _by_reference_parser(line: str) -> list[tuple[str, dict[str, str], float]]:
    """One line that the fast path could not read, through ``prometheus_client``'s parser."""
    try:
        return [(s.name, s.labels, s.value) for f in text_string_to_metric_families(line + "\n") for s in f.samples]
    except (ValueError, TypeError, IndexError):
        return []


def parse_exposition(text: str, names: Collection[str] | None = None) -> Samples:
    """A Prometheus text exposition (format 0.0.4) -> :class:`Samples`.

    ``names``: keep only samples with these names, as written in the text (None: all).
    Sample lines are read with a regular expression (``name{labels} value [timestamp]``);
    a line it does not match goes to ``prometheus_client``'s parser, and a line neither
    reads is skipped.
    """
    rows = []
    for line in text.split("\n"):
        if not line or line[0] == "#":
            continue
        m = _LINE.match(line)
        if m is None:
            if names is None or _name(line) in names:
                rows.extend(_by_reference_parser(line))
            continue
        name = m.group(1)
        if names is not None and name not in names:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            rows.extend(_by_reference_parser(line))
            continue
        raw = m.group(2)
        labels = {}
        if raw:
            for key, v in _LABEL.findall(raw):
                labels[key] = _ESCAPED.sub(lambda e: _ESCAPES[e.group(0)], v) if "\\" in v else v
        rows.append((name, labels, value))
    return Samples(rows)


def samples_from_query(answer: dict[str, Any]) -> Samples:
    """A Prometheus HTTP API instant-query answer (``resultType: vector``) -> :class:`Samples`."""
    data = answer.get("data") or {}
    rows = []
    for item in data.get("result") or ():
        metric = dict(item.get("metric") or {})
        name = metric.pop("__name__", "")
        try:
            value = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if name:
            rows.append((name, metric, value))
    return Samples(rows)
