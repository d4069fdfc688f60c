"""The documentation holds together: every relative link and image in README.md and docs/*.md
points at a file that exists (and, with ``#anchor``, at a heading of it), docs/index.md lists
every page, the README stays the front door (its two commands first, at most 250 lines), and
docs/design.md's layer table names exactly the packages and top-level modules that exist.

Anchors are GitHub's heading slugs: lower case, punctuation dropped except ``-`` and ``_``,
spaces to ``-``, a repeated heading numbered ``-1``, ``-2``. Links inside code (fenced blocks,
inline spans) are text, not links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:

FRONT_DOOR = """# llmload

```
make demo    # fresh machine, only python3 + make: builds .venv, starts the simulated LLM server, 60 s load, summary
make test    # builds .venv if missing, runs the whole test suite
```
"""


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, inline code spans blanked."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(INLINE_CODE.sub("", line))
    return out


def slug(heading: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [m.group(1) for line in prose_lines(path.read_text(encoding="utf-8")) for m in LINK.finditer(line)]


def broken_links(path: Path) -> list[str]:
    """``FILE: target (why)`` for each relative link of ``path`` that leads nowhere."""
    bad = []
    for target in links(path):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            bad.append(f"{path.name}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{path.name}: {target} (no heading #{anchor} in {dest.name})")
    return bad


def documents() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_heading(path):
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "b.md").write_text("# Two words: here\n\n## Again\n## Again\n", encoding="utf-8")
    (tmp_path / "a.md").write_text(
        "[ok](b.md) [ok](b.md#two-words-here) [ok](b.md#again-1) [ok](#top) ![img](b.md)\n"
        "# Top\n"
        "[gone](c.md) [gone anchor](b.md#three) ![gone image](pic.png) [web](https://example.com/x.md)\n"
        "`[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(tmp_path / "a.md") == [
        "a.md: c.md (no such file)",
        "a.md: b.md#three (no heading #three in b.md)",
        "a.md: pic.png (no such file)",
    ]


def test_github_slugs():
    assert (
        slug("Cross-check: llmload's timings next to the server's")
        == "cross-check-llmloads-timings-next-to-the-servers"
    )
    assert slug("Warm-up (issue 23)") == "warm-up-issue-23"
    assert slug("`--profile`") == "--profile"


def test_the_index_lists_every_page_and_the_readme_links_the_index():
    listed = {t.partition("#")[0] for t in links(DOCS / "index.md")}
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages - listed == set()
    assert "docs/index.md" in links(README)


def test_the_readme_is_the_front_door():
    text = README.read_text(encoding="utf-8")
    assert text.startswith(FRONT_DOOR)
    assert len(text.splitlines()) <= 250
    assert "docs/design.md" in links(README)


def _design_layer_names() -> set[str]:
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    table = text[text.index("| layer | packages | what |") :].split("\n\n", 1)[0]
    return {name for row in table.splitlines()[2:] for name in re.findall(r"`([^`]+)`", row.split("|")[2])}


def test_the_design_layer_table_names_what_exists():
    pkg = ROOT / "llmload"
    packages = {f"{d.name}/" for d in pkg.iterdir() if d.is_dir() and any(d.glob("*.py"))}
    modules = {p.name for p in pkg.glob("*.py")} - {"__init__.py"}
    named = _design_layer_names()
    locustfiles = {m for m in modules if m.startswith("locustfile")}
    assert named - {"locustfile*.py"} | locustfiles == packages | modules
