"""The rules that come before every other: the target answers nothing but errors, or refuses the load.

When nearly every request of the run fails (:data:`FAILING_SHARE` of the finished ones),
no latency and no saturation figure means anything: the client may even have run hot
sending failures (before error backoff: 17 037 attempts in 5 s against a closed port, and a
"load generator saturated" verdict). The finding names the target, the error kinds and the
server's own messages (one example per kind), and ranks first (:mod:`.diagnose`).

When most requests were refused with HTTP 429 (:data:`RATE_LIMITED_SHARE`), that is a rate
limit, the server's own or a gateway's: ``rate_limited`` says so (with the ``Retry-After``
the answers carried) instead of calling the target unreachable, and ranks first the same way.
"""

from __future__ import annotations

from llmload.analysis.findings import Context, rule
from llmload.results.judgement import Finding
from llmload.results.model import Stats

__all__ = ["FAILING_SHARE", "MIN_FINISHED", "RATE_LIMITED_SHARE", "rate_limited", "target_unreachable"]

#: This share of the finished requests failing, or more: every request fails.
FAILING_SHARE = 0.95
#: Below this many finished requests there is nothing to judge.
MIN_FINISHED = 2
#: This share of the finished requests refused with HTTP 429, or more: the run measured a rate limit.
RATE_LIMITED_SHARE = 0.5
_CONNECT = ("connection",)
_TOO_MANY = "http_429"


def _refused(o: Stats | None) -> int:
    """Requests refused with 429 when they are :data:`RATE_LIMITED_SHARE` of the finished ones, else 0."""
    if o is None or o.finished < MIN_FINISHED:
        return 0
    n = o.errors_by_kind.get(_TOO_MANY, 0)
    return n if n and n >= RATE_LIMITED_SHARE * o.finished else 0


def _kinds_text(o: Stats) -> str:
    kinds = sorted(o.errors_by_kind.items(), key=lambda kv: -kv[1])
    return f"{o.errors} of {o.finished} finished requests failed ({o.ok} ok): " + ", ".join(f"{k} {n}" for k, n in kinds)


@rule("target_unreachable", "target")
def target_unreachable(ctx: Context) -> list[Finding]:
    """Errors are at least :data:`FAILING_SHARE` of the run's finished requests (and not mostly 429s: :func:`rate_limited`)."""
    o = ctx.run
    if o is None or o.finished < MIN_FINISHED or o.errors < FAILING_SHARE * o.finished or _refused(o):
        return []
    target = ctx.host or "the target"
    kinds = dict(sorted(o.errors_by_kind.items(), key=lambda kv: -kv[1]))
    unreachable = set(kinds) <= set(_CONNECT)
    title = "Target unreachable / every request fails: " + (
        f"no connection to {target}" if unreachable else f"{target} answers {', '.join(list(kinds)[:3])}"
    )
    text = [_kinds_text(o)]
    text += [f"{k}: {msg}" for k, msg in o.errors_examples.items() if msg][:4]
    if unreachable:
        change = (f"Check --host {target}: is the server running and listening there (scheme, host, port)? "
                  "Without --no-preflight llmload refuses to start against a target it cannot connect to.")  # fmt: skip
    else:
        change = ("Read the server's messages above: a wrong --model, --endpoint-path or --api, a missing API key, "
                  "or requests the server rejects (e.g. prompts over its context length). No latency or capacity "
                  "figure of this run is meaningful.")  # fmt: skip
    return [Finding(
        "target_unreachable", "target", title, "high",
        evidence={"requests_failed": o.errors, "requests_finished": o.finished, "error_kinds": len(kinds)},
        evidence_text=text, change=change, explains=("errors", "ttft", "tpot"),
    )]  # fmt: skip


@rule("rate_limited", "gateway")
def rate_limited(ctx: Context) -> list[Finding]:
    """HTTP 429 answered at least :data:`RATE_LIMITED_SHARE` of the run's finished requests."""
    o = ctx.run
    refused = _refused(o)
    if not refused or o is None:
        return []
    target = ctx.host or "the target"
    title = f"Rate limited: {target} refused {refused} of {o.finished} requests with HTTP 429 (Too Many Requests)"
    text = [_kinds_text(o)]
    if o.retry_afters:
        text.append(f"{o.retry_afters} refusals carried Retry-After, asking for {o.retry_after_s or 0:.3g} s on average")
    else:
        text.append("no refusal carried a Retry-After header")
    text += [f"{k}: {msg}" for k, msg in o.errors_examples.items() if msg and k == _TOO_MANY]
    change = (
        "A rate limit refused the load: the server's own (per key or per minute, requests or tokens) or a gateway's in "
        "front of it. Raise that limit for the test (or use a key without one), or offer less: fewer users (-u), a "
        "lower --rate. --error-backoff (on by default) waits at least what Retry-After asks; a longer minimum (e.g. "
        "--error-backoff 1s:30s) spaces the retries further. The latencies of this run are those of the requests let "
        "through, not the server's capacity."
    )
    return [Finding(
        "rate_limited", "gateway", title, "high",
        evidence={"requests_refused": refused, "requests_finished": o.finished, "retry_afters": o.retry_afters,
                  "retry_after_s": o.retry_after_s},
        evidence_text=text, change=change, explains=("errors", "ttft", "tpot"),
    )]  # fmt: skip
