"""The run configuration: built and validated once from the parsed options.

Components take a :class:`RunConfig` (frozen), never Locust's ``parsed_options``.
Every problem is a :class:`~llmload.errors.ConfigError` whose message is one line saying
what is wrong, where, and how to fix it.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmload.adapters.base import DEFAULT_API_KEY_ENV, AdapterConfig
from llmload.collect.config import CollectConfig
from llmload.errors import ConfigError
from llmload.shapes.ladder import LadderPlan, parse_ladder

__all__ = ["RunConfig", "parse_duration"]


def parse_duration(value: str | float | int | None, flag: str) -> float | None:
    """``"30s"``, ``"2m"``, ``"1h30m"``, ``"1.5"`` (seconds) → seconds; ``0``/empty → None (off)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = value.strip().lower()
        try:
            seconds = float(text)
        except ValueError:
            seconds = _parse_units(text, flag)
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{flag} {value!r}: must be a duration >= 0 such as 30s, 2m or 1h30m")
    return seconds or None


def _ladder(get: Any) -> LadderPlan | None:
    text = get("ladder", "") or ""
    if not text:
        return None
    baseline = _number(get("baseline_requests", 0), int, "--baseline-requests") or 0
    if baseline < 0:
        raise ConfigError(f"--baseline-requests {baseline}: must be >= 0")
    return LadderPlan(
        levels=parse_ladder(str(text)),
        step_s=parse_duration(get("step_time", "5m"), "--step-time") or 0.0,
        warmup_s=parse_duration(get("step_warmup", "30s"), "--step-warmup") or 0.0,
        stop_on_breach=bool(get("stop_on_breach", False)),
        baseline_requests=baseline,
    )


def _degradation(get: Any) -> float:
    d = _number(get("degradation", 0.5), float, "--degradation")
    if d is None or not 0 < d <= 10:
        raise ConfigError(f"--degradation {d}: must be > 0 (0.5 = 50 % worse than the baseline)")
    return float(d)


def _plan_dict(plan: LadderPlan | None) -> dict[str, Any] | None:
    if plan is None:
        return None
    return {
        "levels": list(plan.levels),
        "step_s": plan.step_s,
        "warmup_s": plan.warmup_s,
        "stop_on_breach": plan.stop_on_breach,
        "baseline_requests": plan.baseline_requests,
    }


def _number(value: Any, kind: type, flag: str) -> Any:
    """A numeric option; the web UI's start form hands over text (\"\" = not set)."""
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: must be a{'n integer' if kind is int else ' number'}") from None


def _api_key(given: str, api: str) -> str:
    """``--api-key``, else the adapter's own variable (``$OPENAI_API_KEY``, ``$ANTHROPIC_API_KEY``).

    Locust fills the flag from ``$OPENAI_API_KEY``; for an adapter whose key lives in
    another variable, a value equal to ``$OPENAI_API_KEY`` is that default, not a choice,
    so an OpenAI key is never sent to another API's endpoint unless given as another value.
    """
    from llmload.adapters import api_key_env_of, get_adapter_class

    env = api_key_env_of(get_adapter_class(api))
    if env != DEFAULT_API_KEY_ENV and given == os.environ.get(DEFAULT_API_KEY_ENV, ""):
        given = ""
    return given or os.environ.get(env, "")


def _workload(get: Any, worker: bool) -> str:
    chosen = (get("workload"), get("profile")) if worker else (get("profile"), get("workload"))
    return next((c for c in chosen if c), None) or get("llmload_default_profile") or "default"


def _parse_units(text: str, flag: str) -> float:
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    total, num = 0.0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            num += ch
            i += 1
            continue
        unit = "ms" if text.startswith("ms", i) else ch
        if unit not in units or not num:
            raise ConfigError(f"{flag} {text!r}: must be a duration such as 30s, 2m, 1h30m or 250ms")
        total += float(num) * units[unit]
        num = ""
        i += len(unit)
    if num:
        raise ConfigError(f"{flag} {text!r}: a number needs a unit (s, m, h, ms), e.g. {num}s")
    return total


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
    ladder: LadderPlan | None = None
    degradation: float = 0.5
    api_key: str = field(default="", repr=False)
    collect: CollectConfig = field(default_factory=CollectConfig)  # engine / GPU metrics polled during the run
    runs_dir: str = "runs"  # where the run directory goes; "" = none (--no-run-dir)

    def public_dict(self) -> dict[str, Any]:
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
            "ladder": _plan_dict(self.ladder),
            "degradation": self.degradation,
            "collect": self.collect.public_dict(),
        }

    @classmethod
    def from_options(cls, opts: Any, *, seed: int | None = None, worker: bool = False) -> RunConfig:
        """Validate Locust's parsed options (ours are read with their flag defaults if absent).

        The workload profile is ``--profile`` (Locust's flag, also the web UI form field) or
        ``--workload``; a worker prefers ``--workload``, which its master forwards to it.
        """
        from llmload.adapters import available_adapters

        get = lambda name, default=None: getattr(opts, name, default)  # noqa: E731
        api = get("api", "openai-chat")
        if api not in available_adapters():
            raise ConfigError(f"--api {api!r}: unknown endpoint adapter; choose one of {', '.join(available_adapters())}")
        extra_raw = get("extra_body", "") or ""
        try:
            extra = orjson.loads(extra_raw) if extra_raw else {}
        except orjson.JSONDecodeError as e:
            raise ConfigError(f"--extra-body: not valid JSON ({e}); pass an object like '{{\"top_p\": 0.9}}'") from None
        if not isinstance(extra, dict):
            raise ConfigError("--extra-body: must be a JSON object like '{\"top_p\": 0.9}'")
        cap = _number(get("max_tokens_cap", 0), int, "--max-tokens-cap") or 0
        if cap < 0:
            raise ConfigError(f"--max-tokens-cap {cap}: must be >= 1 (or 0 for no cap)")
        path = get("endpoint_path", "") or None
        if path is not None and not path.startswith("/"):
            raise ConfigError(f"--endpoint-path {path!r}: must start with '/', e.g. /v1/stream")
        temperature = _number(get("temperature"), float, "--temperature")
        if temperature is not None and not (0 <= temperature <= 10):
            raise ConfigError(f"--temperature {temperature}: must be between 0 and 10")
        if seed is None:
            seed = _number(get("seed", -1), int, "--seed")
            if seed is None or seed < 0:
                seed = random.SystemRandom().randrange(1, 2**31)
        model = get("model", "") or ""
        adapter = AdapterConfig(
            model=model or "default",
            path=path,
            include_usage=not get("no_stream_usage", False),
            ignore_eos=bool(get("ignore_eos", False)),
            temperature=temperature,
            stream_format=get("stream_format", "auto") or "auto",
            extra_body=extra,
        )
        return cls(
            api=api,
            adapter=adapter,
            profile=_workload(get, worker),
            seed=int(seed),
            max_tokens_cap=cap or None,
            ttft_timeout=parse_duration(get("ttft_timeout", "60s"), "--ttft-timeout"),
            stall_timeout=parse_duration(get("stall_timeout", "30s"), "--stall-timeout"),
            request_timeout=parse_duration(get("request_timeout", "10m"), "--request-timeout"),
            sse_parser=get("sse_parser", "fast") or "fast",
            summary_json=get("summary_json", "") or "",
            records_jsonl=get("records_jsonl", "") or "",
            model_auto=not model,
            api_key=_api_key(get("api_key", "") or "", api),
            ladder=_ladder(get),
            degradation=_degradation(get),
            collect=CollectConfig.from_options(opts, summary_json=get("summary_json", "") or ""),
            runs_dir="" if get("no_run_dir", False) else str(get("runs_dir", "runs") or ""),
        )
