"""Where a flag's value came from, named in its error line: an environment variable or a config file.

Locust's parser (ConfigArgParse) reads every flag from the command line, else from its environment
variable (``LLMLOAD_<NAME>``, Locust's ``LOCUST_<NAME>``), else from a config file (``locust.conf``,
``~/.locust.conf``, ``pyproject.toml``, ``--config FILE``), and records where each value came from
(``get_source_to_settings_dict``). llmload's error lines start with the flag (``--ttft-timeout 'abc':
must be a duration ...``); a user who never typed ``--ttft-timeout`` looks for it on a command line that
does not have it. :func:`locate` puts the place in front of the line::

    LLMLOAD_TTFT_TIMEOUT=abc: --ttft-timeout 'abc': must be a duration such as 30s, 2m, 1h30m or 250ms
    ttft-timeout = abc in locust.conf: --ttft-timeout 'abc': must be a duration such as 30s, ...

A secret flag's value (``--api-key``, ``--web-auth``) is never shown, only where it was set.
:func:`located` does it for every ConfigError of a block (start-up checks, the ``init`` event).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from llmload.errors import ConfigError

__all__ = ["locate", "located", "origins"]

_ENV = "environment_variables"  # ConfigArgParse's names of its sources
_CONFIG_FILE = "config_file|"
#: The flag an error line starts with: ``--ttft-timeout ...``, ``-u/--users ...``, argparse's ``argument --seed: ...``.
_LEADING_FLAG = re.compile(r"^(?:argument )?(-{1,2}[\w-]+(?:/-{1,2}[\w-]+)*)")


def origins(parser: Any) -> dict[str, str]:
    """``{option string: where its value came from}`` after ``parser`` parsed, for every value that did not
    come from the command line; ``{}`` for a parser that has not parsed (or is no ConfigArgParse parser)."""
    try:
        sources = parser.get_source_to_settings_dict()
    except AttributeError:
        return {}
    out: dict[str, str] = {}
    for source, settings in sources.items():
        if source != _ENV and not source.startswith(_CONFIG_FILE):
            continue  # the command line, or a default
        path = source[len(_CONFIG_FILE) :]
        for key, (action, value) in settings.items():
            if action is None:  # a config-file key that is no flag
                continue
            secret = bool(getattr(action, "is_secret", False))
            if source == _ENV:
                where = f"{key} (environment variable)" if secret else f"{key}={value}"
            else:
                where = f"{key} in {path}" if secret else f"{key} = {value} in {path}"
            for option in action.option_strings:
                out.setdefault(option, where)
    return out


def locate(message: str, where: Mapping[str, str]) -> str:
    """``message`` with the origin of the flag it starts with in front; unchanged when that flag was given on
    the command line (or the message starts with no flag)."""
    m = _LEADING_FLAG.match(message)
    if m is None:
        return message
    for option in m.group(1).split("/"):
        if option in where:
            return f"{where[option]}: {message}"
    return message


@contextmanager
def located(parser: Any) -> Iterator[None]:
    """Re-raise a ConfigError of the block with the origin of its flag in front (:func:`locate`), from what
    ``parser`` (Locust's, after it parsed; None: unknown) recorded."""
    try:
        yield
    except ConfigError as e:
        message = locate(str(e), origins(parser)) if parser is not None else str(e)
        if message == str(e):
            raise
        raise type(e)(message) from None
