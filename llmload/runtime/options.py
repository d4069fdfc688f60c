"""The ONE module that reads (and writes) Locust's ``environment.parsed_options``.

:class:`Options` turns the parsed options into a :class:`~llmload.config.RunConfig`
(:meth:`Options.config`) and sends what the workers must know back through them
(:meth:`Options.forward`): a master's ``parsed_options`` travel to its workers with every
spawn message, and that is the only way values reach them. Three values travel:

* ``seed`` — drawn here when ``--seed`` was not given, so every worker samples from the same seed;
* ``model`` — discovered from the server's ``/v1/models`` when ``--model`` was not given;
* ``workload`` — the profile: Locust does not forward its own ``--profile`` (a worker prefers
  ``--workload``, see :class:`~llmload.config.RunConfig`).

and, for an open-loop test, the arrival schedule (:meth:`Options.forward_schedule`): which
stride of the global arrival sequence each worker sends, and the common start on the wall
clock, both decided by the master at its test start.

A worker's own ``--records-jsonl`` and API key are kept from its own command line: the
master's (usually empty) values overwrite its options at spawn. The key given (``--api-key``,
``$LLMLOAD_API_KEY``) goes to :class:`~llmload.config.RunConfig` like every value, which alone
decides the key sent (its API's own variable when none was given); every key this process
sends is masked in the server text it keeps (:mod:`llmload.redact`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict

from llmload.config import FLAGS, RunConfig, read
from llmload.config.values import parse_web_auth
from llmload.errors import ConfigError
from llmload.ladder.plan import FixedLoad
from llmload.redact import remember

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["SCHEDULE_OPTION", "FormLoad", "Options", "PreflightInputs"]


class FormLoad(TypedDict, total=False):
    """Locust's own values of the web UI's form (:meth:`Options.form_values`): ``host`` always."""

    host: str | None
    users: int
    spawn_rate: float


class PreflightInputs(TypedDict, total=False):
    """Locust's values the pre-flight checks read (:meth:`Options.preflight_inputs`; none without options)."""

    users: int | None
    spawn_rate: float | None
    html_file: str | None
    web_port: tuple[str, int] | None

#: The option that carries the open-loop schedule to the workers (not a flag: set by the master).
SCHEDULE_OPTION = "llmload_schedule"

_FLAGS = {f.dest: f for f in FLAGS}


def _number(flag: str, text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: must be {'a whole number' if kind is int else 'a number'}") from None


class Options:
    """This process's view of ``environment.parsed_options`` (see the module docstring)."""

    def __init__(self, environment: Environment, *, worker: bool) -> None:
        self._env = environment
        self._worker = worker
        own = read(environment.parsed_options)
        records_jsonl = own["records_jsonl"]  # a path or None
        self._own_records_jsonl = records_jsonl if isinstance(records_jsonl, str) else ""
        self._own_api_key = own["api_key"] or ""  # given (flag, $LLMLOAD_API_KEY); the API's own variable: config

    @property
    def host(self) -> str | None:
        """The target: Locust's ``--host`` (or the environment's, as the web UI form sets it)."""
        return self._env.host or getattr(self._env.parsed_options, "host", None)

    def config(self) -> RunConfig:
        """The configuration as the options say now (at start-up, and at each test start: web UI form, spawn)."""
        values = read(self._env.parsed_options)
        values["api_key"] = values["api_key"] or self._own_api_key  # the key rule itself is RunConfig's
        config = RunConfig.from_values(values, worker=self._worker)
        if not config.records_jsonl and self._own_records_jsonl:
            config = replace(config, records_jsonl=self._own_records_jsonl)
        remember(config.api_key)  # masked in whatever a server echoes of it (llmload.redact)
        return config

    @property
    def headless(self) -> bool:
        """Locust's ``--headless`` (no web UI: a test that ends quits the process)."""
        return bool(getattr(self._env.parsed_options, "headless", False))

    @property
    def web_login(self) -> bool:
        """Locust's ``--web-login``."""
        return bool(getattr(self._env.parsed_options, "web_login", False))

    def web_auth(self) -> tuple[str, str] | None:
        """``--web-auth USER:PASSWORD`` (ConfigError when malformed)."""
        auth = read(self._env.parsed_options)["web_auth"]
        return parse_web_auth(auth if isinstance(auth, str) else None)

    def form_values(self, form: Mapping[str, str]) -> tuple[dict[str, Any], FormLoad]:
        """(llmload's flag values, Locust's ``host``/``users``/``spawn_rate``) as the web UI's ``POST /swarm``
        would set them from ``form`` (same field names, same conversions; a bad number is a ConfigError).
        An empty API key field keeps this process's key."""
        opts = self._env.parsed_options
        values = read(opts)
        current = vars(opts) if opts is not None else {}
        locust: FormLoad = {"host": form.get("host") or self.host}
        if form.get("user_count", "") != "":
            locust["users"] = values["num_users"] = _number("-u/--users", form["user_count"], int)  # a rate ladder's cap
        if form.get("spawn_rate", "") != "":
            locust["spawn_rate"] = _number("-r/--spawn-rate", form["spawn_rate"], float)
        for key, text in form.items():
            if key == "profile":
                values["profile"] = text or None
            elif key in values and key in _FLAGS:
                old = current.get(key, _FLAGS[key].default)
                if isinstance(old, bool):
                    values[key] = text == "true"
                elif isinstance(old, (int, float)):
                    values[key] = _number(_FLAGS[key].name, text, type(old))
                elif isinstance(old, list):
                    values[key] = text.split(",") if text else []
                else:
                    values[key] = text
        if not values.get("api_key"):
            values["api_key"] = self._own_api_key
        return values, locust

    def fixed_load(self) -> FixedLoad | None:
        """Locust's ``-u``, ``-r`` and ``-t`` now (the web UI form writes them): what the shape holds without a
        ladder (:mod:`llmload.ladder.plan`); None without a user count."""
        opts = self._env.parsed_options
        users = getattr(opts, "num_users", None)
        if users is None:
            return None
        rate = getattr(opts, "spawn_rate", None)
        run_time = getattr(opts, "run_time", None)
        return FixedLoad(int(users), float(rate) if rate else 1.0, float(run_time) if run_time else None)

    def preflight_inputs(self) -> PreflightInputs:
        """Locust's own values the pre-flight checks: -u, -r, --html, and --web-port when the web UI will listen."""
        opts = self._env.parsed_options
        if opts is None:
            return {}
        web = not getattr(opts, "headless", True) and not self._worker  # bound after init (delayed start)
        web_host = getattr(opts, "web_host", "") or ""
        return {
            "users": getattr(opts, "num_users", None),
            "spawn_rate": getattr(opts, "spawn_rate", None),
            "html_file": getattr(opts, "html_file", None),
            "web_port": ("" if web_host == "*" else web_host, int(opts.web_port)) if web and getattr(opts, "web_port", None) else None,
        }

    def forward(self, config: RunConfig) -> None:
        """What travels to the workers with the next spawn message: the seed, the model, the workload; and an
        open loop's spawn rate (Locust's ``-r`` is a closed loop's ramp: an open loop starts its ``-u`` slots at once)."""
        opts = self._env.parsed_options
        if opts is None or self._worker:
            return
        opts.seed = config.seed
        if not config.model_auto:
            opts.model = config.adapter.model
        opts.workload = config.profile
        if config.arrival.open_loop and config.ladder is None and getattr(opts, "num_users", None):
            # -u is the in-flight cap and the rate is the load: every slot from the start, as a rate ladder's
            # steps start theirs. At Locust's -r (1 a second by default) -u 200 reached its cap after 200 s,
            # and meanwhile the run said that the cap held arrivals back ("raise -u").
            opts.spawn_rate = float(max(int(opts.num_users), 1))


    def forward_schedule(self, client_ids: list[str], t0_wall: float) -> None:
        """Master: worker ``client_ids[i]`` sends stride ``i`` of ``len(client_ids)``, from ``t0_wall`` (``time.time()``)."""
        opts = self._env.parsed_options
        if opts is not None:
            setattr(opts, SCHEDULE_OPTION, {"workers": {cid: i for i, cid in enumerate(client_ids)}, "t0": t0_wall})

    def schedule(self, client_id: str) -> tuple[int, int, float] | None:
        """Worker: ``(stride, strides, t0_wall)`` the master forwarded for ``client_id``; None when it has none."""
        plan = getattr(self._env.parsed_options, SCHEDULE_OPTION, None) or {}
        workers = plan.get("workers") or {}
        if client_id not in workers:
            return None
        return int(workers[client_id]), len(workers), float(plan["t0"])
