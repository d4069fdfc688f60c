"""The per-user request stream: mix → class → prompt and lengths → :class:`RequestSample`.

One :class:`WorkloadSampler` per Locust user. It owns a generator seeded from
``(seed, user_index)`` (never the global RNG; a :class:`~llmload.workload.lean_random.LeanRandom`,
``random.Random``'s interface in 8 bytes of state instead of 2.5 KB: an idle session holds it) and a :class:`~llmload.workload.mix.Mix`
started at ``offset = user_index``. Same profile, seed and user index ⇒ the identical
sequence of samples; different user indices ⇒ different prompts. Shared prefixes depend
on the seed, class name and group only, so they are identical for every user and every
process given the same seed. Datasets are loaded once per process (cached) when the first
sampler that needs them is built.

Two ways to draw: :meth:`WorkloadSampler.next` gives single requests (every class must be
a single-request class; :meth:`WorkloadSampler.sample` one of a given class, the open loop's
path); :meth:`WorkloadSampler.start_session` gives the next class's
:class:`~llmload.workload.conversation.Session`, a conversation turn by turn (one turn for
a single-request class). :attr:`WorkloadSampler.has_conversations` says which a user must
use: a profile with a conversation class is driven through sessions. An image class's
samples carry its images (:mod:`llmload.workload.images`), in a conversation as in a single request.
"""

from __future__ import annotations

import hashlib
import random

from llmload.errors import ProfileError
from llmload.workload.agent import AgentSession
from llmload.workload.conversation import ClassPlan, Session
from llmload.workload.datasets import DatasetCursor, load_dataset
from llmload.workload.images import ImageSource
from llmload.workload.lean_random import LeanRandom
from llmload.workload.mix import Mix
from llmload.workload.prefixes import PrefixGroups
from llmload.workload.profiles import Profile, RequestClass
from llmload.workload.prompts import warm
from llmload.workload.request_types import RequestSample

__all__ = ["WorkloadSampler", "user_rng"]


def user_rng(seed: int, user_index: int) -> random.Random:
    """The RNG of one user: seeded from a hash of ``(seed, user_index)``, stable everywhere."""
    digest = hashlib.sha256(f"llmload-user:{seed}:{user_index}".encode()).digest()
    return LeanRandom(int.from_bytes(digest[:16], "big"))


class WorkloadSampler:
    """Produces one user's requests: ``next()`` returns the next :class:`RequestSample`.

    ``max_tokens_cap`` (when set) caps every sample's ``max_tokens``.
    ``has_conversations``: some class is a conversation, so draw with :meth:`start_session`.
    Raises :class:`~llmload.errors.ProfileError` if a dataset cannot be used.
    """

    __slots__ = ("_cap", "_mix", "_plans", "_rng", "has_conversations", "profile", "seed", "user_index")

    def __init__(
        self,
        profile: Profile,
        seed: int,
        user_index: int,
        max_tokens_cap: int | None = None,
    ) -> None:
        if max_tokens_cap is not None and max_tokens_cap < 1:
            raise ValueError(f"max_tokens_cap must be ≥ 1 or None, got {max_tokens_cap}")
        self.profile = profile
        self.seed = seed
        self.user_index = user_index
        self._cap = max_tokens_cap
        self._rng = user_rng(seed, user_index)
        self._mix = Mix(profile.weights, offset=user_index)
        self._plans = tuple(self._plan(c) for c in profile.classes)
        self.has_conversations = any(c.is_conversation for c in profile.classes)
        if any(p.cursor is None for p in self._plans):
            warm()  # once per process, at the first user's start rather than inside its first request

    def _plan(self, c: RequestClass) -> ClassPlan:
        prefixes = PrefixGroups(c.prefix, self.seed, c.name) if c.prefix is not None else None
        cursor = None
        if c.prompt.kind == "dataset":
            assert c.prompt.path is not None
            dataset = load_dataset(c.prompt.path, c.prompt.format, turns=c.is_conversation)
            if c.output_tokens is None and (missing := dataset.first_missing_output) is not None:
                raise ProfileError(
                    f"dataset '{dataset.path}': {missing} has no output length, but class {c.name!r} has "
                    'output_tokens = "dataset"; add "output_tokens" to every record, or set output_tokens in the profile'
                )
            cursor = DatasetCursor(dataset, self._rng)
        images = None if c.images is None else ImageSource(c.images, self.seed, c.name, self.user_index)
        return ClassPlan(c.name, c.input_tokens, c.output_tokens, prefixes, cursor, c.turns, c.think_time_s, self._cap,
                         c.agent, images)  # fmt: skip

    @property
    def rng(self) -> random.Random:
        """This user's RNG (a trace replay draws the unique part of its prompts from it)."""
        return self._rng

    def next(self) -> RequestSample:
        """The next request of this user's stream (single-request classes only)."""
        return self.sample(self._mix.next())

    def sample(self, class_index: int) -> RequestSample:
        """A request of the class at ``class_index`` in the profile, from this user's RNG.

        The open loop's path: the dispatcher's one global mix picks the class of each arrival
        (:class:`~llmload.arrivals.dispatcher.Ticket`), so this user's own mix does not step.
        """
        plan = self._plans[class_index]
        if plan.turns is not None:
            raise RuntimeError(f"class {plan.name!r} is a conversation: use start_session()")
        prompt, n, out, _ = plan.opening(self._rng)
        return RequestSample(plan.name, prompt, n, out, images=None if plan.images is None else plan.images.next())

    def start_session(self) -> Session:
        """The next conversation of this user's stream: the mix's next class, as a :class:`Session`."""
        i = self._mix.next()
        plan = self._plans[i]
        return Session(plan, self._rng) if plan.agent is None else AgentSession(plan, self._rng, plan.agent)
