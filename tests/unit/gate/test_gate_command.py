"""``llmload gate`` end to end on saved summaries: exit codes, --max-regression, JSON, JUnit, the console table."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from llmload.cli import main
from llmload.errors import ConfigError
from llmload.gate.limits import DEFAULT_LIMITS, parse_limits
from llmload.results import to_summary
from tests.unit.gate.test_decide import run


def _save(tmp_path: Path, name: str, result) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(to_summary(result)))
    return str(path)


def test_limits_over_the_defaults():
    assert parse_limits("") == dict(DEFAULT_LIMITS)
    got = parse_limits("ttft_p99=10%,tpot_p50=0.03,e2e_p99=off,tpot_p99=10%")
    assert got["ttft_p99"] == 0.10 and got["tpot_p50"] == 0.03 and "e2e_p99" not in got and got["tpot_p99"] == 0.10
    assert parse_limits("none,ttft_p50=5%") == {"ttft_p50": 0.05}
    for bad, says in (("ttft_p98=5%", "unknown metric"), ("ttft_p99", "write METRIC=LIMIT"),
                      ("ttft_p99=fast", "not a share"), ("none", "no metric left")):  # fmt: skip
        with pytest.raises(ConfigError, match=says):
            parse_limits(bad)


def test_fail_exits_1_with_the_table_json_and_junit(tmp_path, capsys):
    base, cand = _save(tmp_path, "base", run()), _save(tmp_path, "cand", run(itl=12.0, seed=2))
    out, junit = tmp_path / "gate.json", tmp_path / "gate.xml"
    assert main(["gate", base, cand, "--out", str(out), "--junit", str(junit)]) == 1
    text = capsys.readouterr().out
    assert text.startswith("llmload gate: FAIL: ") and "tpot_p50" in text.splitlines()[0]
    row = next(ln for ln in text.splitlines() if ln.strip().startswith("overall") and "itl_p50" in ln)
    assert row.rstrip().endswith("FAIL") and "+5 %" in row
    assert "exit code 1" in text
    doc = json.loads(out.read_text())
    assert doc["schema"] == "llmload.gate/1" and doc["status"] == "FAIL" and doc["exit_code"] == 1
    failed = [c for c in doc["checks"] if c["status"] == "FAIL"]
    assert {c["metric"] for c in failed} == {"tpot_p50", "itl_p50"} and failed[0]["baseline"]["ci95"]
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("failures") == str(len(failed))
    names = {(c.get("classname"), c.get("name")) for c in suite.iter("testcase") if c.find("failure") is not None}
    assert ("llmload.gate.overall", "tpot_p50 regression <= +5 %") in names


def test_pass_exits_0_and_json_on_stdout(tmp_path, capsys):
    base, cand = _save(tmp_path, "base", run()), _save(tmp_path, "cand", run(seed=5))
    assert main(["gate", base, cand, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "PASS" and doc["not_comparable"] == [] and len(doc["checks"]) == 3 * len(DEFAULT_LIMITS)


def test_inconclusive_exits_3_and_bad_input_exits_2(tmp_path, capsys):
    base, thin = _save(tmp_path, "base", run()), _save(tmp_path, "thin", run(n=10, seed=3))
    assert main(["gate", base, thin]) == 3
    assert "a p99 interval needs at least 368" in capsys.readouterr().out
    assert main(["gate", base, str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("llmload gate: error: ") and "nope.json" in err and err.count("\n") == 1
    assert main(["gate", base, base, "--max-regression", "ttft_p98=5%"]) == 2
    assert "unknown metric" in capsys.readouterr().err
    assert main(["gate", base, base, "--allow-different", "colour"]) == 2


def test_help_prints_the_default_limits(capsys):
    """The defaults hold '%' ('ttft_p99=15%'): argparse formats help with %, so they are escaped (a ValueError before)."""
    with pytest.raises(SystemExit) as e:
        main(["gate", "--help"])
    assert e.value.code == 0 and "ttft_p99=15%" in capsys.readouterr().out.replace("\n", "").replace(" ", "")
