"""A Locust environment with a local runner (and web UI) as ``locust`` builds one, for the web UI's unit tests."""

from __future__ import annotations

from locust import events as global_events
from locust.argument_parser import get_parser
from locust.env import Environment

from llmload.config import add_arguments
from llmload.users import LLMUser


def local_web_env(*, shape=None, web_base_path=None, web_ui: bool = True) -> Environment:
    """llmload's flags parsed (no target, no pre-flight, any free web port), a local runner, the web UI on 127.0.0.1:0.

    Tests that create a web UI must set ``sys.argv`` to ``["locust"]`` first (Locust's web UI
    parses it for the start form's extra options).
    """

    class U(LLMUser):
        pass

    parser = get_parser()
    if not any(a.dest == "api" for a in parser._actions):
        add_arguments(parser)
    opts = parser.parse_args(["--host", "http://127.0.0.1:9", "--model", "m", "--no-preflight", "--web-port", "0"])
    env = Environment(user_classes=[U], host=opts.host, parsed_options=opts, shape_class=shape,
                      events=type(global_events)())  # fmt: skip
    env.create_local_runner()
    if web_ui:
        env.create_web_ui("127.0.0.1", 0, web_base_path=web_base_path)
    return env
