"""Replaying a closed-loop run as it ran: each user's next request follows its last one.

In a closed loop a user sends its next request when its last one ended, so the measured send
times depend on the server's speed: replayed at those fixed times on a model a little slower or
faster, requests overlap that never did (or the reverse), and errors compound. :func:`chains`
links each request to the one its user sent before (the unclaimed request that ended last, at
most ``gap_s`` before it started); :func:`replay_closed` sends a linked request when its
predecessor ended in the replay (plus the measured gap), the others at their measured times.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from llmload.capacity.measured import Req
from llmload.sim.api import ApiError
from llmload.sim.batching import BatchingEngine
from llmload.sim.params import EngineParams
from llmload.sim.virtual import Arrival, Outcome, VirtualLoop

__all__ = ["chains", "replay_closed"]


def chains(reqs: Sequence[Req], gap_s: float = 0.05) -> list[int | None]:
    """For each request, the index of its user's previous request (None: the user's first, or unknown)."""
    ends = sorted((r.end, i) for i, r in enumerate(reqs))
    keys = [e for e, _ in ends]
    claimed: set[int] = set()
    prev: list[int | None] = [None] * len(reqs)
    for i in sorted(range(len(reqs)), key=lambda k: reqs[k].start):
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
            engine.submit(_Sink(loop, o, then), o.arrival.max_tokens, o.arrival.prompt)
        except ApiError as e:
            o.error, o.status = e.message, e.status
            then()

    for i, p in enumerate(prev):
        if p is None:
            loop.call_at(reqs[i].start, submit, i)
    loop.run()
    return [o if o is not None else Outcome(Arrival(r.start, r.input, r.output, str(i))) for i, (o, r) in
            enumerate(zip(outs, reqs, strict=True))]  # fmt: skip
