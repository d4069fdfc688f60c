"""The ONE module that reads (and writes) Locust's ``environment.parsed_options``.

:class:`Options` turns the parsed options into a :class:`~llmload.config.RunConfig`
(:meth:`Options.config`) and sends what the workers must know back through them
(:meth:`Options.forward`): a master's ``parsed_options`` travel to its workers with every
spawn message, and that is the only way values reach them. Three values travel:

* ``seed`` — drawn here when ``--seed`` was not given, so every worker samples from the same seed;
* ``model`` — discovered from the server's ``/v1/models`` when ``--model`` was not given;
* ``workload`` — the profile: Locust does not forward its own ``--profile`` (a worker prefers
  ``--workload``, see :class:`~llmload.config.RunConfig`).

A worker's own ``--records-jsonl`` and API key are kept from its own command line: the
master's (usually empty) values overwrite its options at spawn.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from llmload.config import RunConfig, read

if TYPE_CHECKING:
    from locust.env import Environment

__all__ = ["Options"]


class Options:
    """This process's view of ``environment.parsed_options`` (see the module docstring)."""

    def __init__(self, environment: Environment, *, worker: bool) -> None:
        self._env = environment
        self._worker = worker
        own = read(environment.parsed_options)
        self._own_records_jsonl = own["records_jsonl"] or ""
        self._own_api_key = own["api_key"] or os.environ.get("OPENAI_API_KEY", "")

    @property
    def host(self) -> str | None:
        """The target: Locust's ``--host`` (or the environment's, as the web UI form sets it)."""
        return self._env.host or getattr(self._env.parsed_options, "host", None)

    def config(self) -> RunConfig:
        """The configuration as the options say now (at start-up, and at each test start: web UI form, spawn)."""
        config = RunConfig.from_values(read(self._env.parsed_options), worker=self._worker)
        if not config.records_jsonl and self._own_records_jsonl:
            config = replace(config, records_jsonl=self._own_records_jsonl)
        if not config.api_key and self._own_api_key:
            config = replace(config, api_key=self._own_api_key)
        return config

    def preflight_inputs(self) -> dict[str, Any]:
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
        """What travels to the workers with the next spawn message: the seed, the model, the workload."""
        opts = self._env.parsed_options
        if opts is None or self._worker:
            return
        opts.seed = config.seed
        if not config.model_auto:
            opts.model = config.adapter.model
        opts.workload = config.profile

