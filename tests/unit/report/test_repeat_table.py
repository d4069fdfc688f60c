"""A ``--repeat`` aggregate in the report (json/md/html) and in ``llmload compare``."""

from __future__ import annotations

import copy
import json

from llmload.cli import main
from llmload.results.repeat_aggregate import aggregate
from tests.helpers import samples


def _repeated(tmp_path, name: str, p99s: list[float]) -> str:
    reps = []
    for v in p99s:
        s = copy.deepcopy(samples.ladder_summary())
        s["overall"]["ttft_ms"]["p99"] = v
        reps.append(s)
    folder = tmp_path / name
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({**reps[0], "repeat": aggregate(reps, seeds=[1, 2, 3])}))
    return str(folder)


def test_report_files_have_the_repeated_runs_section(tmp_path, capsys):
    run = _repeated(tmp_path, "a", [100.0, 110.0, 130.0])
    assert main(["report", run]) == 0
    capsys.readouterr()
    data = json.loads((tmp_path / "a" / "report.json").read_text())
    safe = samples.ladder_summary()["verdict"]["safe_users"]
    assert data["repeat"]["headline"] == f"repeated 3 runs (seeds 1..3): safe {safe} users in 3 of 3 runs"
    row = next(r for r in data["repeat"]["rows"] if r["scope"] == "overall" and r["metric"] == "ttft_p99_ms")
    assert (row["median"], row["range"]) == ("110", "[100, 130]")
    assert "overall `ttft_p99_ms`: median 110 [100, 130]" in (tmp_path / "a" / "report.md").read_text()
    assert "<h2>Repeated runs</h2>" in (tmp_path / "a" / "report.html").read_text()


def test_compare_shows_both_sides_medians_and_ranges(tmp_path, capsys):
    a, b = _repeated(tmp_path, "a", [100.0, 110.0, 130.0]), _repeated(tmp_path, "b", [200.0, 210.0, 220.0])
    assert main(["compare", a, b]) == 0
    out = capsys.readouterr().out
    assert "repeated runs: A repeated 3 runs (seeds 1..3)" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("ttft_p99_ms"))
    assert line.split()[1:] == ["110", "[100,", "130]", "->", "210", "[200,", "220]"]
