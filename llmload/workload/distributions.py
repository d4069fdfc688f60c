"""Token-count distributions: how many input or output tokens one request asks for.

A profile value is either a fixed int or a table naming a distribution::

    output_tokens = 200                                              # fixed
    output_tokens = {dist = "uniform", min = 100, max = 300}         # inclusive bounds
    output_tokens = {dist = "normal", mean = 200, stddev = 50, min = 50, max = 400}
    output_tokens = {dist = "lognormal", mean = 200, stddev = 150, max = 2000}
    output_tokens = {dist = "choice", values = [128, 512, 2048], weights = [2, 1, 1]}

``mean`` and ``stddev`` of ``lognormal`` are those of the resulting token counts (as in
AIPerf), not of their logarithm. Every sample is an int, rounded to nearest, then clamped
to ``[min, max]``; ``min`` defaults to 1 and can never be below 1, and no count exceeds
:data:`MAX_TOKENS` (10 M: a larger one in a profile is refused as a typo). Each draw uses the
caller's :class:`random.Random`, never the global one. ``mean`` is the nominal mean, before
rounding and clamping, meant for planning.

**Durations** (:class:`Duration`, :func:`parse_duration`; a conversation's ``think_time_s``)
are seconds ≥ 0, floats, never rounded::

    think_time_s = 5                                                 # fixed (0 allowed)
    think_time_s = {dist = "uniform", min = 2, max = 10}
    think_time_s = {dist = "exponential", mean = 5, max = 60}        # memoryless pauses
    think_time_s = {dist = "normal", mean = 5, stddev = 2, min = 1}
    think_time_s = {dist = "lognormal", mean = 5, stddev = 4, max = 60}

clamped to ``[min, max]`` (``min`` defaults to 0).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, runtime_checkable

from llmload.errors import ProfileError
from llmload.jsonvalue import Json

__all__ = [
    "MAX_TOKENS",
    "Choice",
    "Distribution",
    "Duration",
    "Fixed",
    "LogNormal",
    "Normal",
    "Uniform",
    "parse_distribution",
    "parse_duration",
]


@runtime_checkable
class Distribution(Protocol):
    """A source of token counts (ints ≥ 1)."""

    @property
    def mean(self) -> float: ...

    def sample(self, rng: random.Random) -> int: ...

    def to_dict(self) -> int | dict[str, Json]: ...


#: Most tokens one count may be: above any served model's context window. A larger count is a
#: typo, and a synthetic prompt that long would exhaust the load generator's memory (1e9 tokens:
#: gigabytes within seconds, the event loop blocked so that the run never ends).
MAX_TOKENS = 10_000_000


def _clamp(x: float, lo: int, hi: int | None) -> int:
    n = max(lo, int(round(min(x, MAX_TOKENS))))
    return min(n, MAX_TOKENS if hi is None else hi)


def _too_many(v: int | float, where: str) -> ProfileError:
    return ProfileError(
        f"{where}: {v:g} is more than any model's context ({MAX_TOKENS:,} tokens at most); check for a typo"
    )


@dataclass(frozen=True, slots=True)
class Fixed:
    """Always ``value`` tokens."""

    value: int

    @property
    def mean(self) -> float:
        return float(self.value)

    def sample(self, rng: random.Random) -> int:
        return self.value

    def to_dict(self) -> int:
        return self.value


@dataclass(frozen=True, slots=True)
class Uniform:
    """An int drawn uniformly from ``[min, max]``, both inclusive."""

    min: int
    max: int

    @property
    def mean(self) -> float:
        return (self.min + self.max) / 2

    def sample(self, rng: random.Random) -> int:
        return rng.randint(self.min, self.max)

    def to_dict(self) -> dict[str, Json]:
        return {"dist": "uniform", "min": self.min, "max": self.max}


@dataclass(frozen=True, slots=True)
class Normal:
    """Gaussian with ``mean`` and ``stddev``, rounded, clamped to ``[min, max]``."""

    mean: float
    stddev: float
    min: int = 1
    max: int | None = None

    def sample(self, rng: random.Random) -> int:
        return _clamp(rng.gauss(self.mean, self.stddev), self.min, self.max)

    def to_dict(self) -> dict[str, Json]:
        return _drop_none(
            {"dist": "normal", "mean": self.mean, "stddev": self.stddev, "min": self.min, "max": self.max}
        )


@dataclass(frozen=True, slots=True)
class LogNormal:
    """Log-normal whose resulting values have ``mean`` and ``stddev``; clamped to ``[min, max]``.

    With ``s² = ln(1 + stddev²/mean²)`` and ``mu = ln(mean) − s²/2``, ``exp(N(mu, s))`` has
    the requested mean and standard deviation: a right-skewed length, like real prompts.
    """

    mean: float
    stddev: float
    min: int = 1
    max: int | None = None

    def sample(self, rng: random.Random) -> int:
        s2 = math.log1p((self.stddev / self.mean) ** 2)
        return _clamp(rng.lognormvariate(math.log(self.mean) - s2 / 2, math.sqrt(s2)), self.min, self.max)

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"dist": "lognormal", "mean": self.mean, "stddev": self.stddev, "min": self.min,
                              "max": self.max}  # fmt: skip
        return _drop_none(d)


@dataclass(frozen=True, slots=True)
class Choice:
    """One of ``values``, with optional relative ``weights`` (equal when omitted)."""

    values: tuple[int, ...]
    weights: tuple[float, ...] | None = None
    _cum: tuple[float, ...] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.weights is not None:
            object.__setattr__(self, "_cum", tuple(itertools.accumulate(self.weights)))

    @property
    def mean(self) -> float:
        w = self.weights or (1.0,) * len(self.values)
        return sum(v * x for v, x in zip(self.values, w, strict=True)) / sum(w)

    def sample(self, rng: random.Random) -> int:
        if self._cum is None:
            return self.values[rng.randrange(len(self.values))]
        return rng.choices(self.values, cum_weights=self._cum)[0]

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"dist": "choice", "values": list(self.values)}
        if self.weights is not None:
            d["weights"] = list(self.weights)
        return d


def _drop_none(d: dict[str, Json]) -> dict[str, Json]:
    return {k: v for k, v in d.items() if v is not None}


_KEYS = {
    "uniform": ({"min", "max"}, set()),
    "normal": ({"mean", "stddev"}, {"min", "max"}),
    "lognormal": ({"mean", "stddev"}, {"min", "max"}),
    "choice": ({"values"}, {"weights"}),
}
_FORMS = 'an int, or a table {dist = "uniform"|"normal"|"lognormal"|"choice", ...}'


def _check_keys(value: dict[str, Json], kind: str, keys: tuple[set[str], set[str]], where: str) -> None:
    """ProfileError naming the first unknown or missing key of a ``{dist = kind, ...}`` table."""
    required, optional = keys
    unknown = sorted(set(value) - required - optional - {"dist"})
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise ProfileError(f"{where}: unknown key {unknown[0]!r} for dist = {kind!r}; allowed keys: dist, {allowed}")
    missing = sorted(required - set(value))
    if missing:
        raise ProfileError(f"{where}: dist = {kind!r} needs {missing[0]!r}; add {missing[0]} = ...")


def parse_distribution(value: Any, where: str) -> Distribution:
    """Build a distribution from a profile value; ``where`` prefixes every error message.

    ``where`` names the file and field, e.g. ``"profile 'x.toml': classes[2].output_tokens"``.
    Raises :class:`~llmload.errors.ProfileError` with what is wrong and how to fix it.
    """
    if _is_int(value):
        if value < 1:
            raise ProfileError(f"{where}: must be ≥ 1, got {value}; a request needs at least one token")
        if value > MAX_TOKENS:
            raise _too_many(value, where)
        return Fixed(value)
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected {_FORMS}, got {type(value).__name__} {value!r}")
    kind = value.get("dist")
    if kind not in _KEYS:
        raise ProfileError(f"{where}.dist: expected one of {', '.join(_KEYS)}, got {kind!r}")
    _check_keys(value, kind, _KEYS[kind], where)
    if kind == "uniform":
        lo, hi = _int(value, "min", where), _int(value, "max", where)
        if hi < lo:
            raise ProfileError(f"{where}: max ({hi}) must be ≥ min ({lo})")
        return Uniform(lo, hi)
    if kind == "choice":
        return _choice(value, where)
    mean, sd = _positive(value, "mean", where), _positive(value, "stddev", where)
    if mean > MAX_TOKENS:
        raise _too_many(mean, f"{where}.mean")
    lo = _int(value, "min", where) if "min" in value else 1
    top = _int(value, "max", where) if "max" in value else None
    if top is not None and top < lo:
        raise ProfileError(f"{where}: max ({top}) must be ≥ min ({lo})")
    return (Normal if kind == "normal" else LogNormal)(mean, sd, lo, top)


def _choice(value: dict[str, Json], where: str) -> Choice:
    values = value["values"]
    if not isinstance(values, list) or not values:
        raise ProfileError(f"{where}.values: expected a non-empty list of ints ≥ 1, got {values!r}")
    for i, v in enumerate(values):
        if not _is_int(v) or v < 1:
            raise ProfileError(f"{where}.values[{i}]: expected an int ≥ 1, got {v!r}")
        if v > MAX_TOKENS:
            raise _too_many(v, f"{where}.values[{i}]")
    weights = value.get("weights")
    if weights is None:
        return Choice(tuple(values))
    if not isinstance(weights, list) or len(weights) != len(values):
        raise ProfileError(
            f"{where}.weights: expected a list of {len(values)} numbers (one per value), got {weights!r}"
        )
    for i, w in enumerate(weights):
        if not _is_number(w) or w < 0:
            raise ProfileError(f"{where}.weights[{i}]: expected a number ≥ 0, got {w!r}")
    if sum(weights) <= 0:
        raise ProfileError(f"{where}.weights: at least one weight must be > 0")
    return Choice(tuple(values), tuple(float(w) for w in weights))


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: object) -> TypeGuard[float]:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _int(d: dict[str, Json], key: str, where: str) -> int:
    v = d[key]
    if not _is_int(v) or v < 1:
        raise ProfileError(f"{where}: {key} must be an int ≥ 1, got {v!r}")
    if v > MAX_TOKENS:
        raise _too_many(v, f"{where}.{key}")
    return v


def _positive(d: dict[str, Json], key: str, where: str) -> float:
    v = d[key]
    if not _is_number(v) or v <= 0:
        raise ProfileError(f"{where}: {key} must be > 0, got {v!r}")
    return float(v)


@dataclass(frozen=True, slots=True)
class Duration:
    """Seconds ≥ 0: ``fixed`` (``mean``), or drawn from ``uniform``/``normal``/``lognormal``/``exponential``.

    ``uniform`` draws from ``[min, max]``; the others have ``mean`` (and ``stddev``; for
    ``lognormal`` those of the result, as for token counts) and are clamped to ``[min, max]``.
    """

    kind: str
    mean: float
    stddev: float = 0.0
    min: float = 0.0
    max: float | None = None

    def sample(self, rng: random.Random) -> float:
        kind = self.kind
        if kind == "fixed":
            return self.mean
        if kind == "uniform":
            assert self.max is not None
            return rng.uniform(self.min, self.max)
        if kind == "exponential":
            x = rng.expovariate(1.0 / self.mean)
        elif kind == "normal":
            x = rng.gauss(self.mean, self.stddev)
        else:
            s2 = math.log1p((self.stddev / self.mean) ** 2)
            x = rng.lognormvariate(math.log(self.mean) - s2 / 2, math.sqrt(s2))
        x = max(self.min, x)
        return x if self.max is None else min(x, self.max)

    def to_dict(self) -> float | dict[str, Json]:
        if self.kind == "fixed":
            return self.mean
        if self.kind == "uniform":
            return {"dist": "uniform", "min": self.min, "max": self.max}
        d: dict[str, Json] = {"dist": self.kind, "mean": self.mean}
        if self.kind != "exponential":
            d["stddev"] = self.stddev
        return _drop_none({**d, "min": self.min or None, "max": self.max})


_DURATION_KEYS = {
    "uniform": ({"min", "max"}, set()),
    "exponential": ({"mean"}, {"min", "max"}),
    "normal": ({"mean", "stddev"}, {"min", "max"}),
    "lognormal": ({"mean", "stddev"}, {"min", "max"}),
}
_DURATION_FORMS = 'a number of seconds ≥ 0, or a table {dist = "uniform"|"exponential"|"normal"|"lognormal", ...}'


def parse_duration(value: Any, where: str) -> Duration:
    """A :class:`Duration` (seconds) from a profile value; ``where`` prefixes every error message."""
    if _is_number(value):
        if value < 0:
            raise ProfileError(f"{where}: must be ≥ 0 seconds, got {value}")
        return Duration("fixed", float(value))
    if not isinstance(value, dict):
        raise ProfileError(f"{where}: expected {_DURATION_FORMS}, got {type(value).__name__} {value!r}")
    kind = value.get("dist")
    if kind not in _DURATION_KEYS:
        raise ProfileError(f"{where}.dist: expected one of {', '.join(_DURATION_KEYS)}, got {kind!r}")
    _check_keys(value, kind, _DURATION_KEYS[kind], where)
    lo = _seconds(value, "min", where) if "min" in value else 0.0
    hi = _seconds(value, "max", where) if "max" in value else None
    if hi is not None and hi < lo:
        raise ProfileError(f"{where}: max ({hi:g}) must be ≥ min ({lo:g})")
    if kind == "uniform":
        return Duration("uniform", (lo + hi) / 2, 0.0, lo, hi)  # type: ignore[operator]
    mean = _positive(value, "mean", where)
    sd = _positive(value, "stddev", where) if "stddev" in _DURATION_KEYS[kind][0] else 0.0
    return Duration(kind, mean, sd, lo, hi)


def _seconds(d: dict[str, Json], key: str, where: str) -> float:
    v = d[key]
    if not _is_number(v) or v < 0:
        raise ProfileError(f"{where}: {key} must be a number of seconds ≥ 0, got {v!r}")
    return float(v)
