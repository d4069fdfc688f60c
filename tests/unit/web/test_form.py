"""The start form, checked before Locust's ``/swarm`` runs: a real Locust web UI read with Flask's test client.

Locust's own ``/swarm`` view is replaced by a stub that records the calls, so nothing is
started here; the integration tests (tests/integration/test_web_access.py,
test_web_ui_form.py) post to the real one.
"""

from __future__ import annotations

import pytest
from flask import jsonify
from locust.runners import STATE_RUNNING

from llmload.ladder.shape import LadderShape
from llmload.runtime import Options
from llmload.web.form import install_form_check
from tests.helpers.web_env import local_web_env


class Ramp(LadderShape):
    pass


@pytest.fixture
def form(monkeypatch):
    """``form(shape=None)`` → (post(fields) -> answer, prepared configs, swarm calls, environment)."""
    monkeypatch.setattr("sys.argv", ["locust"])  # Locust's web UI parses sys.argv for the form's extra options
    envs = []

    def make(shape=None):
        env = local_web_env(shape=shape)
        envs.append(env)
        swarmed, prepared = [], []
        app = env.web_ui.app
        app.view_functions["locust.swarm"] = lambda: (swarmed.append(1), jsonify({"success": True}))[1]
        assert install_form_check(env, Options(env, worker=False), prepared.append)
        client = app.test_client()

        def post(**fields):
            return client.post("/swarm", data={"user_count": "2", "spawn_rate": "2", "host": env.host, **fields}).get_json()

        return post, prepared, swarmed, env

    yield make
    for env in envs:
        env.runner.quit()
        env.web_ui.stop()


BAD = [
    ({"ladder": "5,1"}, "--ladder '5,1': user counts must increase from step to step"),
    ({"ladder": "1,x"}, "--ladder '1,x': must be user counts separated by commas"),
    ({"step_time": "abc"}, "--step-time 'abc': must be a duration"),
    ({"ladder": "1,2", "step_time": "10s", "step_warmup": "20s"}, "--step-warmup 20s: must be shorter than --step-time 10s"),
    ({"slo": "ttft=3"}, "--slo 'ttft=3': unknown SLO 'ttft'"),
    ({"extra_body": "{bad"}, "--extra-body: not valid JSON"),
    ({"profile": "/no/such/profile.toml"}, "profile '/no/such/profile.toml': no such file"),
    ({"arrival": "poisson"}, "--arrival poisson: needs --rate R"),
    ({"rate_ladder": "1,2", "arrival": "poisson", "user_count": "0"}, "-u 0: a rate ladder needs -u >= 1"),
]


@pytest.mark.parametrize(("fields", "message"), BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_a_bad_value_is_one_line_and_starts_nothing(form, fields, message):
    post, prepared, swarmed, _ = form(Ramp())
    answer = post(**fields)
    assert answer["success"] is False and message in answer["message"], answer
    assert "\n" not in answer["message"]
    assert swarmed == [] and prepared == []


def test_a_ladder_from_the_form_is_handed_to_the_shape_before_its_test_starts(form):
    post, prepared, swarmed, _ = form(Ramp())
    answer = post(ladder="1,3", step_time="20s", step_warmup="2s", slo="ttft_ms=500", user_count="-1")
    assert answer["success"] is True, answer  # the ladder decides the users: the form's are not checked
    assert swarmed == [1] and prepared[0].ladder.levels == (1, 3) and prepared[0].ladder.step_s == 20.0
    assert prepared[0].slo.ttft_ms == 500
    answer = post(rate_ladder="1,2", arrival="poisson", user_count="6")
    assert answer["success"] is True and prepared[1].ladder.rates == (1.0, 2.0) and prepared[1].ladder.levels == (6, 6)
    assert post(user_count="-2")["message"].startswith("-u/--users -2: must be >= 0")  # no ladder: the users count


def test_an_edit_of_the_running_test_leaves_its_ladder_alone(form):
    post, prepared, swarmed, env = form(Ramp())
    env.runner.state = STATE_RUNNING
    assert post(user_count="5")["success"] is True
    assert swarmed == [1] and prepared == []


def test_a_locustfile_without_the_ladder_shape_refuses_a_ladder_it_would_ignore(form):
    post, prepared, swarmed, _ = form(None)
    answer = post(ladder="1,2")
    assert answer["success"] is False and "--ladder from the form: this locustfile has no ladder shape" in answer["message"]
    assert post(rate_ladder="1,2", arrival="poisson")["message"].startswith("--rate-ladder from the form")
    assert swarmed == [] and post()["success"] is True and swarmed == [1]
