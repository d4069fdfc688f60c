"""llmload's flags: ONE table (:data:`FLAGS`) of names, defaults, environment variables and help.

Both sides are made from it, so each default is written once:

* :func:`add_arguments` adds the table to Locust's (configargparse) parser: every flag can
  also be set from the environment (``LLMLOAD_<NAME>``, e.g. ``LLMLOAD_API=openai-completions``)
  or a ``locust.conf`` file, like Locust's own; ``web_ui`` flags appear in the web UI's
  start form, ``secret`` ones are masked there;
* :func:`read` turns a parsed namespace into the plain ``{dest: value}`` mapping the frozen
  configs are validated from (:class:`~llmload.config.run.RunConfig`), a flag missing from
  the namespace taking its default from this table.

The workload profile is Locust's own ``--profile`` flag (a label grouping test runs, shown
in the web UI form and the HTML report): llmload reads it as the workload, so the run's label
is its workload. Locust leaves its default at None so that "not given" can be told apart; then
``--workload``, ``$LLMLOAD_PROFILE`` or the locustfile's default apply.

A new flag is one :class:`Flag` entry here, plus the field that reads it in ``run.py``
(or ``collect.py``/``exporter.py``/``ladder.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.jsonvalue import Json

__all__ = [
    "FLAGS",
    "OVERRIDABLE",
    "Flag",
    "add_arguments",
    "attach_negative_values",
    "defaults",
    "help_text",
    "local_master_default",
    "read",
]


@dataclass(frozen=True, slots=True)
class Flag:
    """One command-line flag. ``env`` defaults to ``LLMLOAD_<DEST>``."""

    name: str
    default: Any
    help: str
    kind: type | None = None  # argparse ``type`` (int, float); None = text
    action: str | None = None  # "store_true" | "append"
    choices: tuple[str, ...] | None = None
    web_ui: bool = True
    secret: bool = False
    metavar: str | None = None
    env: str | None = None

    @property
    def dest(self) -> str:
        return self.name[2:].replace("-", "_")

    @property
    def env_var(self) -> str:
        return self.env or "LLMLOAD_" + self.dest.upper()


_EXPORTER_HELP = (
    "Serve Prometheus /metrics on this port (master or standalone process; also at /metrics of the web UI when it "
    "runs). 0 = no dedicated port (the web UI's /metrics still answers). A busy port is an error. Default: %(default)s"
)

#: Every llmload flag, in the order ``--help`` lists them.
FLAGS: tuple[Flag, ...] = (
    Flag("--api", "openai-chat", "Endpoint adapter: openai-chat (/v1/chat/completions), openai-completions "
         "(/v1/completions), openai-responses (/v1/responses), anthropic-messages (/v1/messages), "
         "stream (POST /v1/stream gateway), openai-embeddings (/v1/embeddings) or rerank (/v1/rerank), both not "
         "streamed: docs/embeddings.md, or a plugin adapter. Default: %(default)s"),
    Flag("--inputs-per-request", 1, "openai-embeddings: texts per request; rerank: documents per request; each the "
         "size of the class's prompt (docs/embeddings.md). Default: %(default)s", kind=int),
    Flag("--model", "", "Model name sent in each request. Default: the first model listed by the server's /v1/models"),
    Flag("--workload", "", "Workload profile, same as --profile (which is Locust's own flag). A master hands it to "
         "its workers (Locust does not forward --profile)", web_ui=False),
    # The concurrency ladder (llmload.ladder).
    Flag("--ladder", "", "Concurrency ladder: user counts held one step each, e.g. 1,5,10,20,30,50 (runs the "
         "ladder shape instead of -u/-r/-t)"),
    Flag("--step-time", "5m", "How long each ladder step holds its user count. Default: %(default)s"),
    Flag("--step-warmup", "30s", "The start of each step that is not measured (spawning, queues filling). "
         "Default: %(default)s"),
    # The warm-up of a whole run (llmload.metrics.warmup_window); a ladder step's is --step-warmup.
    Flag("--warmup", "0", "Do not measure the requests that start in the run's first DURATION (e.g. 6s, 1m): they "
         "are sent and their errors shown, but left out of every statistic; the summary's warmup block compares "
         "their TTFT with the measured part's. Not with a ladder (--step-warmup). Default: none"),
    Flag("--warmup-requests", 0, "Do not measure the run's first N requests (all processes together; with "
         "--warmup, the warm-up lasts until both are past). Default: 0", kind=int),
    Flag("--stop-on-breach", False, "End the ladder at the first step that breaks the safe-concurrency limits",
         action="store_true"),
    Flag("--baseline-requests", 0, "Before the ladder, send this many requests one at a time as the single-request "
         "baseline (default 0: the first step is the baseline)", kind=int),
    Flag("--degradation", 0.5, "Safe while TTFT and TPOT p50 stay within (1 + this) x the baseline. "
         "Default: %(default)s", kind=float),
    # Service-level objectives (llmload.metrics.slo): goodput and attainment.
    Flag("--slo", "", "SLOs every request class must meet to count as a good request, in ms: any of ttft_ms, "
         "tpot_ms, e2e_ms, e.g. ttft_ms=800,tpot_ms=25,e2e_ms=30000. A profile class's own slo = {...} wins key by "
         "key. Summary: goodput and attainment per class and step; the verdict's slo. Default: none",
         metavar="KEY=MS,..."),
    Flag("--slo-attainment", 0.99, "The ladder's SLO verdict: the largest step where at least this share of the "
         "finished requests is good. Default: %(default)s", kind=float),
    Flag("--threshold", None, "Pass/fail limit of the run (k6 style), [CLASS:]FIGURE OP NUMBER, e.g. "
         "'ttft_p99_ms<800', 'error_rate<0.01', 'long:tpot_p50_ms<40'; repeatable or comma-separated, added to the "
         "profile's thresholds. Exit code 1 when one fails, 3 when one has no value (docs/ci.md)",
         action="append", web_ui=False, metavar="EXPR"),
    # Open-loop arrivals (llmload.arrivals).
    Flag("--arrival", "closed", "When requests are sent: closed (each of -u users sends its next request when the "
         "last one ended), or an open-loop process at --rate: constant, poisson, gamma (--burstiness). Open loop: "
         "-u caps the requests in flight, latencies run from the intended send time. Default: %(default)s",
         choices=("closed", "constant", "poisson", "gamma")),
    Flag("--rate", None, "Offered requests per second for the whole run, all workers together (needs an open-loop "
         "--arrival)", kind=float),
    Flag("--burstiness", 1.0, "Gamma shape of --arrival gamma: 1 = Poisson, < 1 burstier (0.25: inter-arrival CV 2), "
         "> 1 more regular. Default: %(default)s", kind=float),
    Flag("--rate-ladder", "", "Rate ladder: offered rates (requests/s) held one step each, e.g. 1,2,4,8 (needs an "
         "open-loop --arrival; --step-time, --step-warmup, --stop-on-breach as for --ladder; -u is the in-flight cap)"),
    Flag("--trace", "", "Replay a request trace (JSON Lines in the Mooncake format: timestamp ms, input_length, "
         "output_length, optional hash_ids; docs/traces.md): each entry is sent at its time, open loop (-u caps the "
         "requests in flight), equal hash_ids give identical 512-token prompt blocks. Replaces the profile; the run "
         "ends when the last entry is answered (or at --run-time). Every worker reads the file at this path",
         metavar="FILE.jsonl"),
    Flag("--trace-speedup", 1.0, "Replay --trace this many times faster (2 = half the gaps). Default: 1", kind=float),
    Flag("--trace-limit", 0, "Replay only the first N entries of --trace (0 = all). Default: 0", kind=int),
    # Where results go.
    Flag("--summary-json", "", "Write the run summary (schema llmload.summary/2, docs/summary-schema.md) to this "
         "path when the test stops", web_ui=False),
    Flag("--runs-dir", "runs", "Save each run in DIR/<UTC timestamp>-<profile>/ (summary, config, verdict, "
         "findings, engine/GPU series); `llmload report` turns it into report.html. Default: %(default)s",
         web_ui=False, metavar="DIR"),
    Flag("--no-run-dir", False, "Do not save the run directory", action="store_true", web_ui=False),
    Flag("--records-jsonl", "", "Append every request's raw record (stamps, tokens, outcome) to this JSON Lines "
         "file; workers write <stem>.worker<N><suffix> beside it", web_ui=False),
    # Locust's own statistics (its header, table, CSV, --html): one row per finished request by default.
    Flag("--locust-ttft-rows", False, "Also fire a Locust request event of type TTFT per successful request, so "
         "Locust's table, CSV and --html have TTFT rows beside the E2E ones. Its header RPS, failure ratio and "
         "Aggregated row then count every request twice", action="store_true"),
    # Requests.
    Flag("--ttft-timeout", "60s", "Fail a request with no content this long after it was sent (e.g. 30s, 2m; "
         "0 = off). Default: %(default)s"),
    Flag("--stall-timeout", "30s", "Fail a request whose next token does not come within this time (0 = off). "
         "Default: %(default)s"),
    Flag("--request-timeout", "10m", "Fail a request that takes longer than this in total (0 = off). "
         "Default: %(default)s"),
    Flag("--error-backoff", "100ms:5s", "After a failed request a user waits before its next one: MIN doubling up "
         "to MAX (random in [d/2, d]), reset by a success; a 429/503's Retry-After is honoured (up to 60 s). "
         "off = send again at once. Default: %(default)s", metavar="off|MIN[:MAX]"),
    Flag("--no-preflight", False, "Skip the network pre-flight checks before the load (a TCP connect to --host and "
         "GET /v1/models: the API key accepted, the model listed); the other checks (flags, output paths, ports) "
         "always run", action="store_true"),
    Flag("--api-key", "", "API key for the endpoint, sent the adapter's way (a bearer token; x-api-key for "
         "anthropic-messages). Default: $LLMLOAD_API_KEY, else $OPENAI_API_KEY ($ANTHROPIC_API_KEY for "
         "anthropic-messages). Never logged or written to summaries; masked in what a server echoes of it",
         secret=True),
    Flag("--max-tokens-cap", 0, "Cap every request's max_tokens at this value (0 = no cap)", kind=int),
    Flag("--seed", -1, "Seed for prompts and the mix; the same seed replays the same requests. Default: a fresh "
         "seed per run (recorded in the summary), so that prefix caches warm from an earlier run do not flatter "
         "results", kind=int),
    Flag("--no-stream-usage", False, "Do not send stream_options.include_usage (for servers that reject it); "
         "tokens are then counted from the stream", action="store_true"),
    Flag("--ignore-eos", False, "Send ignore_eos=true (vLLM, SGLang, TGI) so every answer has exactly max_tokens "
         "tokens", action="store_true"),
    Flag("--temperature", None, "Sampling temperature sent with each request (default: the server's)", kind=float),
    Flag("--extra-body", "", 'JSON object merged into every request body, e.g. \'{"top_p": 0.9}\''),
    Flag("--endpoint-path", "", "Override the adapter's endpoint path (e.g. /generate for a gateway)"),
    Flag("--stream-format", "auto", "How the response body is framed; auto = from its Content-Type. "
         "Default: %(default)s", choices=("auto", "sse", "ndjson", "raw")),
    Flag("--sse-parser", "fast", "SSE parser: fast (llmload's, default) or sseclient (sseclient-py, "
         "spec-complete reference)", choices=("fast", "sseclient"), web_ui=False),
    # Prometheus exporter (llmload.exporter): on the master or a standalone process only.
    Flag("--exporter-port", 9646, _EXPORTER_HELP, kind=int, web_ui=False),
    Flag("--exporter-host", "127.0.0.1", "Address the exporter listens on. The default keeps /metrics on this "
         "machine; 0.0.0.0 opens it on every interface, for a Prometheus on another host, pod or container "
         "(docker-compose.yml and deploy/kubernetes set it). Default: %(default)s", web_ui=False),
    Flag("--exporter-linger", "0", "After the run ends, keep serving /metrics this long before exiting (e.g. 15s, "
         "at least your scrape interval) so that Prometheus scrapes the final counts. Default: 0 (exit at once)",
         web_ui=False),
    # Who may reach the web UI (llmload.web.auth).
    Flag("--web-auth", "", "Require this user and password (HTTP basic auth) on every route of the web UI, "
         "/metrics and /llmload/live included, e.g. --web-auth admin:s3cret (or $LLMLOAD_WEB_AUTH). Replaces "
         "Locust's removed --web-auth; its --web-login needs a login handler of your own", web_ui=False, secret=True,
         metavar="USER:PASSWORD"),
    Flag("--no-exporter", False, "Turn the Prometheus exporter off: no listener and no /metrics route",
         action="store_true", web_ui=False),
    # Engine and GPU metrics polled during the run (llmload.collect): master or standalone only.
    Flag("--engine-metrics", None, "Poll this engine /metrics during the run (vLLM, SGLang, TGI, llama.cpp; "
         "auto-detected), e.g. http://vllm:8000/metrics. Repeat the flag or give a comma-separated list for "
         'several. Summary: "server"; unreachable endpoints are reported, never fatal',
         action="append", web_ui=False, metavar="URL"),
    Flag("--gpu-metrics", None, "Poll this GPU exporter during the run: llmload gpu-sidecar (:9401), "
         "dcgm-exporter (:9400), nvidia_gpu_exporter or the simulator. Repeatable or comma-separated. "
         'Summary: "gpu"', action="append", web_ui=False, metavar="URL"),
    Flag("--collect-interval", "2s", "How often engine and GPU metrics are polled. Default: %(default)s",
         web_ui=False),
    Flag("--prometheus-url", "", "Read the same engine and GPU signals from this Prometheus server (instant "
         "queries every --collect-interval) instead of polling the endpoints, e.g. http://prometheus:9090",
         web_ui=False, metavar="URL"),
    Flag("--prometheus-selector", "", "With --prometheus-url: label matchers narrowing the engine series, e.g. "
         '\'job="vllm",namespace="llm"\'', web_ui=False, metavar="MATCHERS"),
    Flag("--prometheus-gpu-selector", "", "With --prometheus-url: label matchers narrowing the GPU series, e.g. "
         "'Hostname=\"gpu-node-7\"'", web_ui=False, metavar="MATCHERS"),
    Flag("--timeseries-json", "", "Write the polled engine/GPU series here (schema llmload.timeseries/1). "
         "Default: beside --summary-json as <stem>.timeseries.json; the summary records the path",
         web_ui=False, metavar="PATH"),
)  # fmt: skip

#: Flags whose default a locustfile may change: ``llmload.plugin.activate(events, api=...)``
#: (``profile`` sets the default of Locust's ``--profile`` as llmload reads it).
OVERRIDABLE = ("api", "profile", "ladder")
#: Values read beside the flags: Locust's ``--profile`` and ``-u`` (a rate ladder's in-flight cap), and the
#: profile used when none is given.
_EXTRA = {"profile": None, "llmload_default_profile": "default", "num_users": None}  # num_users: Locust's -u
_BY_DEST = {f.dest: f for f in FLAGS}


def defaults() -> dict[str, Json]:
    """``{dest: default}`` of every flag (and of the values read beside them)."""
    return {**{f.dest: f.default for f in FLAGS}, **_EXTRA}


def add_arguments(parser: Any, overrides: Mapping[str, Any] | None = None) -> None:
    """Add :data:`FLAGS` to Locust's parser; ``overrides`` change the defaults in :data:`OVERRIDABLE`."""
    over = dict(overrides or {})
    unknown = sorted(set(over) - set(OVERRIDABLE))
    if unknown:
        raise TypeError(f"llmload.plugin.activate: no overridable default {', '.join(unknown)} ({', '.join(OVERRIDABLE)})")
    parser.set_defaults(
        llmload_default_profile=os.environ.get("LLMLOAD_PROFILE") or over.get("profile") or _EXTRA["llmload_default_profile"]
    )
    # Added to the parser itself, not to a group: only Locust's parser understands
    # include_in_web_ui / is_secret (argparse groups do not).
    for name in _REPLACED:
        _drop_flag(parser, name)
    for f in FLAGS:
        default = over.get(f.dest, f.default)
        kw: dict[str, Any] = {"default": default, "env_var": f.env_var, "help": help_text(f.help, default)}
        if f.action:
            kw["action"] = f.action
        if f.kind is not None:
            kw["type"] = f.kind
        if f.choices is not None:
            kw["choices"] = list(f.choices)
        if f.metavar:
            kw["metavar"] = f.metavar
        if not f.web_ui:
            kw["include_in_web_ui"] = False
        if f.secret:
            kw["is_secret"] = True
        parser.add_argument(f.name, **kw)


def help_text(text: str, default: Any) -> str:
    """``text`` with ``%(default)s`` written in: Locust's start form shows a flag's help as it is, where
    argparse's ``--help`` would fill it in (a ``%`` of the default is escaped for argparse)."""
    return text.replace("%(default)s", str(default).replace("%", "%%"))


#: Locust flags that only say they were removed; llmload's table implements them again.
_REPLACED = ("--web-auth",)


def _drop_flag(parser: Any, name: str) -> None:
    """Remove Locust's ``name`` from ``parser`` (argparse has no public way: its private lists)."""
    action = getattr(parser, "_option_string_actions", {}).get(name)
    if action is None:
        return
    parser._remove_action(action)
    for group in getattr(parser, "_action_groups", ()):
        if action in group._group_actions:
            group._group_actions.remove(action)
    for option in action.option_strings:
        parser._option_string_actions.pop(option, None)


def local_master_default(parser: Any, argv: list[str], environ: Mapping[str, str]) -> bool:
    """Under ``--processes`` every worker is local: the master's default bind address becomes 127.0.0.1,
    and the workers' default ``--master-port`` becomes the ``--master-bind-port`` given.

    Locust's default bind address is ``*`` (every interface), and the API key travels to workers
    over it. Locust's forked workers connect to ``--master-port`` (5557 unless given), not to the
    port the master binds, so ``--master-bind-port`` alone left them unconnected. Only defaults
    change: ``--master-bind-host``/``--master-port`` on the command line, in the environment or
    in a config file still win. Returns whether the defaults were changed.
    """
    if not (_argv_value(argv, "--processes") is not None or environ.get("LOCUST_PROCESSES")):
        return False
    parser.set_defaults(master_bind_host="127.0.0.1")
    bind_port = _argv_value(argv, "--master-bind-port") or environ.get("LOCUST_MASTER_BIND_PORT")
    if bind_port and bind_port.isdigit():
        parser.set_defaults(master_port=int(bind_port))
    return True


def _argv_value(argv: list[str], name: str) -> str | None:
    """The value of ``name`` in ``argv`` (``NAME V`` or ``NAME=V``; the last one wins), else None."""
    value = None
    for i, a in enumerate(argv):
        if a == name:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        elif a.startswith(name + "="):
            value = a[len(name) + 1 :]
    return value


#: What a negative value looks like (``-5s``, ``-1e3``, ``-.5``); no option name starts so.
_NEGATIVE = re.compile(r"-\.?\d")


def attach_negative_values(argv: list[str]) -> list[str]:
    """``argv`` with each llmload flag that takes a value written ``--flag=VALUE`` when VALUE looks negative.

    argparse takes ``-5s`` (or ``-1e3``) after ``--ttft-timeout`` for an option, not a negative number, and
    says "expected one argument"; written ``--ttft-timeout=-5s`` the value reaches llmload's own check
    (one error line: "must be a duration >= 0"). Only values that start with ``-`` and a digit are joined,
    so a forgotten value (``--model -u 5``) is still argparse's error; nothing after ``--`` changes.
    """
    takes_value = {f.name for f in FLAGS if f.action != "store_true"}
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return out + argv[i:]
        if a in takes_value and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def read(namespace: Any) -> dict[str, Json]:
    """``{dest: value}`` of every flag from a parsed namespace (or None); absent ones get their table default."""
    return {dest: getattr(namespace, dest, default) for dest, default in defaults().items()}


def flag(dest: str) -> Flag:
    """The table entry of ``dest`` (KeyError for a name that is not a flag)."""
    return _BY_DEST[dest]
