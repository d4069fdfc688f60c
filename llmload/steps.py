"""Which load step is running, on every process: the ladder's state, broadcast by the master.

The master (or standalone process) runs the :class:`~llmload.shapes.ladder.LadderShape`,
which calls :meth:`StepTracker.enter` every tick. On a change the tracker records the
step's window (wall clock) and tells the workers with the custom message ``llmload_step``
(``{"i": index, "steady": bool}``). Every process reads :attr:`StepTracker.steady_step`
when a request starts: the index of the step whose steady window is running, else None.

``--stop-on-breach`` asks :attr:`StepTracker.breached` each tick: closed steps are judged
once their workers' last reports are in (a report interval after the step ended).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from llmload.shapes.ladder import BASELINE_STEP, StepWindow

__all__ = ["MESSAGE", "REPORT_GRACE_S", "StepTracker"]

MESSAGE = "llmload_step"
#: A closed step is judged this long after it ended, when the workers' reports are in.
REPORT_GRACE_S = 4.0

#: (closed step windows, the run's per-step statistics) → a breach dict, or None.
Judge = Callable[[list[StepWindow]], "dict[str, Any] | None"]


class StepTracker:
    def __init__(self, broadcast: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._broadcast = broadcast
        self.windows: list[StepWindow] = []
        self.steady_step: int | None = None
        self._state: tuple[int, bool] | None = None
        self.judge: Judge | None = None
        self._judged = 0
        self.breach: dict[str, Any] | None = None
        self.baseline_count: Callable[[], int] = lambda: 0

    def reset(self) -> None:
        self.windows, self.steady_step, self._state = [], None, None
        self._judged, self.breach = 0, None

    # -- master / standalone -------------------------------------------------------------
    def enter(self, index: int, users: int, steady: bool) -> None:
        if self._state == (index, steady):
            return
        now = time.time()
        current = self.windows[-1] if self.windows else None
        if current is None or current.index != index:
            if current is not None and current.ended_at is None:
                current.ended_at = now
            current = StepWindow(index, users, now)
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
            self.windows[-1].ended_at = time.time()
        if self._state is not None:
            self._state = None
            self._apply({"i": None, "steady": False})

    def _apply(self, msg: dict[str, Any]) -> None:
        self.on_message(msg)
        if self._broadcast is not None:
            self._broadcast(msg)

    def baseline_complete(self, n: int) -> bool:
        return self.baseline_count() >= n

    @property
    def breached(self) -> bool:
        """Judge the steps that closed at least a report interval ago (once each)."""
        if self.breach is not None or self.judge is None:
            return self.breach is not None
        now = time.time()
        closed = [w for w in self.windows if w.ended_at is not None and now - w.ended_at >= REPORT_GRACE_S]
        if len(closed) > self._judged:
            self._judged = len(closed)
            self.breach = self.judge([w for w in closed if w.index != BASELINE_STEP] or closed)
        return self.breach is not None

    # -- every process -------------------------------------------------------------------
    def on_message(self, msg: dict[str, Any]) -> None:
        index = msg.get("i")
        self.steady_step = index if index is not None and msg.get("steady") else None
