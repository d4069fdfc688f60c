"""What predict sends: each class's requests and conversations, as ``llmload run`` builds them, in tokens.

A :class:`ClassSpec` is one profile class in token counts: its lengths (distributions, or a
dataset's recorded ones), its shared prefix, and for a conversation class its turns and think
time. :class:`Requests` is the driver's source: the classes in their exact ratio
(:class:`Mix`), each request or conversation a :class:`Session` whose :meth:`Session.next_turn`
gives the next :class:`Turn` (its class, prompt tokens, ``max_tokens``, the tokens the prefix
cache hashes, its turn number). It follows :mod:`llmload.workload.conversation` (the turn
count, then per turn the user message's length and ``max_tokens``, then the think time unless
it is the last turn; a prefix group per conversation, or per request of a single-request
class), with the text replaced by its length (so its random stream is not a live user's: the
same distributions, other draws):

* a synthetic class draws ``input_tokens`` and ``output_tokens`` for every turn; with a
  ``prefix`` the prompt is the group's tokens, then its own (``input_tokens`` counts the part
  after the prefix, as in a real run);
* a dataset class replays its records (:class:`~llmload.workload.datasets.DatasetCursor`, every
  record once per cycle): the record's estimated prompt tokens (``ceil(characters / 4)``, what
  ``llmload run`` labels it with), ``max_tokens`` the recorded reply's length when
  ``output_tokens = "dataset"``, and for a conversation class each recorded later turn in order
  (``turns = N`` caps the replay at N turns);
* turn k of a conversation re-sends the history: its prompt is turn k-1's prompt, the reply
  the engine gave it (the tokens it produced), then the new user message, so its leading blocks
  are turn k-1's and a prefix-caching engine serves them from its cache, as the live server does.

The tokens are :class:`PromptTokens`: numbers computed from their position (none stored), the
prefix group's the same for every request that draws it, the rest the session's own, so equal
leading blocks mean equal prompts exactly where a live run's text would repeat. A prompt with
nothing another request could share (a single synthetic request without a prefix) gets none.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from llmload.capacity.image_cost import ImageCost
from llmload.workload.datasets import Dataset, DatasetCursor, DatasetEntry
from llmload.workload.distributions import Duration
from llmload.workload.prefixes import PrefixGroups, PrefixSpec

__all__ = ["ClassSpec", "Mix", "PromptTokens", "Requests", "Session", "Turn", "longest"]


@dataclass(frozen=True, slots=True)
class ClassSpec:
    """One class in token counts. ``input`` None: a dataset's prompts; ``output`` None: the dataset's replies.
    ``turns`` None: single requests; a distribution, or ``"dataset"`` (each record's own turns): a conversation."""

    name: str
    weight: float
    input: Any  # a Distribution (sample(rng) -> int), or None
    output: Any
    prefix: PrefixSpec | None = None
    dataset: Dataset | None = None
    turns: Any = None  # Distribution | "dataset" | None
    think: Duration | None = None
    cap: int | None = None  # --max-tokens-cap
    images: ImageCost | None = None  # the images of each user message (llmload.capacity.image_cost)
    agent: Any = None  # an agent class's AgentSpec (llmload.capacity.agent_session)

    @property
    def conversation(self) -> bool:
        return self.turns is not None


@dataclass(frozen=True, slots=True)
class Turn:
    """One request: ``turn`` is its place in its conversation (1, 2, ...), 0 for a single-request class."""

    cls: str
    prompt: int
    max_tokens: int
    tokens: Sequence[Any] = ()
    turn: int = 0


class LazyTokens(Sequence[int]):
    """A prompt's tokens computed on demand from their position (``_at``), ``n`` of them: a read-only sequence of
    ints that stores none (a subclass may read a slice faster: ``_slice``)."""

    __slots__ = ()
    n: int

    def _at(self, k: int) -> int:
        raise NotImplementedError

    def _slice(self, a: int, b: int) -> tuple[int, ...]:
        return tuple(self._at(k) for k in range(a, b))

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[int, ...]: ...
    def __getitem__(self, key: int | slice) -> int | tuple[int, ...]:  # int -> int, slice -> tuple of ints
        if isinstance(key, slice):
            a, b, step = key.indices(self.n)
            return self._slice(a, b) if step == 1 else tuple(self._at(k) for k in range(a, b, step))
        if not -self.n <= key < self.n:
            raise IndexError(key)
        return self._at(key % self.n)

    def __iter__(self) -> Iterator[int]:
        return (self._at(k) for k in range(self.n))


class PromptTokens(LazyTokens):
    """A prompt's tokens: the first ``head_len`` are prefix group ``head``'s, the rest the owner's (``own``: a
    session or a request); token ``k`` is ``key << 32 | k``, so positions line up across the turns of one
    conversation and across the requests of one prefix group."""

    __slots__ = ("head", "head_len", "n", "own")

    def __init__(self, head: int, head_len: int, own: int, n: int) -> None:
        self.head, self.head_len, self.own, self.n = head, head_len, own, n

    def _at(self, k: int) -> int:
        return (self.head if k < self.head_len else self.own) << 32 | k

    def _slice(self, a: int, b: int) -> tuple[int, ...]:
        h = min(max(self.head_len, a), max(b, a))  # a block's tokens: ranges, not one call per token
        return (*range(self.head << 32 | a, self.head << 32 | h), *range(self.own << 32 | h, self.own << 32 | max(b, h)))


class Mix:
    """Smooth weighted round robin: the classes in their exact ratio, interleaved."""

    def __init__(self, classes: Sequence[ClassSpec]) -> None:
        self.classes, self.current = list(classes), [0.0] * len(classes)
        self.total = sum(c.weight for c in classes)

    def next(self) -> int:
        for i, c in enumerate(self.classes):
            self.current[i] += c.weight
        best = max(range(len(self.classes)), key=self.current.__getitem__)
        self.current[best] -= self.total
        return best


class Requests:
    """The driver's request source: the next class's :class:`Session` (one turn for a single-request class)."""

    def __init__(self, classes: Sequence[ClassSpec], rng: random.Random, seed: int = 0) -> None:
        self.classes, self.rng, self.mix = tuple(classes), rng, Mix(classes)
        self.cursors = [DatasetCursor(c.dataset, rng) if c.dataset is not None else None for c in classes]
        self.prefixes = [PrefixGroups(c.prefix, seed, c.name) if c.prefix is not None else None for c in classes]
        self._ids = itertools.count(1)
        self._heads: dict[tuple[int, int], int] = {}

    def session(self) -> Session:
        return Session(self, self.mix.next())

    def head(self, cls: int, group: int) -> int:
        """The key of class ``cls``'s prefix group ``group`` (the same for every request that draws it)."""
        key = self._heads.get((cls, group))
        if key is None:
            key = self._heads[(cls, group)] = next(self._ids)
        return key

    def own(self) -> int:
        return next(self._ids)


class Session:
    """One conversation (or one request of a single-request class): :meth:`next_turn` until :attr:`done`."""

    __slots__ = ("context", "entry", "first", "head", "head_len", "own", "reply", "source", "spec", "think_s",
                 "turn", "turns")  # fmt: skip

    def __init__(self, source: Requests, cls: int, spec: ClassSpec | None = None) -> None:
        spec = self.spec = spec or source.classes[cls]  # (a sub-agent: its own spec, the class's prefix and records)
        self.source, rng = source, source.rng
        drawn = spec.turns.sample(rng) if spec.turns is not None and not isinstance(spec.turns, str) else None
        self.head, self.head_len = 0, 0
        groups = source.prefixes[cls]
        if groups is not None:
            self.head, self.head_len = source.head(cls, groups.draw(rng)), groups.spec.tokens
        cursor = source.cursors[cls]
        self.entry: DatasetEntry | None = cursor.next() if cursor is not None else None
        n = self.entry.input_tokens if self.entry is not None else spec.input.sample(rng)
        out = self.entry.output_tokens if self.entry is not None else None
        if spec.output is not None:
            out = spec.output.sample(rng)
        self.first = (self.head_len + n + (spec.images.draw(rng) if spec.images is not None else 0), _capped(spec, out or 1))
        if spec.turns is None:
            self.turns = 1
        elif self.entry is not None:
            most = 1 + len(self.entry.followups)
            self.turns = most if drawn is None else min(drawn, most)
        else:
            self.turns = drawn or 1
        self.turn, self.think_s, self.context, self.reply = 0, 0.0, 0, 0
        self.own = source.own() if spec.conversation or self.head_len else 0

    @property
    def done(self) -> bool:
        return self.turn >= self.turns

    def next_turn(self) -> Turn:
        """The next turn; from the second on its prompt holds the history (``reply``: the tokens the last got)."""
        spec, rng = self.spec, self.source.rng
        k = self.turn + 1
        if k == 1:
            self.context, out = self.first
        else:
            if self.entry is not None:
                t = self.entry.followups[k - 2]
                n = t.input_tokens
                out = spec.output.sample(rng) if spec.output is not None else t.output_tokens
            else:
                n, out = spec.input.sample(rng), spec.output.sample(rng)
            if spec.images is not None and spec.images.every_turn:
                n += spec.images.draw(rng)
            self.context += self.reply + n
            out = _capped(spec, out)
        self.turn = k
        last = k >= self.turns
        self.think_s = 0.0 if last or spec.think is None else spec.think.sample(rng)
        tokens = PromptTokens(self.head, self.head_len, self.own, self.context) if self.own else ()
        return Turn(spec.name, self.context, out, tokens, k if spec.conversation else 0)


def _capped(spec: ClassSpec, n: int) -> int:
    return n if spec.cap is None or n <= spec.cap else spec.cap


def _top(d: Any) -> float:
    return float(getattr(d, "max", None) or getattr(d, "value", None) or d.mean)


def longest(c: ClassSpec, what: str) -> float:
    """About the longest prompt (``what`` = "input": the history of a conversation's last turn included) or
    ``max_tokens`` ("output") the class sends."""
    entries = c.dataset.entries if c.dataset is not None else ()
    if what == "output":
        per = c.agent.output_tokens if c.agent is not None else None
        if per:  # an agent's per-turn lengths
            top = max(_top(o) for o in per)
            return top if c.cap is None else min(top, c.cap)
        if c.output is not None:
            return _top(c.output) if c.cap is None else min(_top(c.output), c.cap)
        return float(max(max([e.output_tokens or 1, *(t.output_tokens for t in e.followups)]) for e in entries))
    prefix = c.prefix.tokens if c.prefix is not None else 0
    img = c.images.most if c.images is not None else 0
    if c.input is not None:
        n_turns = 1 if c.turns is None else _top(c.turns)
        shown = n_turns if c.images is not None and c.images.every_turn else 1
        return prefix + n_turns * _top(c.input) + (n_turns - 1) * longest(c, "output") + shown * img + _results(c, n_turns)
    cap = _top(c.turns) if c.turns is not None and not isinstance(c.turns, str) else None
    most = 0.0
    for e in entries:
        turns = [(e.input_tokens, e.output_tokens or 1), *((t.input_tokens, t.output_tokens) for t in e.followups)]
        turns = turns[: int(cap)] if cap else turns if c.turns is not None else turns[:1]
        replies = [_capped(c, o) if c.output is None else longest(c, "output") for _, o in turns[:-1]]
        most = max(most, sum(n for n, _ in turns) + sum(replies))
    return most + img + _results(c, float(cap or 1))


def _results(c: ClassSpec, turns: float) -> float:
    """About the most tokens an agent's tool results add to its last turn's history (every earlier turn answered
    with tool calls)."""
    a = c.agent
    if a is None:
        return 0.0
    calls = len(a.tools) if a.per_turn > 1 else 1
    return (turns - 1) * calls * _top(a.result_tokens)
