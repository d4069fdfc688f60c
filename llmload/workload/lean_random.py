"""A per-user random generator with 8 bytes of state: :class:`LeanRandom`, ``random.Random``'s interface.

Every Locust user owns one generator (:func:`llmload.workload.sampler.user_rng`), so that the
same seed gives every user the same request stream in any process. ``random.Random`` is a
Mersenne Twister: 2.5 KB of state per instance (624 words, inside the C object, so a subclass
carries it too), plus its ``__dict__``: ~2.8 KB of the ~27 KB that an idle session held
(``benchmarks/sessions_scale.py``), at 10 000 sessions 28 MB of generator state.

:class:`LeanRandom` holds one 64-bit integer and draws with **SplitMix64** (Steele, Lea and
Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the generator behind
Java's ``SplittableRandom`` and the seeder of the xoshiro family; passes BigCrush): period
2^64 per user, which no user of a load test comes near. ``random()`` and ``getrandbits()``
are its own; every other method (``randrange``, ``choices``, ``gauss``, ``lognormvariate``,
``shuffle``, ...) is ``random.Random``'s own Python code, which draws only through those two
(``_randbelow`` is ``random.Random``'s ``getrandbits`` variant), so the distributions are
computed exactly as before. A draw costs ~0.4 µs more than the C generator's (a handful per
request). The streams differ from ``random.Random``'s for the same seed; they are as
reproducible: same seed, same sequence, on every platform (pure integer arithmetic).
"""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING

__all__ = ["LeanRandom"]

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_TO_UNIT = 2.0**-53

if TYPE_CHECKING:  # for the type checker it is a random.Random: it offers that whole interface
    _Base = random.Random
else:
    _Base = object


class LeanRandom(_Base):
    """``random.Random``'s interface over SplitMix64 (module docstring); seed with an ``int`` (or ``None``)."""

    __slots__ = ("_state", "gauss_next")

    def __init__(self, seed: int | None = None) -> None:
        self._state = 0
        self.gauss_next: float | None = None
        self.seed(seed)

    def seed(self, a: int | None = None, version: int = 2) -> None:  # type: ignore[override]
        """Restart the stream from ``a`` (all its bits fold into the 64-bit state; ``None``: from the OS)."""
        if a is None:
            a = int.from_bytes(os.urandom(8), "big")
        if not isinstance(a, int):
            raise TypeError(f"LeanRandom takes an int seed, got {type(a).__name__}")
        a = abs(a)
        state = 0
        while a:
            state ^= a & _MASK
            a >>= 64
        self._state = state
        self.gauss_next = None

    def _next(self) -> int:
        s = self._state = (self._state + _GAMMA) & _MASK
        z = ((s ^ (s >> 30)) * _M1) & _MASK
        z = ((z ^ (z >> 27)) * _M2) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """A float in [0, 1): the top 53 bits of one draw."""
        s = self._state = (self._state + _GAMMA) & _MASK
        z = ((s ^ (s >> 30)) * _M1) & _MASK
        z = ((z ^ (z >> 27)) * _M2) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT

    def getrandbits(self, k: int) -> int:
        """A non-negative int of ``k`` random bits (the top bits of each 64-bit draw)."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if k <= 64:
            return self._next() >> (64 - k) if k else 0
        out, have = 0, 0
        while have < k:
            out = (out << 64) | self._next()
            have += 64
        return out >> (have - k)

    def getstate(self) -> tuple[int, float | None]:  # type: ignore[override]
        return self._state, self.gauss_next

    def setstate(self, state: tuple[int, float | None]) -> None:  # type: ignore[override]
        self._state, self.gauss_next = state


# random.Random's own Python methods: they draw through random(), getrandbits() and _randbelow only.
_BORROWED = (
    "randrange", "randint", "choice", "shuffle", "sample", "choices", "uniform", "triangular", "normalvariate",
    "gauss", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate",
    "weibullvariate", "binomialvariate", "randbytes",
)  # fmt: skip
for _name in _BORROWED:
    if _name in random.Random.__dict__:  # binomialvariate: Python 3.12+
        setattr(LeanRandom, _name, random.Random.__dict__[_name])
LeanRandom._randbelow = random.Random._randbelow_with_getrandbits  # type: ignore[attr-defined]
