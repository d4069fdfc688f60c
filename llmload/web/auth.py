"""``--web-auth user:password``: HTTP basic auth in front of every route of the web UI.

Locust's web UI listens on ``*:8089`` with no authentication; its ``--web-login`` needs a
login handler written in the locustfile (without one every page fails with "no secret key
was set"), and its old ``--web-auth`` only says it was removed. :func:`install_web_auth`
adds one Flask ``before_request`` guard to the web UI's app: every route — the pages, the
form's ``/swarm``, the statistics, ``/metrics`` and ``/llmload/live`` — answers 401 with
``WWW-Authenticate: Basic`` unless the request carries the user and password (compared in
constant time). The dedicated exporter port (``--exporter-port``) is a separate listener, on
127.0.0.1 unless ``--exporter-host`` opens it (``--exporter-port 0`` turns it off).

What the page shows of secrets is here too: :func:`hide_secret_defaults` keeps ``--api-key``
out of the start form's HTML (:func:`llmload.web.tables.install_web_ui` calls it).
"""

from __future__ import annotations

import hmac
from typing import Any

from llmload.config.values import parse_web_auth  # the flag's value, checked with the others (RunConfig)
from llmload.errors import ConfigError

__all__ = ["check_web_login", "hide_secret_defaults", "install_web_auth", "parse_web_auth"]


def install_web_auth(web_ui: Any, credentials: tuple[str, str]) -> None:
    """Require ``credentials`` (basic auth) on every request to ``web_ui``'s app."""
    from flask import Response, request

    user, password = credentials
    want_user, want_password = user.encode(), password.encode()

    def guard() -> Response | None:
        auth = request.authorization
        if auth is not None and auth.type == "basic":
            got_user = (auth.username or "").encode()
            got_password = (auth.password or "").encode()
            ok_user = hmac.compare_digest(got_user, want_user)
            if hmac.compare_digest(got_password, want_password) and ok_user:
                return None
        return Response("authentication required (--web-auth)\n", 401, {"WWW-Authenticate": 'Basic realm="llmload"'})

    web_ui.app.before_request_funcs.setdefault(None, []).insert(0, guard)


def check_web_login(web_ui: Any, web_login: bool) -> None:
    """Locust's ``--web-login`` without a login handler breaks every page: say so before the UI starts."""
    if not web_login or web_ui is None:
        return
    manager = getattr(web_ui, "_login_manager", None)
    if web_ui.app.secret_key is None or getattr(manager, "_user_callback", None) is None:
        raise ConfigError(
            "--web-login needs a login handler in the locustfile (a secret key and a user loader, see Locust's "
            "'Authentication' docs); for a password on the web UI use --web-auth USER:PASSWORD instead"
        )


def _blank_secrets(template_args: dict[str, Any]) -> None:
    for option in (template_args.get("extra_options") or {}).values():
        if option.get("is_secret"):
            option["default_value"] = ""


def hide_secret_defaults(web_ui: Any) -> None:
    """Keep secret flags (``--api-key``) out of the start page.

    Locust fills its start form with every web-UI flag's *value* (parsed from the command
    line and the environment), secrets included: the key would sit in the HTML of ``/``,
    served to anyone who reaches the port. The page gets an empty field instead; a field
    left empty keeps the key the process was started with (the runtime falls back to it),
    a field filled in sets a new one for that run. Locust rebuilds the page's arguments on
    every ``GET /``, so the rebuild is wrapped, and the arguments built at start-up are
    blanked now.
    """
    _blank_secrets(web_ui.template_args)
    rebuild = web_ui.update_template_args

    def update_template_args() -> None:
        rebuild()
        _blank_secrets(web_ui.template_args)

    web_ui.update_template_args = update_template_args
