"""The run's pre-flight: every check of :mod:`llmload.preflight` that applies, before any load.

:func:`preflight` runs once at start-up (the ``init`` event: before Locust spawns a user and
before the web UI listens) on the coordinator (standalone or ``--master``), and again for
each web UI form (:mod:`llmload.web_form`), where the first problem is shown in the page.
It raises :class:`~llmload.errors.ConfigError` with one line; the caller exits with code 2.

======================  ==========================================================================
what                    check
======================  ==========================================================================
the workload            the profile and its datasets load, or ``--trace``'s file (first: a bad profile
                        never connects)
``--host``              an http(s) URL with a host; a TCP connect; ``GET /v1/models`` does not
                        refuse the key and lists ``--model`` (a warning) — the network checks run
                        even with ``--model`` given, and ``--no-preflight`` skips them
``-u`` / ``-r``         users >= 0, spawn rate > 0
output paths            ``--summary-json``, ``--records-jsonl``, ``--timeseries-json``, Locust's
                        ``--html``: the folder exists and is writable; ``--runs-dir``: it or its parent
ports                   ``--web-port`` (web UI) free at start-up; the exporter's port is bound right
                        after (a busy one is the same one-line error); a master's ``--master-bind-port``
                        before Locust starts (:func:`check_master_port`)
durations               read by :class:`~llmload.config.RunConfig` whether or not their feature is on
======================  ==========================================================================

The master's port (``--master-bind-port``) is bound by Locust before ``init``, and under
``--processes`` after forking the workers (which then wait minutes for a master that never
came): :func:`check_master_port` runs before Locust starts (``llmload run``), on Locust's own
parser, so flags, ``LOCUST_*`` variables and ``locust.conf`` are read as Locust reads them.
Under ``--processes`` the flags and the workload are checked there too (:func:`check_before_fork`):
after the fork every process checked them and said the same error line, three times for
``--processes 2``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.config import RunConfig, add_arguments, read
from llmload.config.flags import local_master_default
from llmload.config.origin import locate, located, origins
from llmload.config.targets import split_hosts
from llmload.errors import ConfigError
from llmload.metrics.thresholds import check_classes
from llmload.preflight import (
    check_host,
    check_models,
    check_output_dir,
    check_output_file,
    check_port_free,
    check_range,
    check_reachable,
)
from llmload.runtime.workload import run_workload
from llmload.workload import WorkloadSampler

__all__ = ["auth_headers", "check_before_fork", "check_load_shape", "check_master_port", "preflight"]

log = logging.getLogger("llmload")


def auth_headers(config: RunConfig) -> dict[str, str]:
    """The headers that authenticate a request to the target, the adapter's way (what users send; secret)."""
    return api_headers_for(get_adapter_class(config.api), config.api_key)


def check_load_shape(users: Any, spawn_rate: Any) -> None:
    """``-u`` >= 0 and ``-r`` > 0 (None: not given)."""
    check_range("-u/--users", users, 0, hint="the number of concurrent users, e.g. -u 10")
    if spawn_rate is not None and not spawn_rate > 0:
        raise ConfigError(f"-r/--spawn-rate {spawn_rate:g}: must be > 0 (users started per second), e.g. -r 10")


def preflight(
    config: RunConfig,
    host: str | None,
    *,
    users: Any = None,
    spawn_rate: Any = None,
    html_file: str | None = None,
    web_port: tuple[str, int] | None = None,
) -> list[str]:
    """Run the checks (module docstring); ConfigError on the first problem, else the warnings (one line each)."""
    sampler = WorkloadSampler(run_workload(config).profile, seed=config.seed, user_index=0)  # reads datasets, the trace
    check_classes(config.thresholds, sampler.profile.class_names)  # --threshold CLASS:...: a class of the profile
    if config.arrival.open_loop and sampler.has_conversations:
        names = ", ".join(c.name for c in sampler.profile.classes if c.is_conversation)
        raise ConfigError(
            f"--arrival {config.arrival.mode}: profile {config.profile!r} has conversation classes ({names}); "
            "open-loop arrivals send single requests: use --arrival closed (-u = active sessions) or single-turn classes"
        )
    check_load_shape(users, spawn_rate)
    check_output_file("--summary-json", config.summary_json)
    check_output_file("--records-jsonl", config.records_jsonl)
    check_output_file("--timeseries-json", config.timeseries_json)
    check_output_file("--html", html_file)
    check_output_dir("--runs-dir", config.runs_dir)
    if web_port is not None:
        check_port_free("--web-port", *web_port)
    warnings: list[str] = []
    for target in split_hosts(host) if host else ():  # --host URL1,URL2,...: each target
        check_host(target)
        if config.preflight:
            check_reachable(target)
            if not config.model_auto:  # without --model, discovery reads /v1/models anyway
                warning = check_models(target, config.adapter.model, auth_headers(config))
                if warning:
                    warnings.append(warning)
    return warnings


def _locust_options(argv: Sequence[str], environ: Mapping[str, str]) -> tuple[Any, Any]:
    """(Locust's parser, ``llmload run``'s arguments read as Locust will read them); the options are None for
    a value Locust's own parse will refuse. When that value came from an environment variable or a config
    file, a ConfigError instead: Locust's line (``argument --seed: invalid int value: 'abc'``) would name
    only the flag, not the ``LLMLOAD_SEED`` the user set."""
    from locust.argument_parser import get_parser

    parser = get_parser()
    add_arguments(parser)
    local_master_default(parser, list(argv), environ)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):  # a bad value: Locust's own parse says it, once
            return parser, parser.parse_known_args(list(argv))[0]
    except SystemExit:
        refused = said.getvalue().rpartition(": error: ")[2].strip()  # argparse: "PROG: error: MESSAGE"
        where = locate(refused, origins(parser))
        if refused and where != refused:
            raise ConfigError(where) from None
        return parser, None


def check_master_port(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> None:
    """A master (``--master`` or ``--processes``, not ``--worker``): nothing listens on its bind address yet.

    ``argv`` are ``llmload run``'s arguments. Flags Locust does not know (a custom locustfile's)
    are left to Locust; so are bad values (Locust's parser says them itself).
    """
    parser, opts = _locust_options(argv, environ)
    if opts is None:
        return
    if getattr(opts, "worker", False) or not (getattr(opts, "master", False) or getattr(opts, "processes", None)):
        return
    with located(parser):
        check_port_free("--master-bind-port", str(opts.master_bind_host), int(opts.master_bind_port))


def check_before_fork(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> None:
    """``--processes N``: the flags and the workload, checked once before Locust forks (each of the N + 1
    processes said the same error line); the network checks stay with the master, after the fork."""
    parser, opts = _locust_options(argv, environ)
    if opts is None or not getattr(opts, "processes", None):
        return
    with located(parser):
        config = RunConfig.from_values(read(opts))
        preflight(replace(config, preflight=False), None, users=opts.num_users, spawn_rate=opts.spawn_rate)
