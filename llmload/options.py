"""llmload's command-line flags, added to Locust's own parser.

Every flag can also be set from the environment (``LLMLOAD_<NAME>``, e.g.
``LLMLOAD_API=openai-completions``) or a ``locust.conf`` file, like Locust's flags. The
flags shown in the web UI's start form are marked ``include_in_web_ui``. The workload
profile is Locust's own ``--profile`` flag (``LLMLOAD_PROFILE`` sets its default). Values are
validated once into a frozen :class:`llmload.config.RunConfig`; no other module reads
``parsed_options``.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["add_arguments"]

#: Defaults a locustfile may override through ``llmload.plugin.activate(events, api=...)``.
DEFAULTS: dict[str, Any] = {"api": "openai-chat", "profile": "default", "ladder": ""}


def add_arguments(parser: Any, defaults: dict[str, Any] | None = None) -> None:
    """Add the llmload flag group to Locust's (configargparse) parser."""
    d = {**DEFAULTS, **(defaults or {})}
    # The workload profile is Locust's own ``--profile`` (a label that groups test runs,
    # shown in the web UI form and the HTML report): llmload reads it as the workload
    # profile name or path, so the run's label is its workload. Its default is left to
    # Locust (None) so that llmload can tell "not given" (then --workload,
    # $LLMLOAD_PROFILE, or the locustfile's default apply).
    parser.set_defaults(llmload_default_profile=os.environ.get("LLMLOAD_PROFILE") or d["profile"])
    # Added to the parser itself, not to a group: only Locust's parser understands
    # include_in_web_ui / is_secret (argparse groups do not).
    g = parser
    g.add_argument(
        "--api",
        default=d["api"],
        env_var="LLMLOAD_API",
        help="Endpoint adapter: openai-chat (/v1/chat/completions), openai-completions (/v1/completions), "
        "openai-responses (/v1/responses), anthropic-messages (/v1/messages), "
        "stream (POST /v1/stream gateway), or a plugin adapter. Default: %(default)s",
    )
    g.add_argument(
        "--model",
        default="",
        env_var="LLMLOAD_MODEL",
        help="Model name sent in each request. Default: the first model listed by the server's /v1/models",
    )
    g.add_argument(
        "--workload",
        default="",
        env_var="LLMLOAD_WORKLOAD",
        include_in_web_ui=False,
        help="Workload profile, same as --profile (which is Locust's own flag). A master hands it to its "
        "workers (Locust does not forward --profile)",
    )
    g.add_argument(
        "--ladder",
        default=d["ladder"],
        env_var="LLMLOAD_LADDER",
        help="Concurrency ladder: user counts held one step each, e.g. 1,5,10,20,30,50 (runs the ladder "
        "shape instead of -u/-r/-t)",
    )
    g.add_argument(
        "--step-time",
        default="5m",
        env_var="LLMLOAD_STEP_TIME",
        help="How long each ladder step holds its user count. Default: %(default)s",
    )
    g.add_argument(
        "--step-warmup",
        default="30s",
        env_var="LLMLOAD_STEP_WARMUP",
        help="The start of each step that is not measured (spawning, queues filling). Default: %(default)s",
    )
    g.add_argument(
        "--stop-on-breach",
        action="store_true",
        default=False,
        env_var="LLMLOAD_STOP_ON_BREACH",
        help="End the ladder at the first step that breaks the safe-concurrency limits",
    )
    g.add_argument(
        "--baseline-requests",
        type=int,
        default=0,
        env_var="LLMLOAD_BASELINE_REQUESTS",
        help="Before the ladder, send this many requests one at a time as the single-request baseline "
        "(default 0: the first step is the baseline)",
    )
    g.add_argument(
        "--degradation",
        type=float,
        default=0.5,
        env_var="LLMLOAD_DEGRADATION",
        help="Safe while TTFT and TPOT p50 stay within (1 + this) x the baseline. Default: %(default)s",
    )
    g.add_argument(
        "--summary-json",
        default="",
        env_var="LLMLOAD_SUMMARY_JSON",
        include_in_web_ui=False,
        help="Write the run summary (schema llmload.summary/2, docs/summary-schema.md) to this path when the test stops",
    )
    g.add_argument(
        "--runs-dir",
        default="runs",
        metavar="DIR",
        env_var="LLMLOAD_RUNS_DIR",
        include_in_web_ui=False,
        help="Save each run in DIR/<UTC timestamp>-<profile>/ (summary, config, verdict, findings, engine/GPU "
        "series); `llmload report` turns it into report.html. Default: %(default)s",
    )
    g.add_argument(
        "--no-run-dir",
        action="store_true",
        default=False,
        env_var="LLMLOAD_NO_RUN_DIR",
        include_in_web_ui=False,
        help="Do not save the run directory",
    )
    g.add_argument(
        "--records-jsonl",
        default="",
        env_var="LLMLOAD_RECORDS_JSONL",
        include_in_web_ui=False,
        help="Append every request's raw record (stamps, tokens, outcome) to this JSON Lines file; "
        "workers write <stem>.worker<N><suffix> beside it",
    )
    g.add_argument(
        "--ttft-timeout",
        default="60s",
        env_var="LLMLOAD_TTFT_TIMEOUT",
        help="Fail a request with no content this long after it was sent (e.g. 30s, 2m; 0 = off). Default: %(default)s",
    )
    g.add_argument(
        "--stall-timeout",
        default="30s",
        env_var="LLMLOAD_STALL_TIMEOUT",
        help="Fail a request whose next token does not come within this time (0 = off). Default: %(default)s",
    )
    g.add_argument(
        "--request-timeout",
        default="10m",
        env_var="LLMLOAD_REQUEST_TIMEOUT",
        help="Fail a request that takes longer than this in total (0 = off). Default: %(default)s",
    )
    g.add_argument(
        "--api-key",
        default="",
        env_var="OPENAI_API_KEY",
        is_secret=True,
        help="API key for the endpoint, sent the adapter's way (a bearer token; x-api-key for anthropic-messages). "
        "Default: $OPENAI_API_KEY ($ANTHROPIC_API_KEY for anthropic-messages). Never logged or written to summaries",
    )
    g.add_argument(
        "--max-tokens-cap",
        type=int,
        default=0,
        env_var="LLMLOAD_MAX_TOKENS_CAP",
        help="Cap every request's max_tokens at this value (0 = no cap)",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=-1,
        env_var="LLMLOAD_SEED",
        help="Seed for prompts and the mix; the same seed replays the same requests. "
        "Default: a fresh seed per run (recorded in the summary), so that prefix caches warm from "
        "an earlier run do not flatter results",
    )
    g.add_argument(
        "--no-stream-usage",
        action="store_true",
        default=False,
        env_var="LLMLOAD_NO_STREAM_USAGE",
        help="Do not send stream_options.include_usage (for servers that reject it); tokens are then counted "
        "from the stream",
    )
    g.add_argument(
        "--ignore-eos",
        action="store_true",
        default=False,
        env_var="LLMLOAD_IGNORE_EOS",
        help="Send ignore_eos=true (vLLM, SGLang, TGI) so every answer has exactly max_tokens tokens",
    )
    g.add_argument(
        "--temperature",
        type=float,
        default=None,
        env_var="LLMLOAD_TEMPERATURE",
        help="Sampling temperature sent with each request (default: the server's)",
    )
    g.add_argument(
        "--extra-body",
        default="",
        env_var="LLMLOAD_EXTRA_BODY",
        help='JSON object merged into every request body, e.g. \'{"top_p": 0.9}\'',
    )
    g.add_argument(
        "--endpoint-path",
        default="",
        env_var="LLMLOAD_ENDPOINT_PATH",
        help="Override the adapter's endpoint path (e.g. /generate for a gateway)",
    )
    g.add_argument(
        "--stream-format",
        default="auto",
        choices=["auto", "sse", "ndjson", "raw"],
        env_var="LLMLOAD_STREAM_FORMAT",
        help="How the response body is framed; auto = from its Content-Type. Default: %(default)s",
    )
    g.add_argument(
        "--sse-parser",
        default="fast",
        choices=["fast", "sseclient"],
        env_var="LLMLOAD_SSE_PARSER",
        include_in_web_ui=False,
        help="SSE parser: fast (llmload's, default) or sseclient (sseclient-py, spec-complete reference)",
    )
    # Prometheus exporter (llmload.exporter): on the master or a standalone process only.
    g.add_argument(
        "--exporter-port",
        type=int,
        default=9646,
        env_var="LLMLOAD_EXPORTER_PORT",
        include_in_web_ui=False,
        help="Serve Prometheus /metrics on this port (master or standalone process; also at /metrics of "
        "the web UI when it runs). 0 = no dedicated port (the web UI's /metrics still answers). A busy "
        "port is an error. Default: %(default)s",
    )
    g.add_argument(
        "--exporter-host",
        default="0.0.0.0",
        env_var="LLMLOAD_EXPORTER_HOST",
        include_in_web_ui=False,
        help="Address the exporter listens on. The default 0.0.0.0 exposes /metrics on every interface "
        "(what a Prometheus on another host or pod needs); use 127.0.0.1 to keep it local. Default: %(default)s",
    )
    g.add_argument(
        "--exporter-linger",
        default="0",
        env_var="LLMLOAD_EXPORTER_LINGER",
        include_in_web_ui=False,
        help="After the run ends, keep serving /metrics this long before exiting (e.g. 15s, at least your "
        "scrape interval) so that Prometheus scrapes the final counts. Default: 0 (exit at once)",
    )
    g.add_argument(
        "--no-exporter",
        action="store_true",
        default=False,
        env_var="LLMLOAD_NO_EXPORTER",
        include_in_web_ui=False,
        help="Turn the Prometheus exporter off: no listener and no /metrics route",
    )
    # Engine and GPU metrics polled during the run (llmload.collect): master or standalone only.
    g.add_argument(
        "--engine-metrics",
        action="append",
        default=None,
        metavar="URL",
        env_var="LLMLOAD_ENGINE_METRICS",
        include_in_web_ui=False,
        help="Poll this engine /metrics during the run (vLLM, SGLang, TGI, llama.cpp; auto-detected), e.g. "
        "http://vllm:8000/metrics. Repeat the flag or give a comma-separated list for several. Summary: "
        '"server"; unreachable endpoints are reported, never fatal',
    )
    g.add_argument(
        "--gpu-metrics",
        action="append",
        default=None,
        metavar="URL",
        env_var="LLMLOAD_GPU_METRICS",
        include_in_web_ui=False,
        help="Poll this GPU exporter during the run: llmload gpu-sidecar (:9401), dcgm-exporter (:9400), "
        'nvidia_gpu_exporter or the simulator. Repeatable or comma-separated. Summary: "gpu"',
    )
    g.add_argument(
        "--collect-interval",
        default="2s",
        env_var="LLMLOAD_COLLECT_INTERVAL",
        include_in_web_ui=False,
        help="How often engine and GPU metrics are polled. Default: %(default)s",
    )
    g.add_argument(
        "--prometheus-url",
        default="",
        metavar="URL",
        env_var="LLMLOAD_PROMETHEUS_URL",
        include_in_web_ui=False,
        help="Read the same engine and GPU signals from this Prometheus server (instant queries every "
        "--collect-interval) instead of polling the endpoints, e.g. http://prometheus:9090",
    )
    g.add_argument(
        "--prometheus-selector",
        default="",
        metavar="MATCHERS",
        env_var="LLMLOAD_PROMETHEUS_SELECTOR",
        include_in_web_ui=False,
        help='With --prometheus-url: label matchers narrowing the engine series, e.g. \'job="vllm",namespace="llm"\'',
    )
    g.add_argument(
        "--prometheus-gpu-selector",
        default="",
        metavar="MATCHERS",
        env_var="LLMLOAD_PROMETHEUS_GPU_SELECTOR",
        include_in_web_ui=False,
        help="With --prometheus-url: label matchers narrowing the GPU series, e.g. 'Hostname=\"gpu-node-7\"'",
    )
    g.add_argument(
        "--timeseries-json",
        default="",
        metavar="PATH",
        env_var="LLMLOAD_TIMESERIES_JSON",
        include_in_web_ui=False,
        help="Write the polled engine/GPU series here (schema llmload.timeseries/1). Default: beside "
        "--summary-json as <stem>.timeseries.json; the summary records the path",
    )
