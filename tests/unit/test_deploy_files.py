"""The deployment files, checked without Docker, Grafana or a cluster.

* Prometheus: ``promtool check config`` / ``check rules`` on the shipped files, and the
  rule unit tests in ``prometheus/tests`` (``promtool test rules``: each alert fires, and
  only, when it should).
* Grafana: every dashboard is valid JSON with unique panel ids, the ``datasource``
  variable on every panel, target, query variable and annotation, a unit on every
  timeseries and stat panel, and a non-empty PromQL expression in every target; the
  boards the issue asks for are there (per-class/per-model variables, baseline lines,
  ladder annotations, the overlay panel), and GPU queries read both llmload's and
  dcgm-exporter's names. Every metric name in a dashboard or rule is one that llmload,
  its GPU sidecar, dcgm-exporter, the simulator (vLLM names) or SGLang exports, or a
  recording rule.
* ``docker-compose.yml`` validates against the official Compose Specification JSON
  schema (``tests/fixtures/compose``: vendored from check-jsonschema 0.39.0), and its
  services, ports, profile and GPU reservation are what the docs say; Prometheus'
  entrypoint script rewrites the engine target from ``$LLMLOAD_TARGET``.
* Dockerfile, ``.dockerignore``, Grafana provisioning and the Kubernetes manifests agree
  with each other.

:func:`dashboard_queries` and :func:`rule_queries` are also used by
``tests/integration/test_dashboards.py``, which runs every query against a live Prometheus.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from llmload.gpu import names as gpu_names
from llmload.sim.metrics import EngineStats, render_engine_metrics

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS_DIR = ROOT / "prometheus"
RULE_FILES = sorted((PROMETHEUS_DIR / "rules").glob("*.yml"))
DASHBOARDS = sorted((ROOT / "grafana" / "dashboards").glob("*.json"))
COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_SCHEMA = ROOT / "tests" / "fixtures" / "compose" / "compose-spec.json"
KUBERNETES = ROOT / "deploy" / "kubernetes"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
DS_UID = "${datasource}"


def load_yaml(path: Path):
    return YAML(typ="safe").load(path.read_text())


def load_yaml_all(path: Path) -> list:
    return [d for d in YAML(typ="safe").load_all(path.read_text()) if d is not None]


def promtool(*args: str) -> subprocess.CompletedProcess:
    if not Path(PROMTOOL).exists():
        pytest.fail(f"{PROMTOOL} not found: `make system-deps` installs Debian's prometheus (with promtool)")
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


# -- queries of the dashboards and rules (shared with the integration test) ----------------


@dataclass(frozen=True)
class Query:
    """One PromQL expression and where it comes from."""

    where: str  # e.g. "llmload.json: panel 12 'TTFT p50 / p99 by class' target B"
    expr: str
    kind: str  # "panel", "annotation", "variable", "record", "alert"


def _panels(panels: list[dict]) -> list[dict]:
    out = []
    for p in panels:
        out.append(p)
        out.extend(_panels(p.get("panels", [])))  # collapsed rows keep their panels inside
    return out


def dashboard_queries(path: Path) -> list[Query]:
    """Every PromQL expression of a dashboard: panel targets, annotations, query variables."""
    board = json.loads(path.read_text())
    out = []
    for p in _panels(board.get("panels", [])):
        for t in p.get("targets", []):
            out.append(Query(f"{path.name}: panel {p['id']} {p['title']!r} target {t['refId']}", t["expr"], "panel"))
    for a in board.get("annotations", {}).get("list", []):
        if not a.get("builtIn"):
            out.append(Query(f"{path.name}: annotation {a['name']!r}", a["expr"], "annotation"))
    for v in board.get("templating", {}).get("list", []):
        if v["type"] == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append(Query(f"{path.name}: variable ${v['name']}", q, "variable"))
    return out


def rule_queries() -> list[Query]:
    """Every recording rule and alert expression of prometheus/rules/*.yml."""
    out = []
    for path in RULE_FILES:
        for group in load_yaml(path)["groups"]:
            for r in group["rules"]:
                kind, name = ("record", r["record"]) if "record" in r else ("alert", r["alert"])
                out.append(Query(f"{path.name}: {kind} {name}", r["expr"].strip(), kind))
    return out


def recorded_names() -> set[str]:
    names = {q.where.rsplit(" ", 1)[1] for q in rule_queries() if q.kind == "record"}
    manual = load_yaml(PROMETHEUS_DIR / "tests" / "manual-baseline.yml")["groups"]
    return names | {r["record"] for g in manual for r in g["rules"]}


# -- metric names -----------------------------------------------------------------------------

_FUNCTIONS = {
    "abs", "avg", "avg_over_time", "bottomk", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "count",
    "count_values", "delta", "deriv", "floor", "group", "histogram_quantile", "idelta", "increase", "irate",
    "label_join", "label_replace", "last_over_time", "max", "max_over_time", "min", "min_over_time",
    "predict_linear", "quantile", "quantile_over_time", "rate", "resets", "round", "scalar", "sort",
    "sort_desc", "stddev", "stdvar", "sum", "sum_over_time", "time", "timestamp", "topk", "vector",
}  # fmt: skip
_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
_IDENT = re.compile(r"(?<![$\w:])([A-Za-z_:][A-Za-z0-9_:]*)")
# SGLang's names the dashboards fall back to (shared/research/gpu_and_server_metrics.md §4.2).
SGLANG = {
    "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:generation_tokens_total",
    "sglang:cache_hit_rate",
}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """Metric names of a PromQL expression (no parser: strings, label matchers, grouping
    clauses and range selectors are cut out, then functions and keywords dropped)."""
    e = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    e = re.sub(r"\{[^{}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    return {m for m in _IDENT.findall(e) if m not in _FUNCTIONS and m not in _KEYWORDS and not m.isdigit()}


def known_names() -> set[str]:
    """What llmload, its sidecar (both vocabularies), the simulator and SGLang export."""
    names: set[str] = set()
    from llmload.exporter import collector

    for line in collector.__doc__.splitlines():
        m = re.match(r"^(llmload_\w+)\s+(hist|counter|gauge|info)\b", line)
        if m:
            name, kind = m.groups()
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"} if kind == "hist" else {name}
    assert "llmload_ttft_seconds_bucket" in names and "llmload_baseline_tpot_seconds" in names
    for table in (gpu_names.LLMLOAD, gpu_names.DCGM):
        names |= {e.name for e in table.values()}
    names |= {gpu_names.DCGM_MEM_COPY_UTIL, gpu_names.PROCESS_MEMORY, gpu_names.UP}
    for line in render_engine_metrics(EngineStats(), (0, 0, 0.0), "m", cache_info={"block_size": "16"}):
        if not line.startswith("#"):
            names.add(re.match(r"[^{ ]+", line).group(0))
    assert "vllm:num_requests_waiting" in names and "vllm:time_to_first_token_seconds_bucket" in names
    return names | SGLANG | {"ALERTS"}


# -- Prometheus ---------------------------------------------------------------------------------


def test_promtool_check_config():
    r = promtool("check", "config", "prometheus/prometheus.yml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(RULE_FILES)} rule files found" in r.stdout + r.stderr


def test_promtool_check_rules():
    r = promtool("check", "rules", *(str(p.relative_to(ROOT)) for p in RULE_FILES))
    assert r.returncode == 0, r.stdout + r.stderr


def test_promtool_rule_unit_tests():
    """Each alert fires when its condition holds long enough, and not before or otherwise."""
    tests = sorted((PROMETHEUS_DIR / "tests").glob("*.test.yml"))
    assert len(tests) >= 2
    r = promtool("test", "rules", *(str(p.relative_to(ROOT)) for p in tests))
    assert r.returncode == 0, r.stdout + r.stderr


def test_manual_baseline_example_is_the_tested_fixture():
    """The commented example of llmload-baseline-manual.yml, uncommented, is the fixture
    the rule tests load (so the documented way to set a baseline by hand is tested)."""
    text = (PROMETHEUS_DIR / "rules" / "llmload-baseline-manual.yml").read_text()
    block = text[text.index("# groups:") :].split("\ngroups: []")[0]
    example = YAML(typ="safe").load("\n".join(line[2:] for line in block.splitlines()))
    assert load_yaml(PROMETHEUS_DIR / "rules" / "llmload-baseline-manual.yml") == {"groups": []}
    assert example == load_yaml(PROMETHEUS_DIR / "tests" / "manual-baseline.yml")
    manual = {r["record"] for g in example["groups"] for r in g["rules"]}
    baseline_rules = " ".join(q.expr for q in rule_queries() if "baseline" in q.where)
    assert all(name in baseline_rules for name in manual)


def test_scrape_jobs():
    config = load_yaml(PROMETHEUS_DIR / "prometheus.yml")
    jobs = {j["job_name"]: [t for s in j["static_configs"] for t in s["targets"]] for j in config["scrape_configs"]}
    assert jobs == {"llmload": ["master:9646"], "engine": ["sim:8000"], "gpu": ["gpu-sidecar:9401"]}
    assert config["rule_files"] == ["rules/*.yml"]


def test_alerts_cover_the_issue():
    alerts = {q.where.rsplit(" ", 1)[1]: q.expr for q in rule_queries() if q.kind == "alert"}
    assert set(alerts) == {
        "LlmloadTTFTAboveBaseline", "LlmloadTPOTAboveBaseline", "LlmloadErrorRatioHigh",
        "LlmloadEngineQueueGrowing", "LlmloadClientSaturated", "LlmloadSLOAttainmentLow",
    }  # fmt: skip
    assert "1.5 * llmload:baseline_ttft_p50_seconds" in alerts["LlmloadTTFTAboveBaseline"]
    assert "1.5 * llmload:baseline_tpot_p50_seconds" in alerts["LlmloadTPOTAboveBaseline"]
    assert "> 0.01" in alerts["LlmloadErrorRatioHigh"]
    rules = {r["alert"]: r for p in RULE_FILES for g in load_yaml(p)["groups"] for r in g["rules"] if "alert" in r}
    assert rules["LlmloadTTFTAboveBaseline"]["for"] == rules["LlmloadTPOTAboveBaseline"]["for"] == "3m"
    assert rules["LlmloadEngineQueueGrowing"]["for"] == "3m"
    records = recorded_names()
    for name in ("llmload:ttft_seconds:p50_1m", "llmload:ttft_seconds:p99_1m", "llmload:tpot_seconds:p50_1m",
                 "llmload:tpot_seconds:p99_1m", "model:llmload_output_tokens:rate1m"):  # fmt: skip
        assert name in records


# -- Grafana ----------------------------------------------------------------------------------------


def test_there_are_dashboards():
    assert DASHBOARDS, "grafana/dashboards/*.json"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_structure(path: Path):
    text = path.read_text()
    board = json.loads(text)
    assert board.get("uid") and board.get("title")
    assert "__inputs" not in board, "export without 'share externally': provisioning does not fill ${DS_...}"
    assert '"uid": "prometheus"' not in text, "datasource hard-coded: use the ${datasource} variable"

    variables = {v["name"]: v for v in board["templating"]["list"]}
    ds = variables.get("datasource")
    assert ds and ds["type"] == "datasource" and ds["query"] == "prometheus"

    panels = _panels(board["panels"])
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), f"duplicate panel ids: {sorted(i for i in ids if ids.count(i) > 1)}"
    for p in panels:
        where = f"panel {p['id']} {p.get('title')!r}"
        assert "gridPos" in p, where
        if p["type"] == "row":
            continue
        assert p.get("datasource") == {"type": "prometheus", "uid": DS_UID}, where
        assert p.get("targets"), where
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)), where
        for t in p["targets"]:
            assert t.get("datasource") == {"type": "prometheus", "uid": DS_UID}, (where, t["refId"])
            assert t.get("expr", "").strip(), (where, t["refId"])
        if p["type"] in ("timeseries", "stat"):
            assert p["fieldConfig"]["defaults"].get("unit"), f"{where}: no unit"
        for o in p.get("fieldConfig", {}).get("overrides", []):
            if o["matcher"]["id"] == "byFrameRefID":
                assert o["matcher"]["options"] in refs, (where, o["matcher"])
    # The grid: inside 24 columns, no two panels on the same cells.
    cells: dict[tuple[int, int], int] = {}
    for p in board["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["id"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"panels {cells[(x, y)]} and {p['id']} overlap"
                cells[(x, y)] = p["id"]
    for v in variables.values():
        if v["type"] == "query":
            assert v["datasource"] == {"type": "prometheus", "uid": DS_UID}, v["name"]
    for a in board["annotations"]["list"]:
        if not a.get("builtIn"):
            assert a["datasource"] == {"type": "prometheus", "uid": DS_UID}, a["name"]
            assert a["expr"].strip(), a["name"]
    # Every variable is used somewhere; no query uses one that does not exist.
    exprs = " ".join(q.expr for q in dashboard_queries(path))
    used = set(re.findall(r"\$\{?(\w+)", exprs + json.dumps([p.get("title", "") for p in panels])))
    for name in variables:
        if name != "datasource":
            assert name in used, f"variable ${name} unused"
    assert used - {"__rate_interval", "__interval", "__range"} <= set(variables), used - set(variables)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_metric_names_exist(path: Path):
    known = known_names() | recorded_names()
    for q in dashboard_queries(path):
        if q.kind == "variable":
            expr = re.match(r"label_values\((.*),\s*\w+\)$", q.expr).group(1)
        else:
            expr = q.expr
        unknown = metric_names(expr) - known
        assert not unknown, (q.where, unknown)


def test_rule_metric_names_exist():
    known = known_names() | recorded_names()
    for q in rule_queries():
        assert not metric_names(q.expr) - known, (q.where, metric_names(q.expr) - known)


def test_metric_name_extraction():
    assert metric_names(
        'histogram_quantile(0.5, sum by (class, le) (rate(llmload_ttft_seconds_bucket{class=~"$class"}[$__rate_interval])))'
    ) == {"llmload_ttft_seconds_bucket"}
    assert metric_names("a:b:c > 1.5 * max(x_y offset $__interval) and on() count_values(\"u\", z)") == {
        "a:b:c", "x_y", "z",
    }  # fmt: skip


def test_main_dashboard_has_the_five_boards():
    board = json.loads((ROOT / "grafana" / "dashboards" / "llmload.json").read_text())
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    for words in ("QPS and concurrency", "TTFT and TPOT", "queue depth", "GPU: utilization and bandwidth",
                  "KV cache and memory"):  # fmt: skip
        assert any(words in r for r in rows), (words, rows)
    variables = {v["name"] for v in board["templating"]["list"]}
    assert {"class", "model", "engine_model", "gpu_host", "degradation"} <= variables
    queries = dashboard_queries(ROOT / "grafana" / "dashboards" / "llmload.json")
    panel_exprs = [q.expr for q in queries if q.kind == "panel"]
    # Client request series are filtered by class and model wherever they are per class.
    for e in panel_exprs:
        if re.search(r"llmload_(requests_total|output_tokens_total|in_flight_requests)", e):
            assert 'class=~"$class"' in e and 'model=~"$model"' in e, e
    # GPU series: llmload's sidecar names or dcgm-exporter's, in the same query.
    for e in panel_exprs:
        if re.search(r"llmload_gpu_(?!process_memory)", e):
            assert "DCGM_FI_" in e, e
    # The 1.5x baseline line on the TTFT and TPOT panels.
    panels = {p["title"]: p for p in _panels(board["panels"])}
    for title in ("TTFT p50 / p99 by class", "TPOT p50 / p99 by class"):
        exprs = [t["expr"] for t in panels[title]["targets"]]
        assert any("llmload_baseline_" in e and "$degradation" in e for e in exprs), title
    assert [v for v in board["templating"]["list"] if v["name"] == "degradation"][0]["current"]["value"] == "1.5"
    # Static thresholds drawn as lines somewhere (error ratio, KV cache, worker CPU ...).
    styles = [p["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] for p in panels.values()
              if p["type"] == "timeseries"]  # fmt: skip
    assert sum(s != "off" for s in styles) >= 5
    # Ladder step annotations.
    annotations = [a for a in board["annotations"]["list"] if not a.get("builtIn")]
    assert any("llmload_ladder_step" in a["expr"] and "users" in a["textFormat"] for a in annotations)
    # One panel overlays client TTFT, engine queue depth and GPU bandwidth on one time axis.
    overlay = [p for p in panels.values() if p["type"] == "timeseries"
               and any("llmload_ttft_seconds" in t["expr"] for t in p["targets"])
               and any("vllm:num_requests_waiting" in t["expr"] for t in p["targets"])
               and any("memory_bandwidth" in t["expr"] or "DRAM_ACTIVE" in t["expr"] for t in p["targets"])]  # fmt: skip
    assert overlay
    units = {o["properties"][0]["value"] for o in overlay[0]["fieldConfig"]["overrides"]
             if o["properties"][0]["id"] == "unit"}  # fmt: skip
    assert {"short", "percentunit"} <= units and overlay[0]["fieldConfig"]["defaults"]["unit"] == "s"


def test_grafana_provisioning_matches_compose():
    compose = load_yaml(COMPOSE)
    grafana = compose["services"]["grafana"]
    mounts = dict(v.split(":")[:2] for v in grafana["volumes"] if v.startswith("./"))
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    datasource = load_yaml(ROOT / "grafana/provisioning/datasources/prometheus.yml")["datasources"][0]
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == "http://prometheus:9090"
    assert "9090:9090" in compose["services"]["prometheus"]["ports"]
    scrape = load_yaml(PROMETHEUS_DIR / "prometheus.yml")["global"]["scrape_interval"]
    assert datasource["jsonData"]["timeInterval"] == scrape
    provider = load_yaml(ROOT / "grafana/provisioning/dashboards/llmload.yml")["providers"][0]
    assert mounts["./grafana/dashboards"] == provider["options"]["path"]
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith(provider["options"]["path"] + "/")
    assert (ROOT / "grafana/dashboards" / Path(home).name).is_file()
    assert grafana["environment"]["GF_AUTH_ANONYMOUS_ENABLED"] == "true"
    assert grafana["environment"]["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"


# -- docker compose -------------------------------------------------------------------------------


def compose_validator():
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_compose_file_matches_the_compose_specification():
    validator = compose_validator()
    doc = load_yaml(COMPOSE)
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(doc)]
    assert not errors, errors
    # The schema is live: a misspelt key, a profile that is not a list and a port mapping
    # with an unknown field are refused.
    bad = load_yaml(COMPOSE)
    bad["services"]["worker"]["scale_to"] = 4
    bad["services"]["gpu-sidecar"]["profiles"] = "gpu"
    bad["services"]["master"]["ports"] = [{"target": 8089, "exposed": True}]
    assert len(list(validator.iter_errors(bad))) >= 3


def test_compose_services():
    compose = load_yaml(COMPOSE)
    s = compose["services"]
    assert set(s) == {"sim", "master", "worker", "gpu-sidecar", "prometheus", "grafana"}
    target = "${LLMLOAD_TARGET:-http://sim:8000}"
    # The simulator is the default target, with the healthy preset, listening on all interfaces.
    assert s["sim"]["command"][:3] == ["sim", "--preset", "${LLMLOAD_SIM_PRESET:-healthy}"]
    assert "0.0.0.0" in s["sim"]["command"] and "8000:8000" in s["sim"]["ports"]
    # Master: web UI 8089 and the exporter 9646; the target is one variable.
    master = s["master"]
    assert master["command"][:2] == ["run", "--master"]
    assert {"8089:8089", "9646:9646"} <= set(master["ports"])
    assert master["environment"]["LOCUST_HOST"] == target
    assert s["prometheus"]["environment"]["LLMLOAD_TARGET"] == target
    # Workers: scalable (no fixed name or host port), pointed at the master service.
    worker = s["worker"]
    assert worker["command"] == ["run", "--worker", "--master-host", "master"]
    assert "ports" not in worker and "container_name" not in worker
    assert worker["environment"]["LOCUST_HOST"] == target
    # The GPU sidecar only under the `gpu` profile, with an NVIDIA device reservation.
    gpu = s["gpu-sidecar"]
    assert gpu["profiles"] == ["gpu"] and gpu["command"][0] == "gpu-sidecar"
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert all("profiles" not in svc for name, svc in s.items() if name != "gpu-sidecar")
    # Every llmload service runs the image built from this repository's Dockerfile.
    for name in ("sim", "master", "worker", "gpu-sidecar"):
        assert s[name]["build"]["context"] == "." and s[name]["image"] == "${LLMLOAD_IMAGE:-llmload:local}", name
    # Prometheus' scrape targets are the compose services and ports.
    jobs = {j["job_name"]: j["static_configs"][0]["targets"][0]
            for j in load_yaml(PROMETHEUS_DIR / "prometheus.yml")["scrape_configs"]}  # fmt: skip
    assert jobs["llmload"] == "master:9646" and "--exporter-port" in master["command"]
    assert master["command"][master["command"].index("--exporter-port") + 1] == "9646"
    assert master["command"][master["command"].index("--exporter-host") + 1] == "0.0.0.0"  # default: 127.0.0.1
    assert jobs["engine"] == "sim:8000" and jobs["gpu"] == "gpu-sidecar:9401"
    assert gpu["command"][gpu["command"].index("--port") + 1] == "9401"
    assert "./prometheus:/etc/prometheus:ro" in s["prometheus"]["volumes"]


def _prometheus_entrypoint(tmp_path: Path, target: str | None) -> str:
    """Run the prometheus service's entrypoint script (as compose hands it to sh) with the
    shipped config; return the config it writes, which must pass promtool."""
    service = load_yaml(COMPOSE)["services"]["prometheus"]
    assert service["entrypoint"] == ["/bin/sh", "-c"]
    script = service["command"][0].replace("$$", "$")  # compose's escape for a literal $
    script = script.replace("/etc/prometheus", str(PROMETHEUS_DIR)).replace("/prometheus/llmload", str(tmp_path))
    lines = script.splitlines()
    assert lines[-1].startswith("exec /bin/prometheus --config.file=")
    script = "\n".join([*lines[:-1], "exit 0"])
    env = {"PATH": "/usr/bin:/bin", "LLMLOAD_TARGET": target or "http://sim:8000"}
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    check = promtool("check", "config", str(tmp_path / "prometheus.yml"))
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"{len(RULE_FILES)} rule files found" in check.stdout + check.stderr
    return (tmp_path / "prometheus.yml").read_text()


def test_compose_prometheus_targets_llmload_target(tmp_path):
    default = _prometheus_entrypoint(tmp_path / "a", None)
    assert default == (PROMETHEUS_DIR / "prometheus.yml").read_text()  # the simulator stays the target
    real = _prometheus_entrypoint(tmp_path / "b", "https://vllm.example.com:8443/v1")
    config = YAML(typ="safe").load(real)
    engine = next(j for j in config["scrape_configs"] if j["job_name"] == "engine")
    assert engine["static_configs"][0]["targets"] == ["vllm.example.com:8443"]
    assert engine["scheme"] == "https"
    assert real.count("vllm.example.com") == 1 and "'sim:8000'" not in real


# -- Dockerfile ------------------------------------------------------------------------------------


def test_dockerfile():
    lines = [x.strip() for x in (ROOT / "Dockerfile").read_text().splitlines() if x.strip() and not x.startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    assert 'ENTRYPOINT ["llmload"]' in lines
    ignored = [x.strip() for x in (ROOT / ".dockerignore").read_text().splitlines() if x.strip() and x[0] != "#"]
    assert {".git", ".venv", "runs", "tests"} <= set(ignored)
    for line in lines:
        if line.startswith("COPY"):
            *sources, _dest = line.split()[1:]
            for src in sources:
                assert (ROOT / src).exists(), src
                assert src.rstrip("/") not in ignored, f"{src} is excluded by .dockerignore"
    assert any('pip install ".[gpu]"' in x for x in lines)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^gpu = \[", pyproject, re.M)
    exposed = next(x for x in lines if x.startswith("EXPOSE")).split()[1:]
    assert {"8089", "5557", "9646", "8000", "9401"} == set(exposed)


# -- Kubernetes -------------------------------------------------------------------------------------


def test_kubernetes_manifests():
    kustomization = load_yaml(KUBERNETES / "kustomization.yaml")
    docs = {}
    for path in sorted(KUBERNETES.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for d in load_yaml_all(path):
            assert d["apiVersion"] and d["kind"] and d["metadata"]["name"], path
            docs[(d["kind"], d["metadata"]["name"])] = d
    for resource in kustomization["resources"]:
        assert (KUBERNETES / resource).is_file(), resource
    master_svc = docs[("Service", "llmload-master")]
    master = docs[("Deployment", "llmload-master")]
    worker = docs[("Deployment", "llmload-worker")]
    svc_ports = {p["name"]: p["port"] for p in master_svc["spec"]["ports"]}
    assert svc_ports == {"web": 8089, "master": 5557, "metrics": 9646}
    assert master_svc["metadata"]["annotations"]["prometheus.io/port"] == "9646"
    container = master["spec"]["template"]["spec"]["containers"][0]
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == svc_ports
    assert container["args"][:2] == ["run", "--master"]
    assert container["args"][container["args"].index("--exporter-port") + 1] == "9646"
    assert container["args"][container["args"].index("--exporter-host") + 1] == "0.0.0.0"  # scraped at the pod's IP
    # Selectors select the pods.
    for dep in (master, worker):
        assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert master_svc["spec"]["selector"].items() <= master["spec"]["template"]["metadata"]["labels"].items()
    # Workers find the master through its Service; both read the same ConfigMap.
    wc = worker["spec"]["template"]["spec"]["containers"][0]
    assert wc["args"] == ["run", "--worker", "--master-host", master_svc["metadata"]["name"]]
    config = docs[("ConfigMap", "llmload-config")]
    assert config["data"]["LOCUST_HOST"].startswith("http")
    for c in (container, wc):
        assert c["envFrom"] == [{"configMapRef": {"name": "llmload-config"}}]
        assert c["image"].split(":")[0] == kustomization["images"][0]["name"]
    # The optional ServiceMonitor scrapes the master's metrics port.
    monitor = docs[("ServiceMonitor", "llmload-master")]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= master_svc["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    assert (KUBERNETES / "README.md").is_file()
