"""One door for configuration: the flag table, value parsers and the frozen configs built from them.

* :mod:`~llmload.config.flags` — :data:`~llmload.config.flags.FLAGS`, the one table of flags and
  defaults; :func:`~llmload.config.flags.add_arguments` (Locust's parser) and
  :func:`~llmload.config.flags.read` (a parsed namespace → ``{dest: value}``) are made from it;
* :mod:`~llmload.config.values` — value parsers (durations, numbers, JSON, URLs, matchers, user counts);
* :mod:`~llmload.config.origin` — where a value came from (an environment variable, a config file), named
  in front of its error line;
* :mod:`~llmload.config.run` — :class:`RunConfig`, holding the parts below as fields;
* :mod:`~llmload.config.collect`, :mod:`~llmload.config.exporter`, :mod:`~llmload.config.ladder` —
  :class:`CollectConfig`, :class:`ExporterConfig`, :class:`LadderConfig`;
* :mod:`~llmload.config.arrival` — :class:`~llmload.config.arrival.ArrivalConfig`: the arrival flags
  (``--arrival``, ``--rate``, ``--trace``, ...; the schedule itself is :mod:`llmload.arrivals`);
* :mod:`~llmload.config.backoff` — :class:`~llmload.config.backoff.BackoffSpec`: ``--error-backoff``,
  the wait after a failed request;
* :mod:`~llmload.config.warmup` — :class:`~llmload.config.warmup.WarmupConfig`: ``--warmup`` and
  ``--warmup-requests``;
* :mod:`~llmload.config.repeat` — :class:`~llmload.config.repeat.RepeatConfig`: ``--repeat N`` and
  ``--repeat-pause``;
* :mod:`~llmload.config.targets` — several targets behind one ``--host URL1,URL2,...``, round-robin
  (:func:`~llmload.config.targets.split_hosts`, :func:`~llmload.config.targets.round_robin`).

Importable without Locust. The one module that reads ``environment.parsed_options`` is
:mod:`llmload.runtime.options`.
"""

from __future__ import annotations

from llmload.config.collect import CollectConfig
from llmload.config.exporter import ExporterConfig
from llmload.config.flags import FLAGS, Flag, add_arguments, read
from llmload.config.ladder import LadderConfig
from llmload.config.run import RunConfig
from llmload.config.values import basic_auth, parse_duration, public_url

__all__ = [
    "FLAGS",
    "CollectConfig",
    "ExporterConfig",
    "Flag",
    "LadderConfig",
    "RunConfig",
    "add_arguments",
    "parse_duration",
    "basic_auth",
    "public_url",
    "read",
]
