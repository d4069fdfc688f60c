"""Other published LLM traces, converted to the Mooncake format that ``--trace`` replays.

=============  ===========================================  ==========================================
``--from``     columns read (CSV with a header)             notes
=============  ===========================================  ==========================================
``burstgpt``   ``Timestamp`` (s from the trace's start),    BurstGPT (Azure OpenAI GPT-3.5/GPT-4). Rows
               ``Request tokens``, ``Response tokens``,     whose ``Response tokens`` is 0 are failed
               ``Model`` (for ``--model``)                  requests: skipped and counted
``azure``      ``TIMESTAMP`` (date and time),               Azure LLM inference traces 2023/2024
               ``ContextTokens``, ``GeneratedTokens``       (``AzureLLMInferenceTrace_{code,conv}``)
=============  ===========================================  ==========================================

Neither records prefix reuse, so converted entries have no ``hash_ids``: every replayed
prompt is unique (a prefix cache finds nothing the trace did not promise). Times are made
relative to the first kept row, in milliseconds; rows are sorted by time (stable).
Bad input is one :class:`~llmload.errors.ProfileError` line naming the file, the row and
the column.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from llmload.errors import ProfileError
from llmload.workload.traces import TraceEntry

__all__ = ["FORMATS", "Converted", "convert_file", "convert_rows"]


@dataclass(frozen=True, slots=True)
class _Format:
    time: str
    input: str
    output: str
    parse_time: Callable[[str], float]  # seconds on any origin


def _seconds(text: str) -> float:
    t = float(text)
    if not math.isfinite(t):
        raise ValueError(text)
    return t


def _datetime(text: str) -> float:
    """``2023-11-16 18:15:46.6805900`` (7 fraction digits, as Azure writes them) → POSIX seconds."""
    head, dot, frac = text.strip().partition(".")
    base = datetime.fromisoformat(head).timestamp()
    return base + (float("0." + frac) if dot and frac else 0.0)


FORMATS: dict[str, _Format] = {
    "burstgpt": _Format("Timestamp", "Request tokens", "Response tokens", _seconds),
    "azure": _Format("TIMESTAMP", "ContextTokens", "GeneratedTokens", _datetime),
}


@dataclass(frozen=True, slots=True)
class Converted:
    entries: list[TraceEntry]
    skipped: int  # rows left out: failed requests (0 output tokens) or another --model


def convert_rows(rows: Iterable[Mapping[str, str]], fmt: str, where: str, model: str | None = None,
                 limit: int | None = None) -> Converted:  # fmt: skip
    """Entries from CSV rows (dicts) in format ``fmt``; ``where`` names the source in errors."""
    if fmt not in FORMATS:
        raise ProfileError(f"unknown trace format {fmt!r}: choose one of {', '.join(FORMATS)}")
    f = FORMATS[fmt]
    kept: list[tuple[float, int, int]] = []
    skipped = 0
    for n, row in enumerate(rows, 2):  # row 1 is the header
        if n == 2:
            missing = [c for c in (f.time, f.input, f.output) if c not in row]
            if missing:
                raise ProfileError(f"{where}: no column {missing[0]!r} (--from {fmt} reads the columns {f.time!r}, "
                                   f"{f.input!r}, {f.output!r}); is it the right format?")  # fmt: skip
        if model is not None and row.get("Model") != model:
            skipped += 1
            continue
        t = _cell(row, f.time, f.parse_time, where, n)
        inp = _cell(row, f.input, int, where, n)
        out = _cell(row, f.output, int, where, n)
        if out == 0 or inp == 0:  # a failed request (BurstGPT writes 0 response tokens)
            skipped += 1
            continue
        if inp < 0 or out < 0:
            raise ProfileError(f"{where}: row {n}: token counts must be >= 0, got {inp} and {out}")
        kept.append((t, inp, out))
        if limit is not None and len(kept) == limit:
            break
    if not kept:
        raise ProfileError(f"{where}: no request to convert ({skipped} rows skipped: failed requests or another model)")
    kept.sort(key=lambda r: r[0])
    t0 = kept[0][0]
    entries = [TraceEntry(round((t - t0) * 1000.0, 3), inp, out) for t, inp, out in kept]
    return Converted(entries, skipped)


def convert_file(path: str | Path, fmt: str, model: str | None = None, limit: int | None = None) -> Converted:
    """:func:`convert_rows` over a CSV file."""
    where = f"trace '{path}'"
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return convert_rows(csv.DictReader(fh), fmt, where, model, limit)
    except FileNotFoundError:
        raise ProfileError(f"{where}: no such file; check the path") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ProfileError(f"{where}: cannot read it as CSV ({e})") from None


def _cell(row: Mapping[str, str], column: str, parse: Callable[[str], float], where: str, n: int):
    text = (row.get(column) or "").strip()
    try:
        return parse(text)
    except (ValueError, OverflowError):
        raise ProfileError(f"{where}: row {n}: {column} {text!r} is not a valid value") from None
