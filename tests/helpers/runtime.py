"""Locust processes of each role, without sockets: runners that only answer what llmload asks of them."""

from __future__ import annotations

from types import SimpleNamespace

from locust import events as global_events
from locust.argument_parser import get_parser
from locust.event import EventHook
from locust.runners import STATE_RUNNING, STATE_STOPPED, LocalRunner, MasterRunner, WorkerRunner

from llmload.config import add_arguments


def parse(*args: str):
    parser = get_parser()
    add_arguments(parser)
    return parser.parse_args(["--host", "http://127.0.0.1:9", "--model", "m", "--no-preflight", "--web-port", "0", *args])  # no target here


class _Fake:
    """What llmload reads from a runner: the user count, the state, messages, the clients, stop(), quit()."""

    def __init__(self, users: int = 0, worker_index: int = 0) -> None:
        self.users = users
        self.state = STATE_RUNNING
        self.worker_index = worker_index
        self.sent: list[tuple[str, dict]] = []
        self.handlers: dict[str, object] = {}
        self.quit_called = 0
        self.stop_called = 0
        self.greenlet = None
        self.clients = SimpleNamespace(all=[])

    @property
    def user_count(self) -> int:
        return self.users

    def send_message(self, kind: str, data: dict) -> None:
        self.sent.append((kind, data))

    def register_message(self, kind: str, handler, concurrent: bool = False) -> None:
        self.handlers[kind] = handler

    def stop(self) -> None:
        self.stop_called += 1
        self.state = STATE_STOPPED

    def quit(self) -> None:
        self.quit_called += 1


class FakeLocal(_Fake, LocalRunner):
    pass


class FakeMaster(_Fake, MasterRunner):
    pass


class FakeWorker(_Fake, WorkerRunner):
    pass


def environment(runner: _Fake | None, *args: str) -> SimpleNamespace:
    """An environment as llmload sees it at ``init``: options, runner, events, no web UI, no shape."""
    events = type(global_events)()
    env = SimpleNamespace(
        parsed_options=parse(*args),
        runner=runner,
        events=events,
        host="http://127.0.0.1:9",
        web_ui=None,
        shape_class=None,
        stop_timeout=None,
        process_exit_code=None,
    )
    env.events.llmload_request = EventHook()
    return env
