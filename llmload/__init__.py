"""llmload: a Locust-based load generator for LLM inference servers.

The top-level modules:

* :mod:`llmload.cli` — the ``llmload`` command line (``run``, ``sim``, ``demo``, ``gpu-sidecar``,
  ``report``, ``compare``, ``gate``, ``trace``, ``fit``, ``predict``, ``plan``): :func:`~llmload.cli.main`;
* :mod:`llmload.plugin` — wiring llmload into Locust, the one place that registers event listeners
  and message handlers: :func:`~llmload.plugin.activate`, :func:`~llmload.plugin.install`;
* :mod:`llmload.locustfile` — the locustfile ``llmload run`` hands Locust: one closed-loop LLM user;
* :mod:`llmload.locustfile_ladder` — the same plus the concurrency ladder's shape (``--ladder``);
* :mod:`llmload.locustfile_web` — the locustfile of the web UI: the LLM user and the ladder shape,
  no ladder by default;
* :mod:`llmload.discovery` — the model the target serves (``GET /v1/models``), asked once before
  load: :func:`~llmload.discovery.discover_model`;
* :mod:`llmload.preflight` — the pure pre-flight checks, each failing with one line
  (:func:`~llmload.preflight.check_host`, ...; run by :mod:`llmload.runtime.checks`);
* :mod:`llmload.rundir` — the run directory ``runs/<UTC timestamp>-<profile>/``, written and read
  back: :func:`~llmload.rundir.save_run`, :func:`~llmload.rundir.load_run`;
* :mod:`llmload.errors` — the exception tree (:class:`~llmload.errors.LlmloadError`,
  :class:`~llmload.errors.ConfigError`, the stream errors) and the error kinds;
* :mod:`llmload.redact` — API keys a server echoes, masked before llmload keeps or shows its text:
  :func:`~llmload.redact.mask`;
* :mod:`llmload.jsonvalue` — the type of a JSON value, for the documents llmload writes and reads:
  :data:`~llmload.jsonvalue.Json`.

The packages, top layer first (each maps its own modules in its docstring; the layers and who
calls whom: ``docs/design.md``):

* :mod:`llmload.web` — the LLM tabs, live charts, start form and ``--web-auth`` in Locust's web UI;
* :mod:`llmload.runtime` — the roles of a Locust process: options, load process, coordinator;
* :mod:`llmload.users` — the Locust user that streams LLM requests and times every token;
* :mod:`llmload.exporter` — llmload's merged statistics as Prometheus ``/metrics``;
* :mod:`llmload.ladder` — the concurrency ladder: plan, step tracker, live judge, Locust shape;
* :mod:`llmload.collect` — engine and GPU metrics polled during a run;
* :mod:`llmload.gpu` — the GPU sidecar (NVML as ``/metrics``);
* :mod:`llmload.report` — the writers: console table, HTML and Markdown reports, ``compare``;
* :mod:`llmload.gate` — ``llmload gate``: PASS / FAIL / INCONCLUSIVE for a CI job;
* :mod:`llmload.capacity` — ``llmload fit``, ``predict`` and ``plan``: the engine model fitted to a run;
* :mod:`llmload.analysis` — baseline, safe-concurrency verdict and diagnosis (pure);
* :mod:`llmload.results` — the typed results, the summary writer and its loader;
* :mod:`llmload.config` — the flag table and the frozen run configuration;
* :mod:`llmload.metrics` — records, histograms, the recorder and the aggregator;
* :mod:`llmload.workload` — profiles, the mix, prompts, datasets, traces;
* :mod:`llmload.adapters` — one endpoint adapter per ``--api``, the stream framings, the registry;
* :mod:`llmload.arrivals` — open-loop arrivals: the schedule and its dispatcher;
* :mod:`llmload.sim` — the embedded LLM serving simulator;
* :mod:`llmload.testing` — the adapter conformance kit.
"""
