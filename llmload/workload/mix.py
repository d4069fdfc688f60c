"""The mix: which request class a user sends next, as an exact, deterministic interleave.

A profile's weights (3:4:3 for ``default``) are a ratio of **requests sent**. :class:`Mix`
yields class indices so that

* after every full period (the sum of the integer weights) each class has been chosen
  exactly its weight's number of times, and
* for every prefix of the sequence, each class's count differs from its exact share
  ``n * w_i / W`` by less than one request: at most ``σ = 1 - 1/(2k-2)`` for ``k``
  classes (½ for two classes, ¾ for three).

Each user owns one ``Mix`` started at ``offset = user_index``: users started together pick
consecutive positions of the same sequence, so 10 users at 3:4:3 send exactly 3 short,
4 medium and 3 long first requests (and second, and third ...), and each user's own
requests are exact over every full period. A user at an offset sees a window of the cycle,
whose prefixes stay within ``2σ`` (< 2) requests of the share; 1.0 at 3:4:3. No cycle
keeps every window under one request (the best 3:4:3 cycle reaches 0.9).

Why not dice (``random.choices``): a ladder step of 100 requests at 3:4:3 would carry
30 ± 4.6 short requests (one standard deviation), so per-class results and the aggregate
mix wander from step to step and run to run. Why not Locust user-class weights: Locust
assigns *users* to classes (1 user → only ``medium``; 5 users → 1/2/2), and a user stuck
on long requests sends fewer of them, so the ratio of requests sent drifts from the
ratio of users.

The algorithm is earliest-deadline-first over per-class "due" times, the schedule of
Tijdeman's chairman-assignment theorem (1980), which is what gives the bound above. The
familiar nginx smooth weighted round-robin picks the class with the largest running
credit; it is nearly as smooth but not bounded below one request: at 1:1:1:6:6 a class
falls a whole request behind, and with seven classes more than that. Non-integer weights
are turned into the smallest proportional integers (0.3:0.45:0.25 → 6:9:5).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

__all__ = ["Mix", "integer_weights"]


def integer_weights(weights: Sequence[float]) -> tuple[int, ...]:
    """The smallest integers in the same ratio as ``weights`` (decimals up to 6 places exact).

    Raises :class:`ValueError` if the list is empty or a weight is not a finite number > 0.
    """
    if not weights:
        raise ValueError("a mix needs at least one weight")
    fracs = []
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, (int, float, Fraction)) or not math.isfinite(w) or w <= 0:
            raise ValueError(f"mix weights must be finite numbers > 0, got {w!r}")
        fracs.append(Fraction(w).limit_denominator(1_000_000) if isinstance(w, float) else Fraction(w))
    denom = math.lcm(*(f.denominator for f in fracs))
    ints = [int(f * denom) for f in fracs]
    g = math.gcd(*ints)
    return tuple(i // g for i in ints)


class Mix:
    """Deterministic weighted interleave of class indices; ``next()`` returns the next index.

    ``offset`` advances the sequence by that many picks, so user ``k`` starts at position
    ``k``. The sequence has period ``sum(integer_weights(weights))``.
    """

    __slots__ = ("_counts", "_k", "_s", "_slack", "_step", "_w", "_wsum", "weights")

    def __init__(self, weights: Sequence[float], offset: int = 0) -> None:
        self.weights = integer_weights(weights)
        self._w = self.weights
        self._k = len(self._w)
        self._wsum = sum(self._w)
        # Allowed deviation σ = 1 - 1/(2k-2) = slack / s, kept as integers.
        self._s = max(2 * self._k - 2, 1)
        self._slack = max(2 * self._k - 3, 0)
        self._counts = [0] * self._k
        self._step = 0
        if offset < 0:
            raise ValueError(f"offset must be ≥ 0, got {offset}")
        for _ in range(offset % self._wsum):
            self.next()

    @property
    def period(self) -> int:
        """Length of one full cycle: the sum of the integer weights."""
        return self._wsum

    def next(self) -> int:
        """The index of the class to send next."""
        counts, w, s, slack, wsum = self._counts, self._w, self._s, self._slack, self._wsum
        t = self._step + 1
        best = -1
        best_deadline = 0
        for i in range(self._k):
            j = counts[i] + 1  # the j-th pick of class i is the one due next
            # Released once picking it cannot put class i more than σ ahead of its share:
            # j ≤ t·p_i + σ  ⇔  (j·s − slack)·W ≤ t·s·w_i.
            if (j * s - slack) * wsum > t * s * w[i]:
                continue
            # Due before class i falls more than σ behind: last step t with t·p_i − σ ≤ j − 1.
            deadline = ((j - 1) * s + slack) * wsum // (s * w[i])
            if best < 0 or deadline < best_deadline:
                best, best_deadline = i, deadline
        if best < 0:  # impossible by Tijdeman's theorem; fail loudly rather than skew the mix
            raise RuntimeError(f"mix {self.weights}: no class due at step {t}")
        counts[best] += 1
        if t == wsum:  # a full period: every count equals its weight; start over
            self._step = 0
            self._counts = [0] * self._k
        else:
            self._step = t
        return best
