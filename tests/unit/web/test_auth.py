from __future__ import annotations

import base64

import pytest
from flask import Flask

from llmload.errors import ConfigError
from llmload.web.auth import check_web_login, hide_secret_defaults, install_web_auth


class _UI:
    def __init__(self) -> None:
        self.app = Flask("t")
        self.app.add_url_rule("/metrics", "m", lambda: "ok")
        self.app.add_url_rule("/llmload/live", "l", lambda: "ok")


def _h(user: str, pw: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()}


def test_every_route_needs_the_credentials():
    ui = _UI()
    install_web_auth(ui, ("admin", "pw:with:colons"))
    c = ui.app.test_client()
    for path in ("/metrics", "/llmload/live", "/nope"):
        r = c.get(path)
        assert r.status_code == 401 and r.headers["WWW-Authenticate"] == 'Basic realm="llmload"'
        assert c.get(path, headers=_h("admin", "wrong")).status_code == 401
        assert c.get(path, headers=_h("root", "pw:with:colons")).status_code == 401
    assert c.get("/metrics", headers=_h("admin", "pw:with:colons")).status_code == 200
    assert c.get("/nope", headers=_h("admin", "pw:with:colons")).status_code == 404


def test_web_login_without_a_handler_is_refused():
    ui = _UI()
    with pytest.raises(ConfigError, match="--web-login needs a login handler"):
        check_web_login(ui, True)
    check_web_login(ui, False)


class _FakeWebUI:
    """Locust's WebUI as far as hide_secret_defaults uses it: template_args and their rebuild."""

    def __init__(self) -> None:
        self.template_args: dict = {}
        self.update_template_args()

    def update_template_args(self) -> None:
        self.template_args = {
            **self.template_args,
            "extra_options": {
                "api_key": {"default_value": "sk-secret", "is_secret": True},
                "model": {"default_value": "tiny", "is_secret": False},
            },
        }


def test_secret_flags_are_blanked_in_the_start_page_now_and_on_every_rebuild():
    ui = _FakeWebUI()
    hide_secret_defaults(ui)
    assert ui.template_args["extra_options"]["api_key"]["default_value"] == ""
    ui.update_template_args()  # what Locust does on every GET /
    options = ui.template_args["extra_options"]
    assert options["api_key"] == {"default_value": "", "is_secret": True}
    assert options["model"]["default_value"] == "tiny"  # other fields keep their values
