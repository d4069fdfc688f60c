from __future__ import annotations

import inspect
import logging

import gevent
import pytest
from gevent.event import Event
from locust import argument_parser
from locust import events as locust_events
from locust import runners as locust_runners
from locust.env import Environment
from locust.runners import STATE_STOPPED, LocalRunner, Runner, WorkerRunner

from llmload.runtime.locust_workarounds import cache_default_args, install_locust_workarounds, one_stop_at_a_time


def test_the_defaults_are_built_once_and_each_caller_gets_its_own_copy():
    calls = []

    def build():
        calls.append(1)
        return {"host": None, "users": 1}

    cached = cache_default_args(build)
    first = cached()
    first["users"] = 99  # a caller changing its dict changes nobody else's
    assert [cached() for _ in range(150)][-1] == {"host": None, "users": 1}
    assert len(calls) == 1


def test_installed_once_it_answers_what_locust_builds():
    original = argument_parser.default_args_dict
    try:
        install_locust_workarounds()
        installed = argument_parser.default_args_dict
        install_locust_workarounds()  # idempotent: not wrapped twice
        assert argument_parser.default_args_dict is installed
        unwrapped = getattr(installed, "__wrapped__", installed)
        assert installed() == unwrapped() and "host" in installed() and "num_users" in installed()
    finally:
        argument_parser.default_args_dict = original


def test_the_locust_code_it_mends_is_still_there():
    """When this fails Locust no longer calls default_args_dict() per option of a spawn message:
    drop the workaround (llmload/runtime/locust_workarounds.py)."""
    source = inspect.getsource(WorkerRunner)
    assert "argument_parser.default_args_dict()" in source and 'job["parsed_options"].items()' in source


@pytest.fixture
def locust_as_shipped(monkeypatch):
    """Locust's runners without this module's workarounds (restored after the test)."""
    monkeypatch.setattr(locust_runners, "inspect", inspect)
    monkeypatch.setattr(Runner, "stop", inspect.unwrap(Runner.stop))
    monkeypatch.setattr(argument_parser, "default_args_dict", argument_parser.default_args_dict)


def test_a_stop_reads_no_stack_and_still_says_who_called_it(locust_as_shipped, monkeypatch, caplog):
    """Runner.stop called inspect.stack() (20-100 ms without a switch: the chunks then arriving were stamped late)
    for its debug line; with the workaround it reads the frames only, and the line still names the caller."""
    stacks = []
    monkeypatch.setattr(inspect, "stack", lambda *a, **k: stacks.append(1) or [])
    install_locust_workarounds()
    runner = Environment(user_classes=[], events=type(locust_events)()).create_local_runner()
    with caplog.at_level(logging.DEBUG, logger="locust.runners"):
        runner.stop()
    assert stacks == [] and runner.state == STATE_STOPPED
    called_from = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Stopping all users")]
    assert called_from == [f"Stopping all users (called from {locust_runners.__file__}:{_line_of(LocalRunner.stop, 'super().stop()')})"]


def _line_of(function, text: str) -> int:
    lines, first = inspect.getsourcelines(inspect.unwrap(function))
    return first + next(i for i, line in enumerate(lines) if text in line)


class _Stoppable:
    def __init__(self) -> None:
        self.calls = 0
        self.release = Event()
        self.inside = Event()

    @one_stop_at_a_time
    def stop(self) -> None:
        self.calls += 1
        self.inside.set()
        self.stop()  # a listener of its events stopping again: returns at once
        self.release.wait()


def test_a_stop_while_one_is_under_way_waits_for_it_and_stops_nobody_twice():
    r = _Stoppable()
    first = gevent.spawn(r.stop)
    r.inside.wait()
    second = gevent.spawn(r.stop)
    gevent.sleep(0)  # the second has started, and waits
    assert not second.ready() and r.calls == 1
    r.release.set()
    gevent.joinall([first, second], raise_error=True)
    assert r.calls == 1
    r.release.clear()
    third = gevent.spawn(r.stop)  # a later stop is a stop of its own
    r.release.set()
    third.get()
    assert r.calls == 2


def test_the_locust_code_the_stop_workarounds_mend_is_still_there():
    """When this fails Locust's stop changed: check whether it still reads the whole stack (inspect.stack()) and
    whether a second stop still asks each user to stop again; drop what it no longer needs."""
    stop = inspect.getsource(Runner.stop)
    assert "inspect.getframeinfo(inspect.stack()[1][0])" in stop and "if self.state == STATE_STOPPED:" in stop
    assert "spawn_later(0, user_to_stop.stop, force=False)" in inspect.getsource(Runner.stop_users)


def test_greenlets_spawned_after_install_keep_no_spawning_stack():
    before = gevent.config.track_greenlet_tree
    try:
        install_locust_workarounds()
        g = gevent.spawn(lambda: None)
        assert g.spawning_stack is None and g.spawn_tree_locals is None
        g.join()
    finally:
        gevent.config.track_greenlet_tree = before
