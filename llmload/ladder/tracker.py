"""Which load step is running, on every process: the ladder's state, broadcast by the master.

The master (or standalone process) drives the ladder (:class:`~llmload.ladder.plan.LadderDriver`),
which calls :meth:`StepTracker.enter` every tick. On a change the tracker records the step's
window (wall clock) and tells the workers with the custom message :data:`MESSAGE`
(``{"i": index, "steady": bool}``), which they hand to :meth:`StepTracker.on_message`. Every
process reads :attr:`StepTracker.steady_step` when a request starts: the index of the step
whose steady window is running, else None (the request's step key).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from llmload.jsonvalue import Json

__all__ = ["MESSAGE", "StepTracker", "StepWindow"]

MESSAGE = "llmload_step"


@dataclass(slots=True)
class StepWindow:
    """When a step ran (wall clock, seconds since the epoch); the tracker fills it in as the step goes."""

    index: int
    users: int
    started_at: float
    steady_from: float | None = None
    ended_at: float | None = None
    rate: float | None = None  # a rate ladder's offered rate (requests/s), else None


class StepTracker:
    """The running step: windows (master/standalone) and the steady step (every process)."""

    def __init__(
        self, broadcast: Callable[[dict[str, Json]], None] | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._broadcast = broadcast
        self._clock = clock
        self.windows: list[StepWindow] = []
        self.steady_step: int | None = None
        self._state: tuple[int, bool] | None = None
        #: Called with ``(index, steady)`` on every step change this process learns of (index None: the end).
        self.listeners: list[Callable[[int | None, bool], None]] = []

    def reset(self) -> None:
        """A new test: no windows, no step."""
        self.windows, self.steady_step, self._state = [], None, None

    # -- master / standalone -------------------------------------------------------------
    def enter(self, index: int, users: int, steady: bool, rate: float | None = None) -> None:
        """Step ``index`` (of ``users``, at offered ``rate`` for a rate ladder) runs now, steady or not; a change is broadcast."""
        if self._state == (index, steady):
            return
        now = self._clock()
        current = self.windows[-1] if self.windows else None
        if current is None or current.index != index:
            if current is not None and current.ended_at is None:
                current.ended_at = now
            current = StepWindow(index, users, now, rate=rate)
            self.windows.append(current)
        if steady and current.steady_from is None:
            current.steady_from = now
        self._state = (index, steady)
        self._apply({"i": index, "steady": steady})

    def current(self) -> tuple[int, int, bool] | None:
        """(index, users, steady) of the running step, or None."""
        if self._state is None or not self.windows:
            return None
        return self._state[0], self.windows[-1].users, self._state[1]

    def close(self) -> None:
        """The ladder ended: close the last window; no step is running any more."""
        if self.windows and self.windows[-1].ended_at is None:
            self.windows[-1].ended_at = self._clock()
        if self._state is not None:
            self._state = None
            self._apply({"i": None, "steady": False})

    def _apply(self, msg: dict[str, Json]) -> None:
        self.on_message(msg)
        if self._broadcast is not None:
            self._broadcast(msg)

    # -- every process -------------------------------------------------------------------
    def on_message(self, msg: dict[str, Json]) -> None:
        """The master's step change (a worker receives it as :data:`MESSAGE`)."""
        i = msg.get("i")
        index = i if isinstance(i, int) else None  # MESSAGE's step index (None: no step)
        self.steady_step = index if index is not None and msg.get("steady") else None
        for listener in self.listeners:
            listener(index, bool(msg.get("steady")))
