"""The report's look: colour palette (shared by the charts and the page) and the page's CSS.

Colours are chosen to stay distinct for common colour-vision deficiencies (blue / orange /
teal / purple, with red and green only for the limit and the safe zone, always labelled).
"""

from __future__ import annotations

__all__ = ["CSS", "PALETTE"]

PALETTE = {
    "p50": "#2563eb",  # blue
    "p99": "#60a5fa",  # light blue, dashed
    "baseline": "#6b7280",  # grey
    "limit": "#dc2626",  # red
    "safe": "#16a34a",  # green
    "breach": "#dc2626",
    "throughput": "#0d9488",  # teal
    "requests": "#7c3aed",  # purple
    "errors": "#dc2626",
    "waiting": "#ea580c",  # orange
    "running": "#2563eb",
    "kv": "#7c3aed",
    "preemptions": "#dc2626",
    "gpu_util": "#0d9488",
    "gpu_bw": "#d97706",  # amber
    "gpu_sm": "#2563eb",
    "gen_tok": "#0d9488",
    "steady": "#2563eb",
}

CSS = """
:root { --ink:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f8fafc; --card:#ffffff;
  --ok:#16a34a; --ok-bg:#f0fdf4; --bad:#dc2626; --bad-bg:#fef2f2; --warn:#b45309; --warn-bg:#fffbeb;
  --info:#2563eb; --info-bg:#eff6ff; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 32px 48px; }
header { margin-bottom: 20px; }
.brand { font-size: 12px; font-weight: 700; letter-spacing: .08em; text-transform: uppercase; color: var(--info); }
h1 { font-size: 26px; line-height: 1.25; margin: 4px 0 6px; font-weight: 700; }
h2 { font-size: 18px; margin: 0 0 12px; font-weight: 650; }
h3 { font-size: 15px; margin: 0; font-weight: 650; }
.meta { color: var(--muted); font-size: 13.5px; margin: 0; }
.meta span + span::before { content: "·"; margin: 0 8px; color: #cbd5e1; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 20px 22px;
  margin: 0 0 18px; }
.note { color: var(--muted); font-size: 13.5px; margin: 4px 0 12px; }
.verdict { border-left: 5px solid var(--info); }
.verdict.ok { border-left-color: var(--ok); } .verdict.breach { border-left-color: var(--bad); }
.verdict.none { border-left-color: #94a3b8; }
.headline { font-size: 22px; font-weight: 700; margin: 0 0 4px; }
.verdict.ok .headline { color: var(--ok); }
.verdict.breach .sub { color: var(--bad); font-weight: 600; }
.sub { margin: 0 0 14px; font-size: 15px; }
.verdict .note { margin: 4px 0 0; } .verdict .cards + .note { margin-top: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: #fcfcfd; }
.card .k { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 21px; font-weight: 700; font-variant-numeric: tabular-nums; }
.card .d { font-size: 12.5px; color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(500px, 1fr)); gap: 14px 22px; }
figure { margin: 0; }
figcaption { font-weight: 650; font-size: 14px; margin: 0 0 2px; }
figure svg { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 8px; text-align: right; border-bottom: 1px solid var(--line); white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { font-size: 12.5px; color: var(--muted); font-weight: 600; border-bottom: 2px solid var(--line); }
thead tr.group th { border-bottom: 0; padding-bottom: 0; }
tbody tr:hover { background: #f8fafc; }
tr.total td { font-weight: 650; border-top: 2px solid var(--line); }
.tablewrap { overflow-x: auto; }
.tag { display: inline-block; font-size: 11.5px; font-weight: 650; padding: 1px 8px; border-radius: 999px;
  background: #f1f5f9; color: #475569; margin-left: 6px; vertical-align: 1px; }
.tag.safe { background: var(--ok-bg); color: var(--ok); } .tag.breach { background: var(--bad-bg); color: var(--bad); }
.tag.baseline { background: var(--info-bg); color: var(--info); } .tag.over { background: #fff7ed; color: #c2410c; }
.tag.high { background: var(--bad-bg); color: var(--bad); } .tag.medium { background: var(--warn-bg); color: var(--warn); }
.tag.low { background: #f1f5f9; color: #475569; }
td.bad { color: var(--bad); font-weight: 650; }
.finding { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 0 0 12px; }
.finding:first-of-type { border-color: #fecaca; background: #fffafa; }
.finding .head { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
.finding .rank { font-weight: 700; color: var(--muted); }
.finding .layer { color: var(--muted); font-size: 13px; }
.finding ul { margin: 8px 0; padding-left: 20px; }
.finding .change { margin: 8px 0 0; padding: 8px 12px; background: var(--info-bg); border-radius: 6px; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.chip { font-size: 12.5px; background: #f1f5f9; border-radius: 6px; padding: 2px 8px; font-variant-numeric: tabular-nums; }
.chip b { font-weight: 600; color: #334155; margin-right: 4px; }
.warnings { background: var(--warn-bg); border: 1px solid #fde68a; border-radius: 8px; padding: 10px 14px; margin: 0 0 18px; }
.warnings p { margin: 2px 0; color: #92400e; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 0; font-size: 13.5px; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
footer { color: var(--muted); font-size: 12.5px; text-align: center; margin-top: 8px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .92em; background: #f1f5f9;
  padding: 1px 5px; border-radius: 4px; }
@media print { body { background: #fff; } section { break-inside: avoid; } }
"""
