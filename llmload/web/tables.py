"""The "LLM" tabs in Locust's web UI, and the same numbers as JSON at ``/llmload/live``.

Only Locust's supported extension points are used (no fork of its React UI, no JS build):

* ``web_ui.template_args["extended_tabs"]`` / ``["extended_tables"]`` declare two tabs,
  each with one table (the UI renders exactly one table per extended tab);
* an ``after_request`` hook adds ``extended_stats`` (the rows) to every ``/stats/requests``
  answer, which the UI polls every 2 s while a test runs. Locust memoizes that route for
  2 s and returns the *same* response object on a cache hit; the hook runs on hits too and
  replaces only our entry, so our rows are fresh on every poll;
* a Flask route ``<web base path>/llmload/live`` serves the rows as JSON for scripts (behind
  ``--web-login`` when that is on), linked from the "Download Data" tab, with a running
  ladder's status (``ladder``: :mod:`llmload.ladder.status`, also the chart page's top line).

The two tabs, one row per request class (profile order) plus an ``Overall`` row last:

``LLM`` — live, the last :data:`~llmload.metrics.aggregation.WINDOW_S` seconds
    (what someone watching a ramp wants: a run-so-far p99 hides what the server does *now*):
    TTFT/TPOT/ITL p50 and p99 (ms), successful and failed requests/s and output tokens/s (of requests
    that finished in the window: tokens are counted when their request ends), requests in
    flight now, errors by kind (run so far) and whether the load generator is saturated now;
    for open-loop runs (``--arrival``) also requests started/s (achieved), the offered rate
    (Overall row) and the client wait p50/p99 (intended -> actual send, ms).
    TTFO p50/p99 (first answer or tool-call token; TTFT counts reasoning) are filled only where
    some request of the window reasoned, blank otherwise.
``LLM (run)`` — the run so far, the numbers the final summary will show: requests, ok,
    errors, the same percentiles plus E2E, output tokens/s over the run, errors by kind and
    whether the client was saturated at any time in the run; TTFO and reasoning tokens per
    request where some request reasoned.

A saturated client (CPU >= 85 % of a core or event-loop lag >= 50 ms in some load-generating
process) means the latencies measure the client, not the server; the Overall row says so.

Numbers come from a :class:`LiveSource` (the coordinator's live views, :mod:`llmload.runtime.views`):
the aggregator's snapshot as last reported, without folding this process's pending records
first (that would also restart the CPU sampling interval on every browser poll, which could
flag a short busy interval as saturation). They are therefore as fresh as the last report:
at most Locust's report interval (3 s) old, on a master as on a standalone process.

Installed by :func:`llmload.plugin.install` on ``init``, when Locust has already created the
web UI (``locust.main`` creates it before firing ``init``). There is no web UI on workers,
in ``--headless`` runs or in ``--processes`` children: then nothing is done. Code that
builds its own ``Environment`` and creates the web UI after ``install`` calls
:func:`install_web_ui` itself, before the UI serves its first request (Flask accepts no
new routes after that). This module registers no event listener.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol

from flask import Response

from llmload.jsonvalue import Json
from llmload.metrics.aggregation import CPU_SATURATED, LAG_SATURATED_S, WINDOW_S, Snapshot
from llmload.metrics.recorder import CLIENT_WAIT, ClassStats, MetricSet
from llmload.runtime.views import ChartInputs
from llmload.web.auth import hide_secret_defaults
from llmload.web.live_charts import install_charts
from llmload.web.state import edit_request_stats, install_state

__all__ = [
    "LIVE_COLUMNS",
    "LIVE_PATH",
    "LIVE_TAB",
    "RUN_COLUMNS",
    "RUN_TAB",
    "LiveSource",
    "install_web_ui",
    "live_data",
]

log = logging.getLogger("llmload")

LIVE_TAB = "llm"
RUN_TAB = "llmrun"
#: Below the web UI's base path.
LIVE_PATH = "llmload/live"
SCHEMA = "llmload.live/1"
OVERALL = "Overall"
SATURATED_NOTE = (
    f"the load generator is saturated (CPU >= {CPU_SATURATED:.0%} of a core or event-loop lag >= "
    f"{LAG_SATURATED_S * 1000:.0f} ms): latencies measure the client, not the server; add workers (--processes N)"
)

_LATENCY = (("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL"))
_PCTS = ((0.5, "p50"), (0.99, "p99"))
#: Shown only where some request reasoned (else the cells are blank).
_TTFO = (("ttfo", "TTFO"),)


def _latency_columns(metrics: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    return [(f"{m}_{p}_ms", f"{title} {p} ms") for m, title in metrics for _, p in _PCTS]


#: (key, title) of the live table; keys are the JSON row keys (snake_case: Locust's UI
#: camel-cases both the rows and the table structure, so they keep matching). No row has a
#: ``name`` key on purpose: the UI sorts extended tables by ``name`` unless a header was
#: clicked, which would put "Overall" first and classes alphabetically; without it the
#: rows keep our order (profile order, Overall last).
LIVE_COLUMNS: list[tuple[str, str]] = [
    ("class", f"Class (last {WINDOW_S:g} s)"),
    ("requests_per_s", "OK req/s"),
    ("errors_per_s", "Err/s"),
    ("output_tokens_per_s", "Output tok/s"),
    *_latency_columns(_LATENCY),
    *_latency_columns(_TTFO),
    ("in_flight", "In flight"),
    ("errors_by_kind", "Errors (run)"),
    ("client_saturated", "Client saturated"),
    # Open loop (--arrival): offered vs achieved rate and the wait for a free user (empty in a closed loop).
    ("offered_per_s", "Offered req/s"),
    ("started_per_s", "Achieved req/s"),
    ("client_wait_p50_ms", "Client wait p50 ms"),
    ("client_wait_p99_ms", "Client wait p99 ms"),
]
#: (key, title) of the run-so-far table.
RUN_COLUMNS: list[tuple[str, str]] = [
    ("class", "Class (run so far)"),
    ("requests", "Requests"),
    ("ok", "OK"),
    ("errors", "Errors"),
    ("output_tokens_per_s", "Output tok/s"),
    *_latency_columns((*_LATENCY, ("e2e", "E2E"))),
    *_latency_columns(_TTFO),
    ("reasoning_tokens_mean", "Reasoning tok/req"),
    ("errors_by_kind", "Errors by kind"),
    ("client_saturated", "Client saturated (any time)"),
]


# -- rows ---------------------------------------------------------------------------------
def _ms(seconds: float) -> float | None:
    if not math.isfinite(seconds):
        return None
    ms = seconds * 1000.0
    return round(ms, 2 if ms < 10 else 1)


def _rate(n: int, seconds: float) -> float | None:
    return round(n / seconds, 2) if seconds > 0 else None


def _errors(kinds: Counter[str]) -> str:
    """``http_429: 3, stall_timeout: 1`` (most frequent first)."""
    return ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])) if n)


def _percentiles(s: ClassStats, metrics: tuple[str, ...]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for m in metrics:
        values = s.hist[m].percentiles([q for q, _ in _PCTS])
        for (_, p), v in zip(_PCTS, values, strict=True):
            out[f"{m}_{p}_ms"] = _ms(v)
    return out


def _reasoned(s: ClassStats) -> bool:
    return bool(s.counters["reasoning_from_usage"] or s.counters["reasoning_counted"])


def _ttfo(s: ClassStats) -> dict[str, float | None]:
    """TTFO p50/p99 where some request reasoned; None (a blank cell) otherwise."""
    if _reasoned(s):
        return _percentiles(s, ("ttfo",))
    return {k: None for k, _ in _latency_columns(_TTFO)}


def _names(order: list[str], *sets: MetricSet | dict[str, int]) -> list[str]:
    names = list(order)
    for s in sets:
        names += [n for n in (s.classes if isinstance(s, MetricSet) else s) if n not in names]
    return names


def _saturated_text(saturated: bool, overall: bool) -> str:
    if not saturated:
        return "no"
    return "YES: results measure the client, not the server" if overall else "yes"


def live_rows(snap: Snapshot, order: list[str], offered_rate: float | None = None) -> list[dict[str, Json]]:
    """Rows of the live table (last ``WINDOW_S`` seconds), Overall last; ``offered_rate``: an open loop's."""
    in_flight = snap.in_flight_by_class()
    saturated = snap.client_saturated
    rows = []
    for name in [*_names(order, snap.window, snap.run, in_flight), OVERALL]:
        overall = name == OVERALL
        w = snap.window.overall() if overall else snap.window.classes.get(name) or ClassStats()
        r = snap.run.overall() if overall else snap.run.classes.get(name) or ClassStats()
        rows.append(
            {
                "class": name,
                "requests_per_s": _rate(w.counters["ok"], snap.window_s),
                "errors_per_s": _rate(w.counters["errors"], snap.window_s),
                "output_tokens_per_s": _rate(w.counters["output_tokens"], snap.window_s),
                **_percentiles(w, tuple(m for m, _ in _LATENCY)),
                **_ttfo(w),
                "in_flight": snap.in_flight if overall else in_flight.get(name, 0),
                "errors_by_kind": _errors(r.errors_by_kind),
                "client_saturated": _saturated_text(saturated, overall),
                **_open_loop(w, snap.window_s, offered_rate, overall),
            }
        )
    return rows


def _open_loop(w: ClassStats, window_s: float, offered_rate: float | None, overall: bool) -> dict[str, Json]:
    """An open loop's live columns (blank in a closed loop): offered (Overall), achieved, client wait."""
    if offered_rate is None:
        return {"offered_per_s": None, "started_per_s": None, "client_wait_p50_ms": None, "client_wait_p99_ms": None}
    wait = w.hist[CLIENT_WAIT].percentiles([0.5, 0.99]) if w.hist[CLIENT_WAIT].count else [math.nan, math.nan]
    return {
        "offered_per_s": round(offered_rate, 3) if overall else None,
        "started_per_s": _rate(w.counters["requests"], window_s),
        "client_wait_p50_ms": _ms(wait[0]),
        "client_wait_p99_ms": _ms(wait[1]),
    }


def run_rows(snap: Snapshot, order: list[str], duration_s: float) -> list[dict[str, Json]]:
    """Rows of the run-so-far table, Overall last."""
    saturated = any(w.saturated_ever for w in snap.workers)
    rows: list[dict[str, Json]] = []
    for name in [*_names(order, snap.run), OVERALL]:
        overall = name == OVERALL
        s = snap.run.overall() if overall else snap.run.classes.get(name) or ClassStats()
        c = s.counters
        rows.append(
            {
                "class": name,
                "requests": c["requests"],
                "ok": c["ok"],
                "errors": c["errors"],
                "output_tokens_per_s": _rate(c["output_tokens"], duration_s),
                **_percentiles(s, ("ttft", "tpot", "itl", "e2e")),
                **_ttfo(s),
                "reasoning_tokens_mean": (
                    round(c["reasoning_tokens"] / (c["reasoning_from_usage"] + c["reasoning_counted"]), 1)
                    if _reasoned(s)
                    else None
                ),
                "errors_by_kind": _errors(s.errors_by_kind),
                "client_saturated": _saturated_text(saturated, overall),
            }
        )
    return rows


class LiveSource(Protocol):
    """Where the tabs' numbers come from."""

    def live_snapshot(self) -> Snapshot:
        """The merged state as last reported (no side effects)."""

    def class_order(self) -> list[str]:
        """Request classes in profile order."""

    def run_seconds(self) -> float:
        """Test time of the current run: from its start to its stop, or to now."""

    def chart_inputs(self) -> ChartInputs:
        """What the live charts read (:mod:`llmload.web.live_charts`)."""

    def offered_rate(self) -> float | None:
        """An open loop's offered rate now (requests/s); None in a closed loop."""

    def ladder_status(self) -> dict[str, Json] | None:
        """The running ladder's step, time left and verdict so far (:mod:`llmload.ladder.status`); None without."""


def live_data(environment: Any, source: LiveSource) -> dict[str, Json]:
    """Everything ``/llmload/live`` serves: both tables' rows plus the client's state."""
    snap = source.live_snapshot()
    order = source.class_order()
    run_s = source.run_seconds()
    runner = environment.runner
    saturated = snap.client_saturated
    offered = source.offered_rate()
    return {
        "schema": SCHEMA,
        "state": runner.state if runner is not None else None,
        "users": runner.user_count if runner is not None else 0,
        "window_s": round(snap.window_s, 3),
        "run_s": round(run_s, 3),
        "client_saturated": saturated,
        "client_saturated_in_run": any(w.saturated_ever for w in snap.workers),
        "note": SATURATED_NOTE if saturated else None,
        "offered_rate": round(offered, 3) if offered is not None else None,  # as the Overall row's offered_per_s
        "ladder": source.ladder_status(),
        "workers": [
            {
                "id": w.worker_id,
                "lost": w.lost,
                "users": w.gauges.users,
                "in_flight": w.gauges.in_flight,
                "cpu_ratio": w.gauges.cpu_ratio,
                "loop_lag_ms": round(w.gauges.loop_lag_s * 1000.0, 3),
                "saturated": w.gauges.saturated,
            }
            for w in snap.workers
        ],
        "live": live_rows(snap, order, offered),
        "run": run_rows(snap, order, run_s),
    }


# -- wiring -------------------------------------------------------------------------------
def _merge_by_key(existing: Json, ours: list[dict[str, Json]], key: str) -> list[Json]:
    """Keep other extensions' entries, replace ours (installing twice changes nothing); ``existing``: Locust's list."""
    mine = {e[key] for e in ours}
    others = existing if isinstance(existing, list) else []
    kept = [e for e in others if not (isinstance(e, Mapping) and e.get(key) in mine)]
    return [*kept, *ours]


def _base_path(app: Any) -> str:
    """The web UI's base path (``--web-base-path``), read from where Locust mounted ``/``."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "locust.index":
            return rule.rule.rstrip("/")
    return ""


def install_web_ui(environment: Any, source: LiveSource) -> bool:
    """Add the LLM tabs and ``/llmload/live`` to ``environment.web_ui``; False when there is none."""
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None:
        return False
    if getattr(web_ui, "_llmload_installed", False):
        return True
    web_ui._llmload_installed = True
    hide_secret_defaults(web_ui)

    ta = web_ui.template_args
    ta["extended_tabs"] = _merge_by_key(
        ta.get("extended_tabs"), [{"title": "LLM", "key": LIVE_TAB}, {"title": "LLM (run)", "key": RUN_TAB}], "key"
    )
    tables: list[dict[str, Json]] = [
        {"key": LIVE_TAB, "structure": [{"key": k, "title": t} for k, t in LIVE_COLUMNS]},
        {"key": RUN_TAB, "structure": [{"key": k, "title": t} for k, t in RUN_COLUMNS]},
    ]
    ta["extended_tables"] = _merge_by_key(ta.get("extended_tables"), tables, "key")
    ta["extended_csv_files"] = _merge_by_key(
        ta.get("extended_csv_files"), [{"href": f"./{LIVE_PATH}", "title": "Download LLM statistics (JSON)"}], "href"
    )

    app = web_ui.app

    def data() -> dict[str, Json]:
        return live_data(environment, source)

    def add_llm_stats(body: dict[str, Json]) -> bool:
        d = data()
        ours = [{"key": LIVE_TAB, "data": d["live"]}, {"key": RUN_TAB, "data": d["run"]}]
        body["extended_stats"] = _merge_by_key(body.get("extended_stats"), ours, "key")
        return True

    edit_request_stats(app, add_llm_stats, "add the LLM tab's rows to")

    @web_ui.auth_required_if_enabled
    def llmload_live() -> Response:
        return Response(json.dumps(data()), mimetype="application/json")

    app.add_url_rule(f"{_base_path(app)}/{LIVE_PATH}", "llmload_live", llmload_live)
    install_charts(environment, source.chart_inputs())  # the LLM tab's live charts (llmload.web)
    install_state(environment)  # the page's header through a stop (llmload.web.state)
    return True
