"""Value parsers for flags: durations, numbers, JSON objects, URLs, label matchers, user counts, credentials.

Every parser takes the raw value (text from the command line, the environment, a
``locust.conf`` file or the web UI's start form, or an already typed default) and the flag
it came from, and either returns the typed value or raises a
:class:`~llmload.errors.ConfigError` whose message is one line: what, where, how to fix.
The web UI form hands numbers over as text, ``""`` meaning "not set".
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import orjson

from llmload.errors import ConfigError
from llmload.jsonvalue import Json

__all__ = [
    "parse_duration",
    "parse_json_object",
    "parse_levels",
    "parse_number",
    "parse_selector",
    "parse_urls",
    "parse_web_auth",
    "basic_auth",
    "public_url",
]

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_SELECTOR = re.compile(r'^\s*[A-Za-z_][A-Za-z0-9_]*\s*(=|!=|=~|!~)\s*"')


def parse_duration(value: str | float | int | None, flag: str) -> float | None:
    """``"30s"``, ``"2m"``, ``"1h30m"``, ``"250ms"``, ``"1.5"`` (seconds) → seconds; ``0``/empty → None (off)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = value.strip().lower()
        try:
            seconds = float(text)
        except ValueError:  # "-5s" is negative: the check below says so
            negative = text.startswith("-") and len(text) > 1
            seconds = -_parse_units(text[1:], flag, text) if negative else _parse_units(text, flag, text)
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{flag} {value!r}: must be a duration >= 0 such as 30s, 2m or 1h30m")
    return seconds or None


def _parse_units(text: str, flag: str, given: str) -> float:
    total, num = 0.0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            num += ch
            i += 1
            continue
        unit = "ms" if text.startswith("ms", i) else ch
        if unit not in _UNITS or not num:
            raise ConfigError(f"{flag} {given!r}: must be a duration such as 30s, 2m, 1h30m or 250ms")
        total += float(num) * _UNITS[unit]
        num = ""
        i += len(unit)
    if num:
        raise ConfigError(f"{flag} {given!r}: a number needs a unit (s, m, h, ms), e.g. {num}s")
    return total


def parse_number(value: Any, kind: type, flag: str) -> Any:
    """An ``int`` or ``float`` option; None (or ``""`` from the web UI form) = not set."""
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: must be a{'n integer' if kind is int else ' number'}") from None


def parse_json_object(value: Any, flag: str) -> dict[str, Json]:
    """A JSON object given as text (``""`` = ``{}``)."""
    text = value or ""
    try:
        parsed = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError as e:
        raise ConfigError(f"{flag}: not valid JSON ({e}); pass an object like '{{\"top_p\": 0.9}}'") from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"{flag}: must be a JSON object like '{{\"top_p\": 0.9}}'")
    return parsed


def parse_levels(text: str, flag: str = "--ladder") -> tuple[int, ...]:
    """``"1,5,10"`` → (1, 5, 10): positive, strictly increasing user counts."""
    try:
        levels = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: must be user counts separated by commas, e.g. 1,5,10,20") from None
    if not levels or any(n < 1 for n in levels):
        raise ConfigError(f"{flag} {text!r}: every step needs at least 1 user, e.g. 1,5,10,20")
    if any(b <= a for a, b in zip(levels, levels[1:], strict=False)):
        raise ConfigError(f"{flag} {text!r}: user counts must increase from step to step")
    return levels


def parse_web_auth(text: str | None) -> tuple[str, str] | None:
    """``--web-auth user:password`` → (user, password); None when not given; ConfigError (without the password)
    when malformed, whether or not a web UI will run (a malformed value is a mistake either way)."""
    if not text:
        return None
    user, sep, password = text.partition(":")
    if not sep or not user or not password:
        raise ConfigError("--web-auth: expected USER:PASSWORD (both non-empty), e.g. --web-auth admin:s3cret")
    return user, password


def basic_auth(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without user:password, and the ``Authorization: Basic`` header they stand for ({} without).

    urllib does not send a URL's credentials (it took ``user:pw@host`` for a host name);
    Locust's FastHttpSession sends them this way, in place of any other Authorization header.
    """
    parts = urlsplit(url)
    if not (parts.username and parts.password):
        return public_url(url), {}
    pair = f"{unquote(parts.username)}:{unquote(parts.password)}".encode("latin1")
    return public_url(url), {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def public_url(url: str) -> str:
    """``url`` without user:password (safe to log and to write to a summary)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def parse_urls(values: Any, flag: str, metrics_path: bool) -> tuple[str, ...]:
    """http(s) URLs from a repeated flag and/or comma-separated lists; ``metrics_path`` adds ``/metrics`` to bare hosts."""
    if not values:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    out: list[str] = []
    for item in items:
        for url in str(item).split(","):
            url = url.strip()
            if not url:
                continue
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ConfigError(f"{flag} {url!r}: must be an http(s) URL such as http://vllm:8000/metrics")
            if metrics_path and parts.path in ("", "/"):
                url = urlunsplit(parts._replace(path="/metrics"))
            if url not in out:
                out.append(url)
    return tuple(out)


def parse_selector(value: Any, flag: str) -> str:
    """PromQL label matchers (``job="vllm",namespace="llm"``), braces optional; ``""`` = none."""
    text = str(value or "").strip().strip("{}").strip()
    if text and not _SELECTOR.match(text):
        raise ConfigError(f'{flag} {value!r}: must be PromQL label matchers such as job="vllm",namespace="llm"')
    return text
