"""The runner's state as Locust's page is told it: a stop in progress reads as running until it has ended.

**Why.** Locust's React UI (2.47) polls ``/stats/requests`` only while the state it last read
is ``spawning`` or ``running``, and shows the last state it read. A stop passes through
``cleanup`` (a standalone runner, while its users finish their requests) or ``stopping`` (a
master, until its workers say they stopped) before ``stopped``. Without a stop timeout
that takes milliseconds and no poll sees it; a ladder sets Locust's stop timeout to the
request timeout (the last step's requests finish and are judged), so the drain takes as
long as the longest request in flight, a poll lands in it, the page stops polling and its
header says CLEANUP for good, whether the ladder ended by itself or from the Stop button.

**The fix** (Locust's seams only: a Flask ``after_request`` hook on the web UI's app). Every
``/stats/requests`` answer carries the runner's state *now* (Locust memoizes the route for
2 s, so a cached answer could be older) with a stop in progress given as ``running``: the
page goes on polling through the drain and reads ``stopped`` when the stop has ended.
The true state stays everywhere else: ``/llmload/live``, the chart page's status line
("cleanup", "stopping") and the runner itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from flask import Response, request

from llmload.jsonvalue import Json

__all__ = ["STOP_IN_PROGRESS", "edit_request_stats", "install_state", "shown_state"]

log = logging.getLogger("llmload")

#: Runner states of a stop that has not ended yet, and what the page is told instead.
STOP_IN_PROGRESS = {"cleanup": "running", "stopping": "running"}


def shown_state(state: str | None) -> str | None:
    """The state Locust's page is told: a stop in progress is still ``running`` (module docstring)."""
    return STOP_IN_PROGRESS.get(state, state) if state is not None else None


def edit_request_stats(app: Any, edit: Callable[[dict[str, Json]], bool], what: str) -> None:
    """Rewrite every successful JSON answer of Locust's ``/stats/requests`` with ``edit(body)`` (Flask's ``after_request``).

    ``edit`` changes the body in place and returns whether it did (False: the answer goes out
    as it is). A failing edit leaves the answer as Locust made it and is logged once
    (``what`` says which edit), not on every poll.
    """
    failed: list[bool] = []

    @app.after_request
    def _edit(resp: Response) -> Response:
        if request.endpoint != "locust.request_stats" or resp.status_code != 200 or not resp.is_json:
            return resp
        try:
            body = json.loads(resp.get_data())
            if edit(body):
                resp.set_data(json.dumps(body, separators=(",", ":")))
        except Exception:
            if not failed:
                failed.append(True)
                log.exception("llmload: could not %s /stats/requests", what)
        return resp


def install_state(environment: Any) -> bool:
    """Hook ``/stats/requests`` of ``environment.web_ui`` (False when there is none)."""
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None or getattr(web_ui, "_llmload_state", False):
        return web_ui is not None
    web_ui._llmload_state = True

    def state_now(body: dict[str, Json]) -> bool:
        runner = environment.runner
        if runner is None:
            return False
        body["state"] = shown_state(runner.state)
        return True

    edit_request_stats(web_ui.app, state_now, "set the state of")
    return True
