"""The web UI's start form, checked before a test starts: a bad value is shown in the page.

Locust's ``POST /swarm`` copies the form into ``parsed_options`` and starts the users; a
value that cannot be converted (``abc`` in a number field) is a server error, and one that
converts but is wrong (``--step-time abc``, a closed ``--host``) surfaced only as a log line
and a run that ends at once. :func:`install_form_check` wraps that view: the form is read
as Locust would read it (same field names, same conversions), validated into a
:class:`~llmload.config.RunConfig` and run through the pre-flight
(:func:`llmload.runtime.checks.preflight`, without the port checks: the web UI already
listens); the first problem is answered as ``{"success": false, "message": ..., "host": ...}``,
the JSON Locust's own form errors use, which its page shows to the user.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import jsonify

from llmload.config import RunConfig
from llmload.errors import ConfigError
from llmload.runtime.checks import preflight
from llmload.runtime.options import Options

__all__ = ["check_form", "install_form_check"]

log = logging.getLogger("llmload")


def check_form(options: Options, form: Mapping[str, str], shape: bool = False) -> None:
    """ConfigError (one line) when the form's values would not start a good test.

    ``shape``: a load shape (the ladder) decides users and spawn rate, and Locust ignores
    the form's (it sends 0 for both), so they are not checked.
    """
    values, locust = options.form_values(form)
    config = RunConfig.from_values(values)
    users, spawn_rate = (None, None) if shape else (locust.get("users"), locust.get("spawn_rate"))
    for warning in preflight(config, locust["host"], users=users, spawn_rate=spawn_rate):
        log.warning("llmload: %s", warning)


def install_form_check(environment: Any, options: Options) -> bool:
    """Check the start form before Locust's ``/swarm`` runs (False without a web UI)."""
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
            chosen = request.form.get("shape_class")  # the form's shape picker, when Locust shows one
            shape = environment.shape_class is not None if chosen is None else chosen != "Default"
            check_form(options, request.form, shape=shape)
        except ConfigError as e:
            log.error("llmload: %s", e)
            return jsonify({"success": False, "message": str(e), "host": environment.host})
        return swarm(*args, **kwargs)

    app.view_functions[endpoint] = checked_swarm
    return True
