"""Writing a run down: the console table, the run report (HTML, Markdown, JSON) and before/after compares.

* :mod:`~llmload.report.console` — the console table per class and overall, the ladder's steps and verdict;
* :mod:`~llmload.report.console_ladder` — the console's ladder: steps, verdict (in sessions or on latency = E2E), SLO line;
* :mod:`~llmload.report.session_lines` — a ladder over sessions' verdict in words ("max sessions under SLO: 40 ...");
* :mod:`~llmload.report.data` — what a report shows, as data (``report.json``, schema ``llmload.report/1``);
* :mod:`~llmload.report.html_page` — the self-contained HTML report (inline CSS and SVG, no script);
* :mod:`~llmload.report.markdown` — the Markdown record: phenomenon -> root cause -> change -> effect;
* :mod:`~llmload.report.charts` — the report's charts built from report data;
* :mod:`~llmload.report.svg` — a small SVG line-chart writer (no plotting library);
* :mod:`~llmload.report.theme` — the palette and the page's CSS;
* :mod:`~llmload.report.fmt` — number formatting shared by every writer (one look for a value everywhere);
* :mod:`~llmload.report.intervals` — how a percentile and its 95 % interval read (``p99 812 ms (±9 %)``);
* :mod:`~llmload.report.arrivals` — the Arrivals section of an open-loop run;
* :mod:`~llmload.report.steady_lines` — steady state written out, per run or ladder step;
* :mod:`~llmload.report.warmup_lines` — the console's warm-up lines;
* :mod:`~llmload.report.threshold_table` — the thresholds' PASS/FAIL table;
* :mod:`~llmload.report.model_section` — a fitted run's engine model (``engine.toml``): parameters, residuals, a chart;
* :mod:`~llmload.report.repeat_table` — ``--repeat N`` runs: median and spread per metric, the safe level;
* :mod:`~llmload.report.compare` — two runs side by side, per ladder step and overall;
* :mod:`~llmload.report.commands` — the ``llmload report`` and ``llmload compare`` commands (the CLI edge).

Writers only: they read typed results (:mod:`llmload.results`) and the analysis, and decide nothing.
"""
