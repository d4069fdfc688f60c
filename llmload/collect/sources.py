"""Where readings come from: a ``/metrics`` endpoint, or a Prometheus server's query API.

The only I/O of the package. Requests go out through ``urllib`` — in a Locust process
the socket module is gevent's, so a request waits in its own greenlet without blocking
the users — with a short timeout, ``Accept-Encoding: gzip``, no proxy (the load itself
goes direct too), and at most :data:`MAX_BYTES` read. Every failure becomes a
:class:`FetchError` with a kind (:mod:`~llmload.collect.endpoint_health`) and a one-line message.

* :class:`ScrapeSource` — GET the URL, parse the samples its roles read (``engine``: the
  engines' names; ``gpu``: the GPU exporters' names).
* :class:`PrometheusSource` — ``POST <url>/api/v1/query`` with an instant query per role,
  ``{__name__=~"<every name read>",<selector>}``: the raw series, which then go through
  the same readers as a scrape, so counters and histograms are handled alike.
"""

from __future__ import annotations

import base64
import gzip
import http.client
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from llmload.collect import engines, gpus
from llmload.collect.endpoint_health import BAD_ANSWER, HTTP_ERROR, UNREACHABLE
from llmload.collect.exposition import Samples, parse_exposition, samples_from_query

__all__ = ["MAX_BYTES", "FetchError", "PrometheusSource", "ScrapeSource", "http_request"]

#: Largest answer read (a vLLM /metrics is ~40 kB; Prometheus answers with buckets are larger).
MAX_BYTES = 32 << 20
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_HEADERS = {"Accept-Encoding": "gzip", "User-Agent": "llmload-collect"}

Request = Callable[[str, float, "bytes | None"], bytes]


class FetchError(Exception):
    """A poll that gave nothing: ``kind`` unreachable | http_error | bad_answer."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _credentials(url: str) -> tuple[str, str | None]:
    """``url`` without ``user:password@``, and the Basic ``Authorization`` value they make."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url, None
    user = urllib.parse.unquote(parts.username)
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), f"Basic {token}"


def http_request(url: str, timeout: float, body: bytes | None = None) -> bytes:
    """GET (or POST a form ``body``) ``url``; the answer's body, decompressed.

    ``user:password@`` in the URL is sent as HTTP Basic authentication.
    """
    headers = dict(_HEADERS)
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    url, auth = _credentials(url)
    if auth is not None:
        headers["Authorization"] = auth
    req = urllib.request.Request(url, data=body, headers=headers)
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            data = resp.read(MAX_BYTES + 1)
            encoding = resp.headers.get("Content-Encoding", "")
    except urllib.error.HTTPError as e:
        raise FetchError(HTTP_ERROR, f"HTTP {e.code} {e.reason}{_error_detail(e)}") from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, TimeoutError):
            raise FetchError(UNREACHABLE, f"no answer within {timeout:g}s") from None
        raise FetchError(UNREACHABLE, str(getattr(reason, "strerror", None) or reason)) from None
    except TimeoutError:
        raise FetchError(UNREACHABLE, f"no answer within {timeout:g}s") from None
    except http.client.HTTPException as e:
        raise FetchError(BAD_ANSWER, f"broken HTTP answer ({type(e).__name__})") from None
    except OSError as e:
        raise FetchError(UNREACHABLE, e.strerror or str(e)) from None
    if len(data) > MAX_BYTES:
        raise FetchError(BAD_ANSWER, f"answer larger than {MAX_BYTES >> 20} MiB")
    if "gzip" in encoding:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise FetchError(BAD_ANSWER, "answer not valid gzip") from None
    return data


def _error_detail(e: urllib.error.HTTPError) -> str:
    """A Prometheus API error message, when the body is one (400 on a bad query)."""
    try:
        answer = orjson.loads(e.read(4096))
    except Exception:
        return ""
    error = answer.get("error") if isinstance(answer, dict) else None
    return f": {error}" if error else ""


def _names(roles: frozenset[str]) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    if "engine" in roles:
        out |= engines.ENGINE_NAMES
    if "gpu" in roles:
        out |= gpus.GPU_NAMES
    return out


@dataclass(frozen=True)
class ScrapeSource:
    """A ``/metrics`` URL read for ``roles`` (``engine`` and/or ``gpu``)."""

    url: str
    roles: frozenset[str]
    source: str = "scrape"

    def read(self, timeout: float, request: Request = http_request) -> Samples:
        body = request(self.url, timeout, None)
        text = body.decode("utf-8", errors="replace")
        head = text.lstrip()[:64].lower()
        if head.startswith(("<!doctype", "<html", "{")):
            raise FetchError(BAD_ANSWER, "not a Prometheus metrics page (HTML or JSON)")
        return parse_exposition(text, _names(self.roles))


def _query(names: list[str], selector: str) -> str:
    matchers = [f'__name__=~"{"|".join(names)}"'] + ([selector] if selector else [])
    return "{" + ",".join(matchers) + "}"


@dataclass(frozen=True)
class PrometheusSource:
    """The same signals from a Prometheus server (instant queries, one per role)."""

    url: str
    roles: frozenset[str]
    engine_selector: str = ""
    gpu_selector: str = ""
    source: str = "prometheus"

    def queries(self) -> list[str]:
        out = []
        if "engine" in self.roles:
            out.append(_query([n for e in engines.ENGINES for n in e.metric_names()], self.engine_selector))
        if "gpu" in self.roles:
            out.append(_query(gpus.metric_names(), self.gpu_selector))
        return out

    def read(self, timeout: float, request: Request = http_request) -> Samples:
        rows = []
        for q in self.queries():
            body = request(self.url + "/api/v1/query", timeout, urllib.parse.urlencode({"query": q}).encode())
            try:
                answer = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise FetchError(BAD_ANSWER, "not a Prometheus API answer (invalid JSON)") from None
            if not isinstance(answer, dict) or answer.get("status") != "success":
                error = answer.get("error") if isinstance(answer, dict) else None
                raise FetchError(BAD_ANSWER, f"Prometheus query failed: {error or 'no success status'}")
            rows.append(samples_from_query(answer))
        return Samples.merge(rows)
