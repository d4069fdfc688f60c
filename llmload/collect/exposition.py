"""Samples from a ``/metrics`` text or from a Prometheus query answer, indexed by name.

Both inputs become a :class:`Samples` index, the only thing the engine and GPU readers
(:mod:`~llmload.collect.engines`, :mod:`~llmload.collect.gpus`) look at. Names are
normalised so that one alias fits every way a series reaches us: a trailing ``_total``
is dropped (prometheus_client's parser adds it to every counter sample, TGI's exporter
never writes it, Prometheus stores what was exposed), so ``vllm:num_preemptions_total``
and TGI's ``tgi_request_count`` are found as ``vllm:num_preemptions`` and
``tgi_request_count``. NaN and infinite values are left out.

:func:`parse_exposition` keeps only the lines whose metric name starts with one of the
given prefixes before handing them to ``prometheus_client.parser``: an engine's
``/metrics`` is mostly process, GC and HTTP series the collector never reads, and the
parse runs on the load generator's event loop. A text the parser rejects is parsed line
by line, skipping the lines it cannot read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
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


def _keep(text: str, prefixes: tuple[str, ...]) -> str:
    kept = []
    for line in text.splitlines():
        if line.startswith("#"):
            if line.startswith("# TYPE "):
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[2].startswith(prefixes):
                    kept.append(line)
        elif line.startswith(prefixes):
            kept.append(line)
    kept.append("")
    return "\n".join(kept)


def _families(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            yield s.name, s.labels, s.value


def parse_exposition(text: str, prefixes: tuple[str, ...] | None = None) -> Samples:
    """A Prometheus text exposition (format 0.0.4) -> :class:`Samples`.

    ``prefixes``: keep only series whose name starts with one of them (None: all).
    """
    if prefixes is not None:
        text = _keep(text, prefixes)
    try:
        return Samples(list(_families(text)))
    except (ValueError, TypeError, IndexError):
        pass
    rows = []
    for line in text.splitlines():  # one bad line must not lose the others
        if not line or line.startswith("#"):
            continue
        try:
            rows.extend(_families(line + "\n"))
        except (ValueError, TypeError, IndexError):
            continue
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
