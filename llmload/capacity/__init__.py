"""Capacity planning: fit the engine model to a measured run, then predict loads not yet run.

* :mod:`llmload.capacity.measured` — a run's per-request records, ladder steps and engine series, read back;
* :mod:`llmload.capacity.features` — what each request saw while it ran (batch, context, prefills);
* :mod:`llmload.capacity.fit` — least squares of the step cost, the admission cap, provenance
  (:mod:`~llmload.capacity.param`); :mod:`llmload.capacity.kv` — the KV capacity from the KV gauge;
* :mod:`llmload.capacity.quality` — the run replayed on its fit (:mod:`~llmload.capacity.chains`: a
  closed loop user by user);
* :mod:`llmload.capacity.engine_file` — ``engine.toml``: write, read, hash;
* :mod:`llmload.capacity.drive` — closed- and open-loop workloads (or a trace) on the virtual clock, K replicas;
* :mod:`llmload.capacity.session_replay` — what it sends: each class's requests and conversations in token counts
  (:mod:`~llmload.capacity.image_cost`: images as the simulator charges them); :mod:`llmload.capacity.agent_session`
  — agent classes: tool-call answers as the simulator draws them, tool waits and results, sub-agent fan-out;
* :mod:`llmload.capacity.trace_arrivals` — a trace's entries as arrivals, its repeated blocks as equal tokens
  (:mod:`~llmload.capacity.trace_turns`: a trace's recorded sessions, turn after turn);
* :mod:`llmload.capacity.predict` — a predicted run as a normal summary
  (:mod:`~llmload.capacity.workload_args`, :mod:`~llmload.capacity.overrides`: its flags and what-ifs);
* :mod:`llmload.capacity.check` — a prediction scored against a measured run (``predict --check``);
* :mod:`llmload.capacity.replicas` — the replica search and its answer (:mod:`~llmload.capacity.plan_command`:
  ``llmload plan``);
* :mod:`llmload.capacity.capacity_command` — ``llmload fit`` and ``llmload predict``.

See ``docs/capacity.md``.
"""
