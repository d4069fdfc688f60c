"""The web UI's start form, checked before a test starts: a bad value is shown in the page.

Locust's ``POST /swarm`` copies the form into ``parsed_options`` and starts the users; a
value that cannot be converted (``abc`` in a number field) is a server error, and one that
converts but is wrong (``--step-time abc``, a closed ``--host``) surfaced only as a log line
and a run that ends at once. :func:`install_form_check` wraps that view: the form is read
as Locust would read it (same field names, same conversions), validated into a
:class:`~llmload.config.RunConfig` and run through the pre-flight
(:func:`llmload.runtime.checks.preflight`, without the port checks: the web UI already
listens); the first problem is answered as ``{"success": false, "message": ..., "host": ...}``,
the JSON Locust's own form errors use, which its page shows above the form (nothing starts).

A ladder (``ladder``, ``rate_ladder``) runs from the form when the locustfile's shape is
llmload's :class:`~llmload.ladder.shape.LadderShape` (``llmload run``'s web UI always has
one); with another locustfile the form's ladder would be silently ignored, so it is refused.
Before Locust starts a new test the checked configuration is handed to ``prepare`` (the
coordinator's ladder driver), so the shape's first tick already runs the form's ladder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from flask import jsonify
from locust.runners import STATE_RUNNING, STATE_SPAWNING

from llmload.config import RunConfig
from llmload.errors import ConfigError
from llmload.ladder.shape import LadderShape
from llmload.runtime.checks import preflight
from llmload.runtime.options import Options

__all__ = ["check_form", "install_form_check"]

log = logging.getLogger("llmload")


def check_form(options: Options, form: Mapping[str, str], *, ladder_shape: bool = True, shape_users: bool = False) -> RunConfig:
    """The form's configuration; ConfigError (one line) when its values would not start a good test.

    ``ladder_shape``: the shape can run a ladder (else a ladder in the form is refused);
    ``shape_users``: a shape of the locustfile's own decides users and spawn rate, and Locust
    ignores the form's (it sends 0 for both). A concurrency ladder decides them too (a rate
    ladder's users are its cap on requests in flight): then they are not checked.
    """
    values, locust = options.form_values(form)
    config = RunConfig.from_values(values)
    ladder = config.ladder
    if ladder is not None and not ladder_shape:
        flag = "--rate-ladder" if ladder.by_rate else "--ladder"
        raise ConfigError(f"{flag} from the form: this locustfile has no ladder shape, so the test would run -u users "
                          "instead; start `llmload run` without -f (its web UI runs the form's ladder), or add "
                          "llmload.ladder.shape.LadderShape to your locustfile")  # fmt: skip
    decided = shape_users or (ladder is not None and not ladder.by_rate)
    users, spawn_rate = (None, None) if decided else (locust.get("users"), locust.get("spawn_rate"))
    for warning in preflight(config, locust["host"], users=users, spawn_rate=spawn_rate):
        log.warning("llmload: %s", warning)
    return config


def _shape(environment: Any, chosen: str | None) -> Any:
    """The shape the form starts: the one picked in the form's shape picker when Locust shows one, else the locustfile's."""
    if chosen is None:
        return environment.shape_class
    return None if chosen == "Default" else (environment.available_shape_classes or {}).get(chosen)


def install_form_check(environment: Any, options: Options, prepare: Callable[[RunConfig], None] | None = None) -> bool:
    """Check the start form before Locust's ``/swarm`` runs (False without a web UI); ``prepare`` gets the
    checked configuration of a test about to start (not of an edit of the running one)."""
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None:
        return False
    app = web_ui.app
    endpoint = next((e for e in app.view_functions if e.split(".")[-1] == "swarm"), None)
    if endpoint is None:
        log.warning("llmload: the web UI has no /swarm view; its start form is not checked")
        return False
    swarm = app.view_functions[endpoint]

    def checked_swarm(*args: Any, **kwargs: Any) -> Any:
        from flask import request

        try:
            shape = _shape(environment, request.form.get("shape_class"))  # the form's shape picker, when shown
            config = check_form(options, request.form, ladder_shape=isinstance(shape, LadderShape),
                                shape_users=shape is not None and not getattr(shape, "use_common_options", False))  # fmt: skip
        except ConfigError as e:
            log.error("llmload: %s", e)
            return jsonify({"success": False, "message": str(e), "host": environment.host})
        runner = environment.runner
        if prepare is not None and runner is not None and runner.state not in (STATE_SPAWNING, STATE_RUNNING):
            prepare(config)
        return swarm(*args, **kwargs)

    app.view_functions[endpoint] = checked_swarm
    return True
