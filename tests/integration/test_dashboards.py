"""Every PromQL expression of the Grafana dashboards and the Prometheus rules, against live data.

Simulator (engine model, ``--preset healthy --time-scale 0.1``: vLLM names and a simulated
GPU on its ``/metrics``; ``--reasoning-tokens 3``, so the reasoning panels have data) + two fake GPU sidecars (``llmload gpu-sidecar --fake-gpus 1``, one
with llmload's names, one with dcgm-exporter's ``--dcgm-names``) ← ``llmload run --headless
--ladder 1,3`` with engine and GPU collection on (so the ladder step and baseline gauges
exist) ← ``/usr/bin/prometheus`` with the **shipped** ``prometheus/prometheus.yml`` and
``prometheus/rules/*.yml``: only the targets (and the 1 s scrape/evaluation interval) are
rewritten for the test. Every server binds 127.0.0.1 and is stopped by PID.

After the run every query is sent to Prometheus' HTTP API as a range query over the run
(what Grafana does), with the template variables substituted: each must parse, and each
must return at least one non-NaN sample, for "All" and for one concrete value of each
variable (a class, the model, and each GPU exporter's host, so both halves of every
``llmload_gpu_* or DCGM_FI_*`` query are exercised). Recording rules are checked both as
expressions and as the series Prometheus recorded; alert expressions with their
comparisons turned into ``bool`` ones (the healthy simulator fires no alert), and every
rule must be healthy in ``/api/v1/rules``. About 25 s (two 6 s steps).

Prometheus answers ``/-/ready`` before it scrapes (it applies its targets on a 5 s tick), so
each test waits until ``up{job="llmload"}`` exists (0: the run has not started) before it
starts llmload: the scrapes then cover the whole run.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
from pathlib import Path

import gevent
import pytest

from tests.helpers.harness import ROOT
from tests.integration.test_prometheus import PROMETHEUS, free_port, http_get, stop, wait_until
from tests.unit.test_deploy_files import DASHBOARDS, PROMETHEUS_DIR, dashboard_queries, load_yaml, rule_queries

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

STEP_S, WARMUP_S, LINGER_S = 6, 2, 3
RATE_INTERVAL, INTERVAL = "10s", "2s"  # $__rate_interval, $__interval (Grafana's, for a 1 s scrape)
LLMLOAD_GPU_HOST, DCGM_GPU_HOST = "fake-llmload-names", "fake-dcgm-names"
# Queries that may rightly return nothing in a short, healthy run, and why.
NO_DATA_EXPECTED = {
    "llmload.json: annotation 'Prometheus alerts'": "no alert fires against the healthy simulator in a 12 s run",
}
#: Panels of open-loop runs only (an offered rate, client waits): a concurrency ladder has none; their queries
#: are checked against an open-loop run instead (test_the_open_loop_panels_return_data_for_an_open_loop_run).
OPEN_LOOP_ONLY = {
    "llmload.json: panel 49 'Open loop: offered vs achieved rate' target A": "a closed loop offers no rate",
    "llmload.json: panel 50 'Open loop: client wait p50 / p99' target A": "a closed loop has no client wait",
    "llmload.json: panel 50 'Open loop: client wait p50 / p99' target B": "a closed loop has no client wait",
}
NO_DATA_EXPECTED.update(OPEN_LOOP_ONLY)


def start_sidecar(tmp_path: Path, hostname: str, *flags: str) -> tuple[subprocess.Popen, str]:
    """``llmload gpu-sidecar --fake-gpus 1`` on a free port; returns (process, base URL)."""
    log = tmp_path / f"sidecar-{hostname}.log"
    out = open(log, "wb")  # noqa: SIM115  (closed with the process)
    cmd = [sys.executable, "-m", "llmload", "gpu-sidecar", "--fake-gpus", "1", "--host", "127.0.0.1", "--port", "0",
           "--hostname", hostname, "--interval", "0.5", *flags]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    out.close()
    found: list[str] = []

    def serving() -> bool:
        found[:] = re.findall(r"scrape (http://\S+)/metrics", log.read_text())
        return bool(found)

    try:
        wait_until(serving, 20, f"gpu-sidecar {hostname}", p)
    except BaseException:
        stop(p)  # never leave a sidecar running after a failed start
        raise
    return p, found[0]


def prometheus_config(exporter: str, engine: str, gpus: list[str]) -> dict:
    """The shipped prometheus.yml with the test's targets, intervals and rule path."""
    config = load_yaml(PROMETHEUS_DIR / "prometheus.yml")
    config["global"].update(scrape_interval="1s", scrape_timeout="900ms", evaluation_interval="1s")
    config["rule_files"] = [str(PROMETHEUS_DIR / "rules" / "*.yml")]
    targets = {"llmload": [exporter], "engine": [engine], "gpu": gpus}
    assert {j["job_name"] for j in config["scrape_configs"]} == set(targets), "a job was added: give it a target here"
    for job in config["scrape_configs"]:
        job["static_configs"] = [{"targets": targets[job["job_name"]]}]
    return config


class Prom:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}/api/v1"

    def get(self, path: str, **params) -> dict:
        url = f"{self.base}/{path}?" + urllib.parse.urlencode(params, doseq=True)
        try:
            body = json.loads(http_get(url, timeout=10))
        except urllib.error.HTTPError as e:  # 400 bad_data: the expression does not parse
            body = json.loads(e.read())
        return body

    def range(self, expr: str, start: float, end: float, step: str) -> tuple[str, list]:
        """(error or "", result) of a range query."""
        body = self.get("query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step=step)
        if body["status"] != "success":
            return f"{body.get('errorType')}: {body.get('error')}", []
        return "", body["data"]["result"]

    def instant(self, expr: str) -> list:
        body = self.get("query", query=expr)
        assert body["status"] == "success", (expr, body)
        return body["data"]["result"]


def start_prometheus(tmp_path, config: dict, port: int, procs: list[subprocess.Popen]) -> Prom:
    """Run Prometheus with ``config`` on ``port`` (appended to ``procs``, stopped by the caller), scraping."""
    (tmp_path / "prometheus.yml").write_text(json.dumps(config, indent=1))  # JSON is YAML
    with open(tmp_path / "prometheus.log", "wb") as log:
        procs.append(subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        ))  # fmt: skip
    return start_scraping(port, procs[-1])


def start_scraping(port: int, proc: subprocess.Popen) -> Prom:
    """Wait until the Prometheus on ``port`` is ready and its scrape loop runs (``up{job="llmload"}`` exists)."""
    wait_until(lambda: http_get(f"http://127.0.0.1:{port}/-/ready") is not None, 30, "prometheus", proc)
    prom = Prom(port)
    wait_until(lambda: prom.instant('up{job="llmload"}'), 30, "prometheus scraping", proc)
    return prom


def substitute(expr: str, values: dict[str, str]) -> str:
    """Grafana's template variables ($name, ${name}) replaced by test values."""

    def value(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        assert name in values, f"unknown variable ${name} in {expr}"
        return values[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, expr)


_COMPARISON = re.compile(r"(==|!=|>=|<=|>|<)(?!\s*bool\b)")


def with_bool(expr: str) -> str:
    """Every comparison outside label matchers and strings made a ``bool`` one, so an alert
    expression returns its 0/1 evaluation whether or not it fires."""
    out, depth, quote, i = [], 0, "", 0
    while i < len(expr):
        c = expr[i]
        if quote:
            out.append(c)
            if c == "\\":
                out.append(expr[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
            out.append(c)
        elif c == "{":
            depth += 1
            out.append(c)
        elif c == "}":
            depth -= 1
            out.append(c)
        elif depth == 0 and (m := _COMPARISON.match(expr, i)):
            out.append(f"{m.group(1)} bool")
            i += len(m.group(1))
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def test_with_bool():
    assert with_bool('a{x!="y"} > 1.5 * b') == 'a{x!="y"} > bool 1.5 * b'
    assert with_bool("d > 0 and w > bool 0") == "d > bool 0 and w > bool 0"
    assert with_bool('max(z{a=~"b|c"}) >= 1') == 'max(z{a=~"b|c"}) >= bool 1'


def has_data(result: list) -> bool:
    return any(not math.isnan(float(v)) for series in result for _, v in series["values"])


def label_values(prom: Prom, query: str, start: float, end: float) -> list[str]:
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query.strip())
    assert m, query
    body = prom.get(f"label/{m.group(2)}/values", **{"match[]": m.group(1), "start": start, "end": end})
    assert body["status"] == "success", (query, body)
    return body["data"]


@pytest.mark.slow  # over 20 s
def test_every_dashboard_and_rule_query_returns_data(sim, tmp_path):
    if not os.access(PROMETHEUS, os.X_OK):
        pytest.fail(f"{PROMETHEUS} not found: `make system-deps` installs Debian's prometheus")
    started = time.time()
    sim_url = sim(preset="healthy", time_scale=0.1, reasoning_tokens=3)
    procs: list[subprocess.Popen] = []
    try:
        p, gpu_llmload = start_sidecar(tmp_path, LLMLOAD_GPU_HOST)
        procs.append(p)
        p, gpu_dcgm = start_sidecar(tmp_path, DCGM_GPU_HOST, "--dcgm-names")
        procs.append(p)

        exporter_port, prom_port = free_port(), free_port()
        hostport = lambda url: url.split("://", 1)[1].rstrip("/")  # noqa: E731
        config = prometheus_config(
            f"127.0.0.1:{exporter_port}", hostport(sim_url), [hostport(gpu_llmload), hostport(gpu_dcgm)]
        )
        prom = start_prometheus(tmp_path, config, prom_port, procs)

        summary = tmp_path / "summary.json"
        cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", sim_url, "--ladder", "1,3",
               "--step-time", f"{STEP_S}s", "--step-warmup", f"{WARMUP_S}s", "--max-tokens-cap", "16",
               "--only-summary", "--stop-timeout", "0", "--exporter-port", str(exporter_port),
               "--exporter-host", "127.0.0.1", "--exporter-linger", f"{LINGER_S}s",
               "--engine-metrics", f"{sim_url}/metrics", "--gpu-metrics", f"{gpu_llmload}/metrics",
               "--collect-interval", "1s", "--summary-json", str(summary),
               "--slo", "ttft_ms=60000,tpot_ms=10000"]  # fmt: skip  (SLOs: the goodput series and rules have data)
        env = {k: v for k, v in os.environ.items() if k != "LLMLOAD_NO_EXPORTER"}
        out = open(tmp_path / "llmload.log", "wb")  # noqa: SIM115
        run = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        out.close()
        procs.append(run)
        wait_until(lambda: prom.instant('up{job="llmload"} == 1'), 30, "first scrape of the exporter", run)
        wait_until(lambda: prom.instant("llmload_baseline_ttft_seconds"), 2 * STEP_S, "the baseline gauge", run)
        assert run.wait(2 * STEP_S + LINGER_S + 30) == 0, (tmp_path / "llmload.log").read_text()[-3000:]
        gevent.sleep(2)  # two more rule evaluations over the last scrape
        end = time.time()
        s = json.loads(summary.read_text())
        assert s["overall"]["ok"] > 50 and s["overall"]["errors"] == 0
        assert s["overall"]["reasoning_tokens"]["total"] == 3 * s["overall"]["ok"]

        # -- template variables: resolved through Prometheus like Grafana does --------------------
        queries = [q for path in DASHBOARDS for q in dashboard_queries(path)]
        values_all = {"class": ".*", "model": ".*", "engine_model": ".*", "gpu_host": ".*", "degradation": "1.5",
                      "__rate_interval": RATE_INTERVAL, "__interval": INTERVAL, "__range": "1m"}  # fmt: skip
        resolved: dict[str, list[str]] = {}
        for q in queries:
            if q.kind == "variable":
                name = q.where.rsplit("$", 1)[1]
                resolved[name] = label_values(prom, substitute(q.expr, values_all), started, end)
                assert resolved[name], f"{q.where}: {q.expr} lists nothing"
        assert {"short", "medium", "long"} <= set(resolved["class"]), resolved
        assert {LLMLOAD_GPU_HOST, DCGM_GPU_HOST} <= set(resolved["gpu_host"]), resolved
        value_sets = [values_all]
        for gpu_host in (LLMLOAD_GPU_HOST, DCGM_GPU_HOST):
            value_sets.append({**values_all, "class": "medium", "model": resolved["model"][0],
                               "engine_model": resolved["engine_model"][0], "gpu_host": gpu_host})  # fmt: skip

        # -- every panel and annotation query ------------------------------------------------------
        failures: list[str] = []
        checked = 0
        for q in queries:
            if q.kind == "variable":
                continue
            for values in value_sets:
                expr = substitute(q.expr, values)
                error, result = prom.range(expr, started, end, INTERVAL)
                checked += 1
                if error:
                    failures.append(f"{q.where}: does not parse: {error}\n    {expr}")
                elif not has_data(result) and q.where not in NO_DATA_EXPECTED:
                    failures.append(f"{q.where} with {values['class']}/{values['gpu_host']}: no data\n    {expr}")

        # -- every rule: as an expression, and what Prometheus recorded / evaluated --------------
        for q in rule_queries():
            error, result = prom.range(q.expr, started, end, "1s")
            checked += 1
            if error:
                failures.append(f"{q.where}: does not parse: {error}")
            elif q.kind == "record":
                name = q.where.rsplit(" ", 1)[1]
                _, recorded = prom.range(name, started, end, "1s")
                if not has_data(result) or not has_data(recorded):
                    failures.append(
                        f"{q.where}: no data (expression {has_data(result)}, recorded {has_data(recorded)})"
                    )
            else:
                error, result = prom.range(with_bool(q.expr), started, end, "1s")
                if error or not has_data(result):
                    failures.append(f"{q.where}: no data {error}\n    {with_bool(q.expr)}")
        rules = prom.get("rules")["data"]["groups"]
        evaluated = [r for g in rules for r in g["rules"]]
        assert len(evaluated) == len(rule_queries())
        for r in evaluated:
            if r["health"] != "ok":
                failures.append(f"rule {r['name']}: health {r['health']} {r.get('lastError', '')}")
        assert not failures, f"{len(failures)} of {checked} queries failed:\n" + "\n".join(failures)
        assert checked > 100
    finally:
        for p in reversed(procs):
            stop(p)


def test_the_open_loop_panels_return_data_for_an_open_loop_run(sim, tmp_path):
    """The open-loop panels' queries (:data:`OPEN_LOOP_ONLY`, and the achieved rate) against a Poisson run at 20 req/s."""
    if not os.access(PROMETHEUS, os.X_OK):
        pytest.fail(f"{PROMETHEUS} not found: `make system-deps` installs Debian's prometheus")
    started = time.time()
    sim_url = sim(ttft_ms=20, itl_ms=5)
    procs: list[subprocess.Popen] = []
    try:
        exporter_port, prom_port = free_port(), free_port()
        config = prometheus_config(f"127.0.0.1:{exporter_port}", sim_url.split("://", 1)[1], [])
        prom = start_prometheus(tmp_path, config, prom_port, procs)
        cmd = [sys.executable, "-m", "llmload", "run", "--headless", "--host", sim_url, "--arrival", "poisson",
               "--rate", "20", "-u", "2", "-r", "100", "-t", "6s", "--max-tokens-cap", "16", "--only-summary",
               "--stop-timeout", "0", "--no-run-dir", "--exporter-port", str(exporter_port),
               "--exporter-host", "127.0.0.1", "--exporter-linger", f"{LINGER_S}s"]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "LLMLOAD_NO_EXPORTER"}
        out = open(tmp_path / "llmload.log", "wb")  # noqa: SIM115
        run = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        out.close()
        procs.append(run)
        assert run.wait(60) == 0, (tmp_path / "llmload.log").read_text()[-3000:]
        end = time.time()
        values = {"class": ".*", "model": ".*", "__rate_interval": RATE_INTERVAL, "__interval": INTERVAL}
        wanted = [q for path in DASHBOARDS for q in dashboard_queries(path) if q.where in OPEN_LOOP_ONLY]
        wanted += [q for path in DASHBOARDS for q in dashboard_queries(path) if "llmload_achieved_rate" in q.expr]
        assert len(wanted) == len(OPEN_LOOP_ONLY) + 1, [q.where for q in wanted]
        for q in wanted:
            error, result = prom.range(substitute(q.expr, values), started, end, INTERVAL)
            assert not error and has_data(result), (q.where, error, q.expr)
        # -u 2 against 20 req/s of ~100 ms requests: arrivals wait, and the panel shows it.
        _, waits = prom.range(substitute(wanted[1].expr, values), started, end, INTERVAL)
        assert max(float(v) for s in waits for _, v in s["values"] if v != "NaN") > 0.01
        _, offered = prom.range("llmload_offered_rate_per_second", started, end, INTERVAL)
        assert {float(v) for s in offered for _, v in s["values"]} == {20.0}
    finally:
        for p in reversed(procs):
            stop(p)
