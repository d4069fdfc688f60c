from __future__ import annotations

import inspect

from locust import argument_parser
from locust.runners import WorkerRunner

from llmload.runtime.locust_workarounds import cache_default_args, install_locust_workarounds


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
