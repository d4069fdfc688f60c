"""Replaying a closed-loop run as it ran: each user's next request follows its last one.

In a closed loop a user sends its next request when its last one ended (plus its think time, or
its tools' run time), so the measured send times depend on the server's speed: replayed at those
fixed times on a model a little slower or faster, requests overlap that never did (or the
reverse), and errors compound. :func:`chains` links each request to the one its user sent before:

1. by the record's ``user`` (the sending user's index, :class:`~llmload.metrics.record.RequestRecord`):
   the user's previous request, whatever the gap (think time, tool waits, backoff after an error);
2. records written before that field: a conversation's turn follows its session's previous turn;
3. the rest by time alone: the unclaimed request (also without a user) that ended last, at most
   ``gap_s`` before it started (a user without think time sends its next request at once).

:func:`replay_closed` sends a linked request when its predecessor ended in the replay plus the gap
it left in the measured run, the others at their measured times. Each request's prompt is given
tokens for the engine's prefix cache, so a conversation's turn finds its history cached as it did:
its session's own tokens, after a shared head as long as its first turn's measured cache hit (a
single request: its own measured hit; all prefix groups of a run share that one head).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from llmload.capacity.measured import Req
from llmload.capacity.session_replay import PromptTokens
from llmload.sim.api import ApiError
from llmload.sim.batching import BatchingEngine
from llmload.sim.params import EngineParams
from llmload.sim.virtual import Arrival, Outcome, VirtualLoop

__all__ = ["chains", "replay_closed", "replay_tokens"]

_HEAD = 1  # the key of the shared head (prefix groups); sessions' keys follow it
_OWN = 1 << 40  # single requests' own keys: this | their index


def chains(reqs: Sequence[Req], gap_s: float = 0.05) -> list[int | None]:
    """For each request, the index of its user's previous request (None: the user's first, or unknown)."""
    order = sorted(range(len(reqs)), key=lambda k: reqs[k].start)
    prev: list[int | None] = [None] * len(reqs)
    claimed: set[int] = set()
    last: dict[str, int] = {}
    for i in order:  # 1. the record names its user
        u = reqs[i].user
        if u:
            j = last.get(u)
            if j is not None:
                prev[i] = j
                claimed.add(j)
            last[u] = i
    anonymous = [i for i in order if not reqs[i].user]
    turns = {(reqs[i].session, reqs[i].turn): i for i in anonymous if reqs[i].session}
    for i in anonymous:  # 2. a conversation's previous turn
        r = reqs[i]
        j = turns.get((r.session, r.turn - 1)) if r.session and r.turn > 1 else None
        if j is not None and j not in claimed:
            prev[i] = j
            claimed.add(j)
    ends = sorted((reqs[i].end, i) for i in anonymous)
    keys = [e for e, _ in ends]
    for i in anonymous:  # 3. by time: the request that ended just before it
        if prev[i] is not None or (reqs[i].session and reqs[i].turn > 1):
            continue
        s = reqs[i].start
        k = bisect.bisect_right(keys, s) - 1
        while k >= 0 and s - keys[k] <= gap_s:
            j = ends[k][1]
            if j not in claimed and j != i:
                prev[i] = j
                claimed.add(j)
                break
            k -= 1
    return prev


def replay_tokens(reqs: Sequence[Req]) -> list[Sequence[int]]:
    """Each request's prompt tokens for the prefix cache (see the module docstring; () when nothing can hit)."""
    keys: dict[str, tuple[int, int]] = {}  # session -> (its key, its head's length)
    out: list[Sequence[int]] = []
    for i, r in enumerate(reqs):
        if r.session:
            if r.session not in keys:
                keys[r.session] = (len(keys) + _HEAD + 1, (r.cached or 0) if r.turn <= 1 else 0)
            key, head = keys[r.session]
            out.append(PromptTokens(_HEAD, head, key, max(r.input, 1)))
        elif r.cached:
            out.append(PromptTokens(_HEAD, r.cached, _OWN | i, max(r.input, 1)))
        else:
            out.append(())
    return out


class _Sink:
    __slots__ = ("loop", "next", "outcome")

    def __init__(self, loop: VirtualLoop, outcome: Outcome, then) -> None:
        self.loop, self.outcome, self.next = loop, outcome, then

    def emit(self, n: int, finished: bool) -> None:
        self.outcome.token_times.extend([self.loop.time()] * n)
        if finished:
            self.next()

    def fail(self, message: str) -> None:
        self.outcome.error = message
        self.next()


def replay_closed(params: EngineParams, reqs: Sequence[Req]) -> list[Outcome]:
    """One :class:`Outcome` per request (same order), its ``arrival.t`` the replayed send time."""
    prev = chains(reqs)
    after: dict[int, int] = {p: i for i, p in enumerate(prev) if p is not None}
    tokens = replay_tokens(reqs)
    loop = VirtualLoop()
    engine = BatchingEngine(params, loop)  # type: ignore[arg-type]
    outs: list[Outcome | None] = [None] * len(reqs)

    def submit(i: int) -> None:
        r = reqs[i]
        o = outs[i] = Outcome(Arrival(loop.time(), max(r.input, 1), r.output, str(i)))

        def then() -> None:
            j = after.get(i)
            if j is not None:  # the user's next request, after the gap it left in the measured run
                loop.call_later(max(reqs[j].start - r.end, 0.0), submit, j)

        try:
            engine.submit(_Sink(loop, o, then), o.arrival.max_tokens, o.arrival.prompt, tokens[i])
        except ApiError as e:
            o.error, o.status = e.message, e.status
            then()

    for i, p in enumerate(prev):
        if p is None:
            loop.call_at(reqs[i].start, submit, i)
    loop.run()
    return [o if o is not None else Outcome(Arrival(r.start, r.input, r.output, str(i))) for i, (o, r) in
            enumerate(zip(outs, reqs, strict=True))]  # fmt: skip
