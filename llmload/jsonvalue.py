"""The type of a JSON value, for the documents llmload writes and reads back.

:data:`Json` is what ``json.dumps`` writes and ``json.loads`` (or a TOML reader) gives back:
the summary and its blocks, ``report.json``, request and response bodies, the worker → master
wire. Its containers are read-only (``Sequence``, ``Mapping``), so that a ``dict[str, float]``
or a ``list[str]`` is one; a writer builds a ``dict[str, Json]``, a reader takes a
``Mapping[str, Json]`` and narrows each value it uses (``isinstance``) before reading it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["Json"]

#: A JSON value (read-only containers).
Json: TypeAlias = None | bool | int | float | str | Sequence["Json"] | Mapping[str, "Json"]
