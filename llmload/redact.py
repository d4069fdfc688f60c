"""API keys out of server text: what a server echoes of the key is masked before llmload keeps or shows it.

Some gateways answer a refused key with the key itself (``401 Incorrect API key provided:
sk-...``, a proxy echoing the whole ``Authorization`` header). llmload knows the keys it sends:
each process :func:`remember` s its own (``runtime/options.py``, whenever it builds its
configuration; the ``llmload report``/``compare`` commands the keys of their environment), and
:func:`mask` replaces what a text holds of them by :data:`MASK`.

What is masked: every run of :data:`RUN` or more consecutive characters of a key (the whole
key, the key cut short by a message limit, its first or last part); a key shorter than
:data:`RUN` characters only whole, and one shorter than :data:`MIN_KEY` not at all (no
secret: masking it would garble every message). What is kept: the usual hints of which key
it was, ``sk-...wxyz`` or ``sk-proj-****wxyz`` (at most 7 characters of the key in a row).

Where: at the one point where server text enters llmload's records (the user's error message,
``users/llm_user.py``), so that nothing downstream holds a key; and, as a guard, at the writers:
the summary (:func:`mask_tree` in ``results/summary.py``, whence ``--summary-json`` and the run
directory), the console summary, the ``--records-jsonl`` error field and the report files.
Never per token: only error text and finished documents are scanned, and with no key known
:func:`mask` returns at once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = [
    "KEY_ENV_VARS",
    "MASK",
    "MIN_KEY",
    "RUN",
    "forget",
    "known",
    "mask",
    "mask_tree",
    "remember",
    "remember_environment",
]

#: What replaces the key's characters.
MASK = "[redacted]"
#: Consecutive characters of a key that are masked wherever they appear.
RUN = 8
#: Keys shorter than this are not masked (a test's "x" key is no secret).
MIN_KEY = 4
#: The environment variables that hold keys (``--api-key``'s sources; docs/running.md "API keys").
KEY_ENV_VARS = ("LLMLOAD_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")

_pieces: dict[str, frozenset[str]] = {}  # key -> what is looked for: the key (short) or its RUN-character runs


def remember(*keys: str | None) -> None:
    """Mask these keys from now on in this process (empty and too short ones are ignored)."""
    for key in keys:
        key = (key or "").strip()
        if len(key) < MIN_KEY or key in _pieces:
            continue
        n = len(key)
        _pieces[key] = frozenset({key} if n <= RUN else {key[i : i + RUN] for i in range(n - RUN + 1)})


def remember_environment(environ: Mapping[str, str] = os.environ) -> None:
    """Mask the keys of :data:`KEY_ENV_VARS` (``llmload report``/``compare``: a run saved before masking)."""
    remember(*(environ.get(name) for name in KEY_ENV_VARS))


def forget() -> None:
    """Forget every key (tests)."""
    _pieces.clear()


def known() -> int:
    """How many keys are masked."""
    return len(_pieces)


def mask(text: str) -> str:
    """``text`` with every run of :data:`RUN` or more characters of a known key replaced by :data:`MASK`."""
    if not _pieces or not text:
        return text
    spans: list[tuple[int, int]] = []
    for pieces in _pieces.values():
        for piece in pieces:
            i = text.find(piece)
            while i >= 0:
                spans.append((i, i + len(piece)))
                i = text.find(piece, i + 1)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    pos = 0
    start, end = spans[0]
    for s, e in spans[1:]:
        if s <= end:  # overlapping or touching runs: one stretch of key
            end = max(end, e)
            continue
        out += (text[pos:start], MASK)
        pos, start, end = end, s, e
    out += (text[pos:start], MASK, text[end:])
    return "".join(out)


def mask_tree(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string, dict keys included, :func:`mask` ed."""
    if not _pieces:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {mask(k) if isinstance(k, str) else k: mask_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_tree(v) for v in value]
    return value
