"""What Locust's page is told of the runner's state: a stop in progress reads as running until it has ended."""

from __future__ import annotations

import pytest
from locust import events as global_events
from locust.env import Environment
from locust.runners import STATE_CLEANUP, STATE_RUNNING, STATE_STOPPED, STATE_STOPPING

from llmload.users import LLMUser
from llmload.web.state import install_state, shown_state


def test_a_stop_in_progress_is_shown_as_running_every_other_state_as_it_is():
    assert shown_state(STATE_CLEANUP) == shown_state(STATE_STOPPING) == "running"
    for state in ("ready", "spawning", "running", "stopped", "missing"):
        assert shown_state(state) == state
    assert shown_state(None) is None


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setattr("sys.argv", ["locust"])  # Locust's web UI parses sys.argv for the form's extra options

    class U(LLMUser):
        pass

    e = Environment(user_classes=[U], host="http://127.0.0.1:9", events=type(global_events)())
    e.create_local_runner()
    e.create_web_ui("127.0.0.1", 0)
    assert install_state(e) is True and install_state(e) is True  # twice: one hook
    yield e
    e.runner.quit()
    e.web_ui.stop()


def test_the_stats_route_carries_the_state_now_and_polling_goes_on_through_a_stop(env):
    client = env.web_ui.app.test_client()
    runner = env.runner
    runner.state = STATE_RUNNING
    assert client.get("/stats/requests").get_json()["state"] == "running"
    runner.state = STATE_CLEANUP  # users finish their last requests (a ladder's stop timeout)
    body = client.get("/stats/requests").get_json()  # Locust's memoized answer of a moment ago, state now
    assert body["state"] == "running"  # the page (which polls only while spawning/running) polls on
    runner.state = STATE_STOPPED
    assert client.get("/stats/requests").get_json()["state"] == "stopped"  # fresh even from Locust's cache
    assert client.get("/").status_code == 200  # other routes untouched


def test_no_web_ui_means_nothing():
    assert install_state(Environment(user_classes=[], events=type(global_events)())) is False
