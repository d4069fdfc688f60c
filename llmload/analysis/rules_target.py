"""The rule that comes before every other: the target answers nothing but errors.

When nearly every request of the run fails (:data:`FAILING_SHARE` of the finished ones),
no latency and no saturation figure means anything: the client may even have run hot
sending failures (before error backoff: 17 037 attempts in 5 s against a closed port, and a
"load generator saturated" verdict). The finding names the target, the error kinds and the
server's own messages (one example per kind), and ranks first (:mod:`.diagnose`).
"""

from __future__ import annotations

from llmload.analysis.findings import Context, rule
from llmload.results.judgement import Finding

__all__ = ["FAILING_SHARE", "MIN_FINISHED", "target_unreachable"]

#: This share of the finished requests failing, or more: every request fails.
FAILING_SHARE = 0.95
#: Below this many finished requests there is nothing to judge.
MIN_FINISHED = 2
_CONNECT = ("connection",)


@rule("target_unreachable", "target")
def target_unreachable(ctx: Context) -> list[Finding]:
    """Errors are at least :data:`FAILING_SHARE` of the run's finished requests."""
    o = ctx.run
    if o is None or o.finished < MIN_FINISHED or o.errors < FAILING_SHARE * o.finished:
        return []
    target = ctx.host or "the target"
    kinds = dict(sorted(o.errors_by_kind.items(), key=lambda kv: -kv[1]))
    unreachable = set(kinds) <= set(_CONNECT)
    title = "Target unreachable / every request fails: " + (
        f"no connection to {target}" if unreachable else f"{target} answers {', '.join(list(kinds)[:3])}"
    )
    text = [f"{o.errors} of {o.finished} finished requests failed ({o.ok} ok): "
            + ", ".join(f"{k} {n}" for k, n in kinds.items())]  # fmt: skip
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
