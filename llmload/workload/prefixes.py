"""Shared prefixes: N fixed openings ("system prompts") of T tokens, drawn by popularity.

A class option of a profile::

    prefix = {groups = 8, tokens = 1000, popularity = "zipf:1.1"}
    prefix = {tokens = 1000}                       # one group (every request shares it)

``groups`` (default 1) distinct openings of ``tokens`` words each (N words ≈ N tokens, see
:mod:`llmload.workload.prompts`). Each request (each *conversation*, for a class with
``turns``) draws its group from the user's RNG:

* ``popularity = "uniform"`` (the default): every group with probability 1/N;
* ``popularity = "zipf:S"`` (S > 0): group k = 1..N with probability ∝ 1/k^S, group 1 the
  most popular. With S = 1.1 and 8 groups the first takes 40 % of the requests, the last
  4 %: a few hot system prompts and a tail, as agents and RAG front-ends see.

The prompt is the group's ``tokens`` words, then the request's own ``input_tokens`` words,
which start with a random tag (so the rest is unique): ``input_tokens`` counts only the
part after the prefix, and a request's prompt is ``tokens + input_tokens`` long. A group's
text depends only on the run's seed, the class name and the group number, so it is the
same in every user and every worker process; it is built the first time it is drawn
(about 6 bytes per token, kept for the rest of the process: ``groups x tokens`` is capped
at :data:`MAX_PREFIX_TOKENS`).

With one group no random draw is made, so a class's request stream is the same as
without groups.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.prompts import SharedPrefix

__all__ = ["MAX_PREFIX_TOKENS", "PrefixGroups", "PrefixSpec", "parse_prefix"]

#: Most tokens all groups of one class may hold together (about 120 MB of text per process).
MAX_PREFIX_TOKENS = 20_000_000
_KEYS = ("groups", "tokens", "popularity")
_FORMS = '{groups = N, tokens = T, popularity = "uniform" | "zipf:S"}'


@dataclass(frozen=True, slots=True)
class PrefixSpec:
    """A class's ``prefix`` option: ``groups`` openings of ``tokens`` tokens; ``zipf_s`` None = uniform."""

    groups: int
    tokens: int
    zipf_s: float | None = None

    @property
    def popularity(self) -> str:
        return "uniform" if self.zipf_s is None else f"zipf:{self.zipf_s:g}"

    def to_dict(self) -> dict[str, Json]:
        return {"groups": self.groups, "tokens": self.tokens, "popularity": self.popularity}

    def describe(self) -> str:
        groups = "" if self.groups == 1 else f" x {self.groups} groups ({self.popularity})"
        return f"shared prefix {self.tokens}{groups}"


def parse_prefix(value: Any, where: str) -> PrefixSpec:
    """A :class:`PrefixSpec` from a profile value; ``where`` names the file and field.

    Raises :class:`~llmload.errors.ProfileError` with what is wrong and how to fix it.
    """
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected a table {_FORMS}, got {value!r}")
    for key in value:
        if key not in _KEYS:
            raise ProfileError(f"{where}.{key}: unknown key; allowed keys: {', '.join(_KEYS)}")
    if "tokens" not in value:
        raise ProfileError(f"{where}: missing 'tokens', the length of each shared prefix; write {_FORMS}")
    tokens, groups = value["tokens"], value.get("groups", 1)
    for key, v in (("tokens", tokens), ("groups", groups)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ProfileError(f"{where}.{key}: must be an int ≥ 1, got {v!r}")
    if groups * tokens > MAX_PREFIX_TOKENS:
        raise ProfileError(
            f"{where}: {groups} groups x {tokens} tokens = {groups * tokens:,} tokens of prefix text, more than "
            f"{MAX_PREFIX_TOKENS:,} (each process keeps them all); use fewer groups or shorter prefixes"
        )
    return PrefixSpec(groups, tokens, _popularity(value.get("popularity", "uniform"), f"{where}.popularity"))


def _popularity(value: Any, where: str) -> float | None:
    if value == "uniform":
        return None
    if isinstance(value, str) and value.startswith("zipf:"):
        try:
            s = float(value[5:])
        except ValueError:
            s = math.nan
        if math.isfinite(s) and s > 0:
            return s
    raise ProfileError(f'{where}: expected "uniform" or "zipf:S" with S > 0 (e.g. "zipf:1.1"), got {value!r}')


@functools.cache
def _zipf_cumulative(n: int, s: float) -> tuple[float, ...]:
    """Cumulative weights 1/k^s, k = 1..n (shared by every sampler of the process)."""
    return tuple(itertools.accumulate(k**-s for k in range(1, n + 1)))


@functools.cache
def _group(seed: int, key: str, group: int, tokens: int) -> SharedPrefix:
    """Group ``group`` of class ``key``; group 0's key is the class name alone."""
    return SharedPrefix.build(seed, key if group == 0 else f"{key}#{group}", tokens)


class PrefixGroups:
    """The prefix groups of one class for one run (seed): :meth:`draw` one, :meth:`get` its text."""

    __slots__ = ("_cum", "_key", "_seed", "spec")

    def __init__(self, spec: PrefixSpec, seed: int, key: str) -> None:
        self.spec = spec
        self._seed = seed
        self._key = key
        self._cum = _zipf_cumulative(spec.groups, spec.zipf_s) if spec.zipf_s is not None else None

    def draw(self, rng: random.Random) -> int:
        """A group number 0..N-1 by popularity; one ``rng.random()`` when N > 1, none when N = 1."""
        n = self.spec.groups
        if n == 1:
            return 0
        cum = self._cum
        if cum is None:
            return min(int(rng.random() * n), n - 1)
        return min(bisect_right(cum, rng.random() * cum[-1]), n - 1)

    def get(self, group: int) -> SharedPrefix:
        """The text of ``group`` (built on first use, then cached for the process)."""
        return _group(self._seed, self._key, group, self.spec.tokens)
