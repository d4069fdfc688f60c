"""Prompt datasets: JSONL (or JSON list) files of real prompts, loaded once per process.

Two record shapes, one record per line of a ``.jsonl`` file, or a ``.json`` file holding a
list of records (the original ShareGPT dump):

* **prompts**: ``{"prompt": "..."}`` (or ``{"text": "..."}``), optionally with
  ``"output_tokens"`` or ``"max_tokens"`` (an int ≥ 1), or a bare JSON string per line.
* **sharegpt**: ``{"conversations": [{"from": "human", "value": "..."}, {"from": "gpt",
  "value": "..."}, ...]}`` (roles ``human``/``user`` and ``gpt``/``assistant``/``chatgpt``),
  or ``{"messages": [{"role": "user", "content": "..."}, ...]}``. The prompt is the first
  user turn; the expected output is the first assistant reply after it (vLLM bench does
  the same). Conversations without a non-empty user turn are skipped, as vLLM skips them.
  Loaded with ``turns=True`` (for a conversation class, :mod:`llmload.workload.conversation`)
  the later turns are kept too, as ``followups``: each next non-empty user message with
  the first assistant reply after it (messages in between, such as a second user message
  or a system message, are skipped, as for the first turn); a last user message without a
  reply is not kept. The recorded replies only size ``max_tokens``: a replay sends the
  replies the server actually gave.

``format = "auto"`` accepts either shape, record by record.

**Token estimate**: ``ceil(characters / 4)`` for prompts and replies alike (OpenAI's rule
of thumb; no tokenizer is loaded). For English prose with the tokenizers of
:mod:`llmload.workload.prompts` it is typically within ±20 %; it undercounts code,
numbers and most non-Latin scripts (CJK text can be about one token per character). The
server's ``usage`` wins when sent; this estimate sizes ``max_tokens`` from ShareGPT replies
and labels ``input_tokens`` before the answer arrives.

Sampling (:class:`DatasetCursor`) walks the entries in a pseudo-shuffled order drawn from
the caller's RNG (a random start and a random stride coprime with the size), so each
cycle visits every entry once and a user needs O(1) memory, not a permutation.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from llmload.errors import ProfileError
from llmload.jsonvalue import Json

__all__ = ["FORMATS", "Dataset", "DatasetCursor", "DatasetEntry", "DatasetTurn", "estimate_tokens", "load_dataset"]

#: Accepted values of a dataset prompt's ``format``.
FORMATS = ("auto", "prompts", "sharegpt")
_USER = {"human", "user"}
_ASSISTANT = {"gpt", "assistant", "chatgpt", "bard", "bing", "model"}


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text``: ``ceil(len(text) / 4)``, at least 1."""
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True, slots=True)
class DatasetTurn:
    """A later user turn of a conversation and the length of the reply recorded after it."""

    prompt: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class DatasetEntry:
    """One usable prompt; ``output_tokens`` is ``None`` when the record gives no length.

    ``followups``: the conversation's later turns (only when loaded with ``turns=True``).
    """

    prompt: str
    input_tokens: int
    output_tokens: int | None
    followups: tuple[DatasetTurn, ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset:
    """The usable entries of one file.

    ``skipped`` counts conversations without a user turn; ``first_missing_output`` is where
    the first entry without an output length is (``"line N"`` / ``"record N"``), or None.
    """

    path: Path
    format: str
    entries: tuple[DatasetEntry, ...]
    skipped: int = 0
    first_missing_output: str | None = None

    def __len__(self) -> int:
        return len(self.entries)


class DatasetCursor:
    """Endless, deterministic walk over a dataset: every entry once per cycle, then again."""

    __slots__ = ("_entries", "_n", "_pos", "_stride")

    def __init__(self, dataset: Dataset, rng: random.Random) -> None:
        self._entries = dataset.entries
        self._n = n = len(dataset.entries)
        self._pos = rng.randrange(n)
        stride = rng.randrange(1, n) if n > 2 else 1
        while math.gcd(stride, n) != 1:
            stride += 1
        self._stride = stride

    def next(self) -> DatasetEntry:
        entry = self._entries[self._pos]
        self._pos = (self._pos + self._stride) % self._n
        return entry


def load_dataset(path: str | Path, fmt: str = "auto", turns: bool = False) -> Dataset:
    """Load (once per process, cached by resolved path, format and ``turns``) a dataset file.

    ``turns`` keeps every conversation's later turns (:attr:`DatasetEntry.followups`).

    Raises :class:`~llmload.errors.ProfileError` naming the file (and line or record) for a
    missing file, unreadable JSON, a record of the wrong shape, or a dataset with no
    usable entry.
    """
    if fmt not in FORMATS:
        raise ProfileError(f"dataset '{path}': unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return _load(Path(path).resolve(), fmt, turns)


@functools.cache
def _load(path: Path, fmt: str, turns: bool) -> Dataset:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProfileError(
            f"dataset '{path}': no such file; fix the path (relative paths start at the profile's folder)"
        ) from None
    except OSError as e:
        raise ProfileError(f"dataset '{path}': cannot read it ({e.strerror or e})") from None
    entries: list[DatasetEntry] = []
    skipped = 0
    first_missing: str | None = None
    for where, record in _records(path, raw):
        entry = _entry(record, fmt, f"dataset '{path}': {where}", turns)
        if entry is None:
            skipped += 1
            continue
        entries.append(entry)
        if entry.output_tokens is None and first_missing is None:
            first_missing = where
    if not entries:
        what = f"none of its {skipped} conversations has a user turn" if skipped else "it has no records"
        raise ProfileError(f"dataset '{path}': {what}; give at least one prompt")
    return Dataset(path, fmt, tuple(entries), skipped, first_missing)


def _records(path: Path, raw: bytes) -> list[tuple[str, Any]]:
    if path.suffix.lower() == ".json":
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ProfileError(
                f"dataset '{path}': not valid JSON ({e}); a .json dataset is one list of records"
            ) from None
        if not isinstance(data, list):
            raise ProfileError(
                f"dataset '{path}': a .json dataset must be a list of records, got {type(data).__name__}; use .jsonl for one record per line"
            )
        return [(f"record {i + 1}", r) for i, r in enumerate(data)]
    out = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"line {n}", orjson.loads(line)))
        except orjson.JSONDecodeError as e:
            raise ProfileError(
                f"dataset '{path}': line {n}: not valid JSON ({e}); write one JSON record per line"
            ) from None
    return out


def _entry(record: Any, fmt: str, where: str, turns: bool) -> DatasetEntry | None:
    if isinstance(record, dict) and ("conversations" in record or "messages" in record):
        if fmt == "prompts":
            raise ProfileError(
                f'{where}: a conversation record in a \'prompts\' dataset; set format = "sharegpt" or "auto"'
            )
        return _conversation(record, where, turns)
    if fmt == "sharegpt":
        raise ProfileError(
            f'{where}: expected {{"conversations": [...]}} or {{"messages": [...]}}; set format = "prompts" or "auto" for plain prompts'
        )
    return _prompt(record, where)


def _prompt(record: Any, where: str) -> DatasetEntry:
    text: object  # checked below: a non-empty string
    if isinstance(record, str):
        text, out = record, None
    elif isinstance(record, dict):
        text = record.get("prompt", record.get("text"))
        out = record.get("output_tokens", record.get("max_tokens"))
        if out is not None and (not isinstance(out, int) or isinstance(out, bool) or out < 1):
            raise ProfileError(f"{where}: output_tokens must be an int ≥ 1, got {out!r}")
    else:
        text, out = None, None
    if not isinstance(text, str) or not text.strip():
        raise ProfileError(
            f'{where}: expected {{"prompt": "..."}}, {{"text": "..."}} or a JSON string, with non-empty text; got {_short(record)}'
        )
    return DatasetEntry(text, estimate_tokens(text), out)


def _conversation(record: dict[str, Json], where: str, keep_turns: bool) -> DatasetEntry | None:
    prompt: str | None = None
    first_out: int | None = None
    followups: list[DatasetTurn] = []
    asked: str | None = None  # a later user turn waiting for its reply
    for role, text in _messages(record, where):
        if prompt is None:
            if role in _USER and text.strip():
                prompt = text
        elif first_out is None:
            if role in _ASSISTANT:
                first_out = estimate_tokens(text)
                if not keep_turns:
                    break
        elif asked is None:
            if role in _USER and text.strip():
                asked = text
        elif role in _ASSISTANT:
            followups.append(DatasetTurn(asked, estimate_tokens(asked), estimate_tokens(text)))
            asked = None
    if prompt is None:
        return None
    return DatasetEntry(prompt, estimate_tokens(prompt), first_out, tuple(followups))


def _messages(record: dict[str, Json], where: str) -> Iterator[tuple[str, str]]:
    """A conversation record's turns as (role in lower case, text), each checked as it is reached."""
    key = "conversations" if "conversations" in record else "messages"
    turns = record[key]
    if not isinstance(turns, list):
        raise ProfileError(f"{where}: {key!r} must be a list of turns, got {type(turns).__name__}")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise ProfileError(f"{where}: {key}[{i}] must be an object with a role and a text, got {_short(turn)}")
        role = turn.get("from", turn.get("role"))
        text = turn.get("value", turn.get("content"))
        if not isinstance(role, str) or not isinstance(text, str):
            raise ProfileError(
                f'{where}: {key}[{i}] needs string "from"/"value" (or "role"/"content"), got {_short(turn)}'
            )
        yield role.lower(), text


def _short(value: Any, limit: int = 60) -> str:
    s = repr(value)
    return s if len(s) <= limit else s[: limit - 3] + "..."
