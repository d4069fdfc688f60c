"""Conversations: one session of a request class, turn by turn, each turn re-sending the whole history.

A class with ``turns`` (a number or a distribution; ``"dataset"`` for a dataset's own
conversations) is a conversation class. A :class:`Session` is one conversation of one
user. It is pure: it never sends or waits; the user drives it with the replies it got::

    session = sampler.start_session()                 # the mix's next class, its turn count drawn
    reply: str | None = None
    reply_tokens: int | None = None
    while not session.done:
        if session.turn:                              # before every turn but the first
            wait(session.think_time_s)                # the user keeps its slot while thinking
        sample = session.next_turn(reply, reply_tokens)   # a RequestSample, sample.turn = 1, 2, ...
        reply, reply_tokens = send(sample)            # the text actually received, its token count
        if the turn failed: stop here                 # no reply, no next turn: drop the session

The exact signatures: :meth:`WorkloadSampler.start_session()
<llmload.workload.sampler.WorkloadSampler.start_session>` → :class:`Session`;
``Session.next_turn(previous_reply: str | None = None, reply_tokens: int | None = None)
-> RequestSample`` (``previous_reply`` is required from the second turn on;
``reply_tokens`` is the server's ``usage.completion_tokens`` or the chunks counted, else
the text is estimated at 4 characters per token); ``Session.think_time_s: float`` (the
pause after the reply to the turn just produced, before the next one; 0.0 after the
last); ``Session.done``, ``Session.turn`` (turns produced so far), ``Session.turns`` (the
conversation's length), ``Session.class_name``, ``Session.conversation`` (False for a
single-request class's one-turn session). A single-request class gives a session of
one turn, so a user can drive every class through sessions.

**Turn k's request.** Chat (``RequestSample.messages``, from turn 2 on): the user and
assistant messages so far, the assistant ones holding the reply text actually received,
then the new user message. Completions and plain-text endpoints send
``RequestSample.prompt``, the same conversation as one text: the previous turn's prompt,
its reply appended as received (the model's own continuation), :data:`TURN_SEPARATOR`,
then the new user message. ``input_tokens`` is the estimated context: every user message
(the class's ``prefix`` included, which opens the first one) plus every reply's tokens; so
turn k's input grows by the previous turns' sizes, and the earlier turns are a prefix a
server's prefix cache can serve.

**Images** (a class with ``images``, :mod:`llmload.workload.images`): the first user message
(every one with ``every_turn``) holds chat content parts, its text then one ``image_url`` part
per image (:func:`user_message`); the history keeps them, so every later turn re-sends them.
``RequestSample.images`` is every image of the request (:func:`history_images`; turn 1: its
own, beside its ``prompt``); the one-text form keeps the text only; the token estimate counts
text only (the server's ``usage`` has the image tokens).

**Turn k's user message.** Synthetic classes draw ``input_tokens`` and ``output_tokens``
afresh for every turn (a new unique message each time; the prefix group is drawn once per
conversation and opens the first message only). Dataset classes (loaded with their later
turns, :class:`~llmload.workload.datasets.DatasetTurn`) replay each record's user turns in
order, with ``max_tokens`` the recorded reply's length when ``output_tokens = "dataset"``;
``turns = N`` (or a distribution) caps each replay at N turns.

Random draws, all from the user's RNG in a fixed order (so the stream does not depend on the
replies): the turn count at the start, then per turn the user message and ``max_tokens``,
then, unless it is the last turn, the think time. A single-request class draws exactly what
:meth:`~llmload.workload.sampler.WorkloadSampler.next` draws.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmload.workload.datasets import DatasetCursor, DatasetEntry, estimate_tokens
from llmload.workload.distributions import Distribution, Duration
from llmload.workload.prefixes import PrefixGroups
from llmload.workload.prompts import synthetic_prompt
from llmload.workload.request_types import RequestSample

if TYPE_CHECKING:
    from llmload.workload.agent import AgentSpec
    from llmload.workload.images import ImageSource

__all__ = ["TURN_SEPARATOR", "ClassPlan", "Session", "history_images", "one_text", "user_message"]

#: Between a reply and the next user message in the one-text (completions) form.
TURN_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ClassPlan:
    """What one class needs at request time, resolved once per sampler."""

    name: str
    input_tokens: Distribution | None
    output_tokens: Distribution | None
    prefixes: PrefixGroups | None
    cursor: DatasetCursor | None
    turns: Distribution | str | None = None  # None: single requests; "dataset": each record's turns
    think_time: Duration | None = None
    cap: int | None = None  # max_tokens cap
    agent: AgentSpec | None = None  # an agent class's tools (llmload.workload.agent)
    images: ImageSource | None = None  # this user's images of the class (llmload.workload.images)

    def capped(self, n: int) -> int:
        return n if self.cap is None or n <= self.cap else self.cap

    def opening(self, rng: random.Random) -> tuple[str, int, int, DatasetEntry | None]:
        """The first user message: (text, its estimated tokens, max_tokens, the dataset record if any)."""
        if self.cursor is None:
            assert self.input_tokens is not None
            prefix = None
            if self.prefixes is not None:
                prefix = self.prefixes.get(self.prefixes.draw(rng))
            n = self.input_tokens.sample(rng)
            text = synthetic_prompt(rng, n, prefix)
            tokens = n + (prefix.tokens if prefix is not None else 0)
            entry = None
            out = None
        else:
            entry = self.cursor.next()
            text, tokens, out = entry.prompt, entry.input_tokens, entry.output_tokens
        if self.output_tokens is not None:
            out = self.output_tokens.sample(rng)
        assert out is not None
        return text, tokens, self.capped(out), entry


class Session:
    """One conversation: :meth:`next_turn` produces each turn's request (see the module docstring)."""

    __slots__ = (
        "_context",
        "_entry",
        "_first",
        "_messages",
        "_plan",
        "_rng",
        "class_name",
        "think_time_s",
        "turn",
        "turns",
    )

    def __init__(self, plan: ClassPlan, rng: random.Random) -> None:
        self._plan = plan
        self._rng = rng
        self.class_name = plan.name
        turns = plan.turns
        drawn = turns.sample(rng) if turns is not None and not isinstance(turns, str) else None
        self._first = plan.opening(rng)
        entry = self._entry = self._first[3]
        if turns is None:
            self.turns = 1
        elif entry is not None:
            most = 1 + len(entry.followups)
            self.turns = most if drawn is None else min(drawn, most)
        else:
            assert drawn is not None
            self.turns = drawn
        self.turn = 0
        self.think_time_s = 0.0
        self._messages: list[dict[str, str]] = []  # the history; the one-text form is built from it per turn
        self._context = 0

    @property
    def conversation(self) -> bool:
        """True for a conversation class's session (even of one turn), False for a single request."""
        return self._plan.turns is not None

    @property
    def done(self) -> bool:
        """True once every turn has been produced."""
        return self.turn >= self.turns

    def next_turn(self, previous_reply: str | None = None, reply_tokens: int | None = None) -> RequestSample:
        """The next turn's request; from turn 2 on, ``previous_reply`` is the text received for the last one.

        Raises :class:`RuntimeError` when the session is done, :class:`ValueError` when a
        later turn is asked for without the previous reply.
        """
        if self.done:
            raise RuntimeError(f"session of class {self.class_name!r} is over after {self.turns} turns")
        plan, rng = self._plan, self._rng
        k = self.turn + 1
        images = plan.images
        if k == 1:
            text, tokens, out, _ = self._first
            urls = images.next() if images is not None else None
            self._messages.append(user_message(text, urls))
            self._context = tokens
            sample = RequestSample(plan.name, text, tokens, out, None, 1, images=urls)
        else:
            if previous_reply is None:
                raise ValueError(f"turn {k} of class {self.class_name!r} needs the reply text of turn {k - 1}")
            if reply_tokens is None:
                reply_tokens = estimate_tokens(previous_reply) if previous_reply else 0
            user, tokens, out = self._user_turn(k)
            urls = images.next() if images is not None and images.spec.every_turn else None
            self._messages.append({"role": "assistant", "content": previous_reply})
            self._messages.append(user_message(user, urls))
            self._context += reply_tokens + tokens
            sample = RequestSample(plan.name, one_text(self._messages), self._context, out, tuple(self._messages), k,
                                   images=history_images(self._messages) if images is not None else None)  # fmt: skip
        self.turn = k
        last = k >= self.turns
        self.think_time_s = 0.0 if last or plan.think_time is None else plan.think_time.sample(rng)
        return sample

    def _user_turn(self, k: int) -> tuple[str, int, int]:
        """Turn ``k`` (≥ 2)'s user message: (text, its estimated tokens, max_tokens)."""
        plan, rng = self._plan, self._rng
        if self._entry is not None:
            turn = self._entry.followups[k - 2]
            out = plan.output_tokens.sample(rng) if plan.output_tokens is not None else turn.output_tokens
            return turn.prompt, turn.input_tokens, plan.capped(out)
        assert plan.input_tokens is not None and plan.output_tokens is not None
        n = plan.input_tokens.sample(rng)
        text = synthetic_prompt(rng, n)
        return text, n, plan.capped(plan.output_tokens.sample(rng))


def user_message(text: str, images: Sequence[str] | None) -> dict[str, Any]:
    """A user message: its text, or with images chat content parts (the text, then one ``image_url`` per image).

    The history keeps this chat shape; the Responses and Messages adapters send it in theirs
    (:mod:`llmload.adapters.image_shapes`).
    """
    if not images:
        return {"role": "user", "content": text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in images]
    return {"role": "user", "content": parts}


def history_images(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...] | None:
    """Every image a conversation's messages carry (``data:`` URIs, in order); None when none does."""
    urls = tuple(p["image_url"]["url"] for m in messages if type(m.get("content")) is list
                 for p in m["content"] if p.get("type") == "image_url")  # fmt: skip
    return urls or None


def _text(content: Any) -> str:
    """A message's text: its content, or the ``text`` parts of a content list (images have none)."""
    if type(content) is list:
        return "".join(p["text"] for p in content if p.get("type") == "text")
    return content


def one_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as one text: the first user message, then each reply, and a separator before each
    next user message or tool result (an agent's calls are answered by their results, no user message between).

    Built per turn rather than kept: a thinking session holds its history once (its messages), not twice.
    """
    parts = [_text(messages[0]["content"])]
    for m in messages[1:]:
        if m["role"] == "assistant":
            parts.append(m.get("content") or "")
        else:
            parts += (TURN_SEPARATOR, _text(m["content"]))
    return "".join(parts)
