"""The run configuration: built and validated once from the flags' values, frozen.

Components take a :class:`RunConfig` (or the part of it they need), never Locust's
``parsed_options``. Every problem is a :class:`~llmload.errors.ConfigError` whose message is
one line saying what is wrong, where, and how to fix it.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.adapters.base import AdapterConfig
from llmload.config.arrival import ArrivalConfig
from llmload.config.backoff import BackoffSpec
from llmload.config.collect import CollectConfig
from llmload.config.exporter import ExporterConfig
from llmload.config.flags import defaults, flag
from llmload.config.ladder import LadderConfig
from llmload.config.values import parse_duration, parse_json_object, parse_number, parse_web_auth
from llmload.config.warmup import WarmupConfig
from llmload.errors import ConfigError
from llmload.jsonvalue import Json
from llmload.metrics.slo import SLO, parse_slo_text
from llmload.metrics.thresholds import Threshold, parse_thresholds

__all__ = ["RunConfig"]


def _degradation(value: Any) -> float:
    d = parse_number(value, float, "--degradation")
    if d is None or not 0 < d <= 10:
        raise ConfigError(f"--degradation {d}: must be > 0 (0.5 = 50 % worse than the baseline)")
    return float(d)


def _slo_attainment(value: Any) -> float:
    a = parse_number(value, float, "--slo-attainment")
    if a is None:
        return 0.99
    if not 0 < a <= 1:
        raise ConfigError(f"--slo-attainment {value}: must be a share in (0, 1], e.g. 0.99 (99 % of requests good)")
    return float(a)


def _workload(v: Mapping[str, Any], worker: bool) -> str:
    """``--profile`` (Locust's flag, the web UI form field) or ``--workload``; a worker prefers ``--workload``."""
    chosen = (v["workload"], v["profile"]) if worker else (v["profile"], v["workload"])
    return str(next((c for c in chosen if c), None) or v["llmload_default_profile"] or defaults()["llmload_default_profile"])


def _api_key(given: str, api: str) -> str:
    """The key sent: the one given (``--api-key``, else ``$LLMLOAD_API_KEY``: Locust fills the flag from it),
    else the API's own variable (``$OPENAI_API_KEY``; ``$ANTHROPIC_API_KEY`` for anthropic-messages).

    The one place of this rule: an API's variable is read for that API only, so an OpenAI key
    never goes to another API's endpoint unless given (every caller builds its key here).
    """
    from llmload.adapters import api_key_env_of, get_adapter_class

    return given or os.environ.get(api_key_env_of(get_adapter_class(api)), "")


def _seed(value: Any) -> int:
    seed = parse_number(value, int, "--seed")
    if seed is None or seed < 0:
        seed = random.SystemRandom().randrange(1, 2**31)  # a fresh seed per run (see --seed's help)
    return int(seed)


def _error_backoff(value: Any) -> BackoffSpec:
    text = str(value if value is not None else "").strip() or "off"
    try:
        return BackoffSpec.parse(text, lambda t: _positive_duration(t, text))
    except ValueError as e:
        raise ConfigError(f"--error-backoff {text}: {e}; e.g. --error-backoff 100ms:5s, or off") from None


def _positive_duration(part: str, whole: str) -> float:
    seconds = parse_duration(part, "--error-backoff")
    if seconds is None:
        raise ConfigError(f"--error-backoff {whole}: {part or 'an empty bound'} is not a duration > 0; "
                          "e.g. --error-backoff 100ms:5s, or off")  # fmt: skip
    return seconds
def _arrival(v: Mapping[str, Any], worker: bool) -> ArrivalConfig:
    arrival = ArrivalConfig.from_values(v)
    if arrival.trace is not None and v["profile"] and not worker:  # a worker's profile is the master's forward
        raise ConfigError(f"--profile {v['profile']} with --trace: the trace replaces the profile (its entries say "
                          "what to send); drop one")  # fmt: skip
    if arrival.trace is not None and v["ladder"]:
        raise ConfigError("--ladder with --trace: a trace replay sends the trace's load; run it at one -u "
                          "(the in-flight cap) and compare speedups (--trace-speedup) run by run")  # fmt: skip
    if arrival.open_loop and v["ladder"] and not arrival.rate_levels:
        raise ConfigError("--ladder with an open-loop --arrival: a concurrency ladder steps users; for offered rates "
                          "use --rate-ladder 1,2,4,8 (-u is then the in-flight cap)")  # fmt: skip
    return arrival


@dataclass(frozen=True, slots=True)
class RunConfig:
    api: str
    adapter: AdapterConfig
    profile: str
    seed: int
    max_tokens_cap: int | None
    ttft_timeout: float | None
    stall_timeout: float | None
    request_timeout: float | None
    sse_parser: str
    summary_json: str
    records_jsonl: str
    model_auto: bool  # --model not given: ask the server's /v1/models
    ladder: LadderConfig | None = None
    degradation: float = flag("degradation").default
    api_key: str = field(default="", repr=False)
    collect: CollectConfig = field(default_factory=CollectConfig)  # engine / GPU metrics polled during the run
    exporter: ExporterConfig = field(default_factory=ExporterConfig)  # /metrics (master or standalone)
    runs_dir: str = flag("runs_dir").default  # where the run directory goes; "" = none (--no-run-dir)
    slo: SLO | None = flag("slo").default or None  # --slo: every class's SLOs (a profile class's own win key by key)
    slo_attainment: float = flag("slo_attainment").default
    error_backoff: BackoffSpec = field(default_factory=BackoffSpec)  # the wait after a failed request
    preflight: bool = True  # the network checks before the load (--no-preflight: off)
    timeseries_json: str = ""  # --timeseries-json (an output path the pre-flight checks)
    arrival: ArrivalConfig = field(default_factory=ArrivalConfig)  # closed loop, or an open-loop process at a rate
    locust_ttft_rows: bool = False  # --locust-ttft-rows: a second Locust request event (type TTFT) per success
    web_auth: tuple[str, str] | None = field(default=None, repr=False)  # --web-auth: checked under --headless too
    thresholds: tuple[Threshold, ...] = ()  # --threshold: the run's pass/fail limits (with the profile's)
    warmup: WarmupConfig = field(default_factory=WarmupConfig)  # --warmup / --warmup-requests: not measured

    def public_dict(self) -> dict[str, Json]:
        """What a summary may record: everything except secrets."""
        return {
            "api": self.api,
            "model": self.adapter.model,
            "profile": self.profile,
            "seed": self.seed,
            "max_tokens_cap": self.max_tokens_cap,
            "ttft_timeout_s": self.ttft_timeout,
            "stall_timeout_s": self.stall_timeout,
            "request_timeout_s": self.request_timeout,
            "stream_usage": self.adapter.include_usage,
            "ignore_eos": self.adapter.ignore_eos,
            "endpoint_path": self.adapter.path,
            "stream_format": self.adapter.stream_format,
            "api_key_set": bool(self.api_key),
            "ladder": self.ladder.public_dict() if self.ladder is not None else None,
            "degradation": self.degradation,
            "collect": self.collect.public_dict(),
            "slo": self.slo.to_dict() if self.slo is not None else None,
            "slo_attainment": self.slo_attainment,
            "error_backoff_s": [self.error_backoff.min_s, self.error_backoff.max_s] if self.error_backoff.on else None,
            **({"arrival": self.arrival.public_dict()} if self.arrival.open_loop else {}),  # closed loop: as before
            **({"thresholds": [t.expr for t in self.thresholds]} if self.thresholds else {}),
            **({"warmup": self.warmup.public_dict()} if self.warmup.on else {}),  # none: as before
        }

    @classmethod
    def from_values(cls, values: Mapping[str, Any], *, worker: bool = False) -> RunConfig:
        """Validate the flags' values (:func:`llmload.config.flags.read`; a missing key takes its flag's default).

        A ``--seed`` below 0 (the default) draws a fresh seed.
        """
        from llmload.adapters import available_adapters

        v = {**defaults(), **values}
        api = v["api"]
        if api not in available_adapters():
            raise ConfigError(f"--api {api!r}: unknown endpoint adapter; choose one of {', '.join(available_adapters())}")
        extra = parse_json_object(v["extra_body"], "--extra-body")
        cap = parse_number(v["max_tokens_cap"], int, "--max-tokens-cap") or 0
        if cap < 0:
            raise ConfigError(f"--max-tokens-cap {cap}: must be >= 1 (or 0 for no cap)")
        path = v["endpoint_path"] or None
        if path is not None and not path.startswith("/"):
            raise ConfigError(f"--endpoint-path {path!r}: must start with '/', e.g. /v1/stream")
        temperature = parse_number(v["temperature"], float, "--temperature")
        if temperature is not None and not (0 <= temperature <= 10):
            raise ConfigError(f"--temperature {temperature}: must be between 0 and 10")
        model = v["model"] or ""
        batch = parse_number(v.get("inputs_per_request"), int, "--inputs-per-request")
        batch = 1 if batch is None else batch
        if batch < 1:
            raise ConfigError(f"--inputs-per-request {batch}: must be >= 1")
        adapter = AdapterConfig(
            model=model or "default",
            path=path,
            include_usage=not v["no_stream_usage"],
            ignore_eos=bool(v["ignore_eos"]),
            temperature=temperature,
            stream_format=v["stream_format"] or flag("stream_format").default,
            extra_body=extra,
            batch=batch,
        )
        return cls(
            api=api,
            adapter=adapter,
            profile=_workload(v, worker),
            seed=_seed(v["seed"]),
            max_tokens_cap=cap or None,
            ttft_timeout=parse_duration(v["ttft_timeout"], "--ttft-timeout"),
            stall_timeout=parse_duration(v["stall_timeout"], "--stall-timeout"),
            request_timeout=parse_duration(v["request_timeout"], "--request-timeout"),
            sse_parser=v["sse_parser"] or flag("sse_parser").default,
            summary_json=v["summary_json"] or "",
            records_jsonl=v["records_jsonl"] or "",
            model_auto=not model,
            api_key=_api_key(v["api_key"] or "", api),
            ladder=LadderConfig.from_values(v),
            degradation=_degradation(v["degradation"]),
            collect=CollectConfig.from_values(v),
            exporter=ExporterConfig.from_values(v),
            runs_dir="" if v["no_run_dir"] else str(v["runs_dir"] or ""),
            slo=parse_slo_text(v["slo"]),
            slo_attainment=_slo_attainment(v["slo_attainment"]),
            error_backoff=_error_backoff(v["error_backoff"]),
            preflight=not v["no_preflight"],
            timeseries_json=str(v["timeseries_json"] or ""),
            arrival=_arrival(v, worker),
            locust_ttft_rows=bool(v["locust_ttft_rows"]),
            web_auth=parse_web_auth(v["web_auth"]),
            thresholds=parse_thresholds(v["threshold"]),
            warmup=WarmupConfig.from_values(v),
        )
