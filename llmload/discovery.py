"""Asking the target server which model it serves (``GET /v1/models``), once, before load."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from llmload.config.values import basic_auth
from llmload.errors import ConfigError

__all__ = ["discover_model"]


def discover_model(host: str, headers: dict[str, str] | None = None, timeout: float = 10.0) -> str:
    """The first model id listed by ``{host}/v1/models``; ConfigError with a fix if none.

    ``headers`` are the API's own (credentials: ``Adapter.api_headers``), sent as they are;
    a user:password in ``host`` goes as basic auth and never into a message.
    """
    base, auth = basic_auth(host)  # the URL's user:password: sent as the load sends them, never shown
    url = base.rstrip("/") + "/v1/models"
    req = urllib.request.Request(url, headers={"Accept": "application/json", **(headers or {}), **auth})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        if e.code in (401, 403):  # --model would not help: every request would be refused the same way
            raise ConfigError(
                f"{url} answered HTTP {e.code}: the server refuses the API key (or its absence); pass --api-key KEY "
                "(default: $LLMLOAD_API_KEY, else $OPENAI_API_KEY; $ANTHROPIC_API_KEY for --api anthropic-messages)"
            ) from None
        raise ConfigError(f"--model not given and {url} answered HTTP {e.code}; pass --model NAME") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise ConfigError(
            f"--model not given and {url} could not be read ({reason}); check --host or pass --model NAME"
        ) from None
    models = [m.get("id") for m in body.get("data", []) if isinstance(m, dict) and m.get("id")]
    if not models:
        raise ConfigError(f"--model not given and {url} lists no models; pass --model NAME")
    return str(models[0])
