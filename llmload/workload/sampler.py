"""The per-user request stream: mix → class → prompt and lengths → :class:`RequestSample`.

One :class:`WorkloadSampler` per Locust user. It owns a :class:`random.Random` seeded from
``(seed, user_index)`` (never the global RNG) and a :class:`~llmload.workload.mix.Mix`
started at ``offset = user_index``. Same profile, seed and user index ⇒ the identical
sequence of samples; different user indices ⇒ different prompts. Shared prefixes depend
on the seed and class name only, so they are identical for every user and every process
given the same seed. Datasets are loaded once per process (cached) when the first sampler
that needs them is built.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from llmload.errors import ProfileError
from llmload.workload.datasets import DatasetCursor, load_dataset
from llmload.workload.distributions import Distribution
from llmload.workload.mix import Mix
from llmload.workload.profiles import Profile, RequestClass
from llmload.workload.prompts import SharedPrefix, synthetic_prompt, warm
from llmload.workload.types import RequestSample

__all__ = ["WorkloadSampler", "user_rng"]


def user_rng(seed: int, user_index: int) -> random.Random:
    """The RNG of one user: seeded from a hash of ``(seed, user_index)``, stable everywhere."""
    digest = hashlib.sha256(f"llmload-user:{seed}:{user_index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one class needs at request time, resolved once per sampler."""

    name: str
    input_tokens: Distribution | None
    output_tokens: Distribution | None
    prefix: SharedPrefix | None
    cursor: DatasetCursor | None


class WorkloadSampler:
    """Produces one user's requests: ``next()`` returns the next :class:`RequestSample`.

    ``max_tokens_cap`` (when set) caps every sample's ``max_tokens``.
    Raises :class:`~llmload.errors.ProfileError` if a dataset cannot be used.
    """

    __slots__ = ("_cap", "_mix", "_plans", "_rng", "profile", "seed", "user_index")

    def __init__(self, profile: Profile, seed: int, user_index: int, max_tokens_cap: int | None = None) -> None:
        if max_tokens_cap is not None and max_tokens_cap < 1:
            raise ValueError(f"max_tokens_cap must be ≥ 1 or None, got {max_tokens_cap}")
        self.profile = profile
        self.seed = seed
        self.user_index = user_index
        self._cap = max_tokens_cap
        self._rng = user_rng(seed, user_index)
        self._mix = Mix(profile.weights, offset=user_index)
        self._plans = tuple(self._plan(c) for c in profile.classes)
        if any(p.cursor is None for p in self._plans):
            warm()  # once per process, at the first user's start rather than inside its first request

    def _plan(self, c: RequestClass) -> _Plan:
        prefix = SharedPrefix.build(self.seed, c.name, c.shared_prefix_tokens) if c.shared_prefix_tokens else None
        cursor = None
        if c.prompt.kind == "dataset":
            assert c.prompt.path is not None
            dataset = load_dataset(c.prompt.path, c.prompt.format)
            if c.output_tokens is None and (missing := dataset.first_missing_output) is not None:
                raise ProfileError(
                    f"dataset '{dataset.path}': {missing} has no output length, but class {c.name!r} has "
                    'output_tokens = "dataset"; add "output_tokens" to every record, or set output_tokens in the profile'
                )
            cursor = DatasetCursor(dataset, self._rng)
        return _Plan(c.name, c.input_tokens, c.output_tokens, prefix, cursor)

    def next(self) -> RequestSample:
        """The next request of this user's stream."""
        plan = self._plans[self._mix.next()]
        rng = self._rng
        if plan.cursor is None:
            assert plan.input_tokens is not None
            n = plan.input_tokens.sample(rng)
            prompt = synthetic_prompt(rng, n, plan.prefix)
            dataset_out = None
        else:
            entry = plan.cursor.next()
            prompt, n, dataset_out = entry.prompt, entry.input_tokens, entry.output_tokens
        out = plan.output_tokens.sample(rng) if plan.output_tokens is not None else dataset_out
        assert out is not None
        if self._cap is not None and out > self._cap:
            out = self._cap
        return RequestSample(plan.name, prompt, n, out)
