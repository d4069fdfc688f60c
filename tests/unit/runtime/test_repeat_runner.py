"""``llmload run --repeat N``: N child runs of the same command line, fresh seeds, one run directory, the aggregate."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

from llmload.cli import main
from llmload.config.repeat import split_repeat
from llmload.runtime.repeat_runner import exit_code, run_repeated
from tests.helpers import samples

ARGS = ["--headless", "-u", "2", "-t", "5s", "--host", "http://127.0.0.1:9", "--ladder", "1,2"]


class FakeRuns:
    """Each call writes a ladder summary whose TTFT p99 grows by 10 ms per repetition; returns ``codes`` in order."""

    def __init__(self, codes=(0, 0, 0), write=True):
        self.codes, self.write, self.cmds = list(codes), write, []

    def __call__(self, cmd: list[str]) -> int:
        self.cmds.append(cmd)
        i = len(self.cmds) - 1
        s = copy.deepcopy(samples.ladder_summary())
        s["overall"]["ttft_ms"]["p99"] = 100.0 + 10 * i
        s["config"]["seed"] = int(cmd[cmd.index("--seed") + 1])
        if self.write:
            Path(cmd[cmd.index("--summary-json") + 1]).write_text(json.dumps(s))
        return self.codes[i]


def _run(tmp_path, extra, fake, pauses):
    cfg = split_repeat([*ARGS, "--runs-dir", str(tmp_path / "runs"), *extra])
    out = io.StringIO()
    return run_repeated(cfg, out, call=fake, sleep=pauses.append), out.getvalue()


def test_three_repetitions_fresh_seeds_one_directory_and_the_aggregate(tmp_path):
    fake, pauses = FakeRuns(), []
    code, out = _run(tmp_path, ["--repeat", "3", "--repeat-pause", "4s", "--seed", "40"], fake, pauses)
    assert code == 0 and pauses == [4.0, 4.0]
    seeds = [c[c.index("--seed") + 1] for c in fake.cmds]
    assert seeds == ["40", "41", "42"]
    assert all(
        c[c.index("run") + 1 :][: len(ARGS)] == ARGS and "--repeat" not in c and "--no-run-dir" in c for c in fake.cmds
    )
    (folder,) = (tmp_path / "runs").iterdir()
    assert folder.name.endswith("-default-x3")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "findings.json", "rep-1.summary.json",
        "rep-2.summary.json", "rep-3.summary.json", "summary.json", "verdict.json"]  # fmt: skip
    summary = json.loads((folder / "summary.json").read_text())
    rep = summary["repeat"]
    assert rep["runs"] == 3 and rep["seeds"] == [40, 41, 42] and rep["exit_codes"] == [0, 0, 0]
    p99 = rep["aggregate"]["overall"]["ttft_p99_ms"]
    assert (p99["median"], p99["min"], p99["max"], p99["values"]) == (110.0, 100.0, 120.0, [100.0, 110.0, 120.0])
    safe = samples.ladder_summary()["verdict"]["safe_users"]
    assert rep["safe"]["text"] == f"safe {safe} users in 3 of 3 runs"
    assert f"repeated 3 runs (seeds 40..42): safe {safe} users in 3 of 3 runs" in out
    assert any(ln.split()[:3] == ["overall", "ttft_p99_ms", "110"] for ln in out.splitlines())


def test_the_gate_reads_the_aggregate(tmp_path, capsys):
    _run(tmp_path / "a", ["--repeat", "3", "--seed", "1"], FakeRuns(), [])
    _run(tmp_path / "b", ["--repeat", "3", "--seed", "9"], FakeRuns(), [])
    a, b = (next((tmp_path / x / "runs").iterdir()) for x in "ab")
    main(["gate", str(a), str(b), "--json"])
    doc = json.loads(capsys.readouterr().out)
    check = next(c for c in doc["checks"] if c["scope"] == "overall" and c["metric"] == "ttft_p99")
    assert check["baseline"]["value"] == 110.0 and check["baseline"]["ci95"] == [100.0, 120.0]


def test_bad_input_stops_after_the_first_and_codes_combine(tmp_path):
    fake = FakeRuns(codes=(2, 0), write=False)
    code, out = _run(tmp_path, ["--repeat", "2"], fake, [])
    assert code == 2 and len(fake.cmds) == 1 and "nothing to aggregate" in out
    assert exit_code([0, 3, 1]) == 1 and exit_code([0, 3]) == 3 and exit_code([0, 0]) == 0 and exit_code([1, 2]) == 2


def test_summary_json_without_run_directory_keeps_the_repetitions_beside_it(tmp_path):
    cfg = split_repeat([*ARGS, "--repeat", "2", "--no-run-dir", "--summary-json", str(tmp_path / "s.json")])
    code = run_repeated(cfg, io.StringIO(), call=FakeRuns(codes=(0, 1)), sleep=lambda s: None)
    assert code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.rep-1.summary.json", "s.rep-2.summary.json"]
    assert json.loads((tmp_path / "s.json").read_text())["repeat"]["exit_codes"] == [0, 1]


def test_the_cli_says_a_bad_repeat_in_one_line_before_any_run(capsys):
    assert main(["run", *ARGS, "--repeat", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("llmload: error: --repeat '0'") and err.count("\n") == 1
