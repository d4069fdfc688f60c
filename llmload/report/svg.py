"""A small SVG line-chart writer for the HTML report: no plotting library needed.

One :class:`Chart` (lines, horizontal reference rules, vertical marks, shaded x-bands,
highlighted points, stacked bars) renders to one self-contained ``<svg>`` element with
:func:`render_chart`: presentation attributes only (no stylesheet, no fonts, no URLs),
scaled to its container's width through ``viewBox``. Missing values (``None``) break a
line. The y axis starts at 0 unless ``y_min`` says otherwise; ticks are 1-2-5 steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

__all__ = ["Band", "Bar", "Chart", "HRule", "Line", "Point", "VMark", "nice_ticks", "render_chart"]

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK, MUTED, GRID, AXIS = "#1f2937", "#6b7280", "#e5e7eb", "#9ca3af"
LEFT, RIGHT, BOTTOM = 58, 18, 44  # margins around the plot area (tick labels, axis title)


@dataclass(frozen=True, slots=True)
class Line:
    label: str
    points: Sequence[tuple[float, float | None]]
    color: str
    dashed: bool = False
    markers: bool = False


@dataclass(frozen=True, slots=True)
class HRule:
    """A horizontal reference line (baseline, limit), labelled at its right end."""

    y: float
    label: str
    color: str
    dashed: bool = True


@dataclass(frozen=True, slots=True)
class VMark:
    """A vertical line at ``x`` (a step boundary), labelled at the top."""

    x: float
    label: str
    color: str = AXIS
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Band:
    """A shaded x-range (steady windows, the safe zone), labelled at its top left."""

    x0: float
    x1: float
    color: str
    opacity: float = 0.1
    label: str = ""


@dataclass(frozen=True, slots=True)
class Point:
    """A highlighted point (the breach): a ringed dot and a label."""

    x: float
    y: float
    label: str
    color: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A stacked bar at ``x``: ``segments`` (value, colour) from the bottom up."""

    x: float
    segments: Sequence[tuple[float, str]]
    width: float = 0.6  # in x units

    @property
    def total(self) -> float:
        return sum(v for v, _ in self.segments)


def _fmt_tick(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


@dataclass(frozen=True)
class Chart:
    """A line chart; ``x_ticks`` (position, label) makes a categorical x axis."""

    title: str
    x_label: str
    y_label: str
    lines: Sequence[Line]
    rules: Sequence[HRule] = ()
    marks: Sequence[VMark] = ()
    bands: Sequence[Band] = ()
    points: Sequence[Point] = ()
    bars: Sequence[Bar] = ()
    x_ticks: Sequence[tuple[float, str]] | None = None
    x_range: tuple[float, float] | None = None
    x_format: Callable[[float], str] = _fmt_tick
    y_format: Callable[[float], str] = _fmt_tick
    y_min: float = 0.0
    y_max: float | None = None
    width: int = 540
    height: int = 300


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round ticks (1, 2, 5 × 10^k steps) covering ``lo``..``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9) * step
    ticks, v = [], first
    while v < hi + step * 0.999:
        ticks.append(round(v, 12))
        v += step
    return ticks


def _attrs(**kw: object) -> str:
    return " ".join(f"{k.rstrip('_').replace('_', '-')}={quoteattr(str(v))}" for k, v in kw.items() if v is not None)


def _text(x: float, y: float, text: str, size: int = 12, fill: str = MUTED, anchor: str = "start", **kw: object) -> str:
    a = _attrs(x=f"{x:.1f}", y=f"{y:.1f}", font_size=size, fill=fill, text_anchor=anchor, **kw)
    return f"<text {a}>{escape(text)}</text>"


def _path(points: list[tuple[float, float]]) -> str:
    return " ".join(("M" if i == 0 else "L") + f"{x:.1f},{y:.1f}" for i, (x, y) in enumerate(points))


def _runs(pts: Sequence[tuple[float, float | None]]) -> list[list[tuple[float, float]]]:
    """The point lists between missing values."""
    out: list[list[tuple[float, float]]] = [[]]
    for x, y in pts:
        if y is None or not math.isfinite(y):
            if out[-1]:
                out.append([])
        else:
            out[-1].append((x, y))
    return [r for r in out if r]


@dataclass(frozen=True, slots=True)
class _Frame:
    """The plot area in pixels and the data ranges it maps."""

    left: float
    top: float
    pw: float
    ph: float
    x0: float
    x1: float
    y0: float
    y1: float

    def sx(self, x: float) -> float:
        return self.left + (x - self.x0) / (self.x1 - self.x0) * self.pw

    def sy(self, y: float) -> float:
        return self.top + self.ph - (min(max(y, self.y0), self.y1) - self.y0) / (self.y1 - self.y0) * self.ph

    def hline(self, y: float, stroke: str, width: float = 1, dash: str | None = None) -> str:
        a = _attrs(x1=self.left, x2=self.left + self.pw, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke=stroke, stroke_width=width, stroke_dasharray=dash)
        return f"<line {a}/>"

    def vline(self, x: float, y1: float, y2: float, stroke: str, dash: str | None = None) -> str:
        return f"<line {_attrs(x1=f'{x:.1f}', x2=f'{x:.1f}', y1=f'{y1:.1f}', y2=f'{y2:.1f}', stroke=stroke, stroke_dasharray=dash)}/>"


def _frame(c: Chart, top: float) -> tuple[_Frame, list[float]]:
    xs = [x for ln in c.lines for x, y in ln.points if y is not None] + [m.x for m in c.marks] + [p.x for p in c.points]
    xs += [b.x for b in c.bars]
    x0, x1 = c.x_range or ((min(xs), max(xs)) if xs else (0.0, 1.0))
    if x1 <= x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    ys = [y for ln in c.lines for _, y in ln.points if y is not None and math.isfinite(y)]
    ys += [r.y for r in c.rules] + [p.y for p in c.points] + [b.total for b in c.bars]
    top_value = c.y_max if c.y_max is not None else (max(ys) * 1.08 if ys and max(ys) > c.y_min else c.y_min + 1)
    yt = nice_ticks(c.y_min, top_value)
    y1 = c.y_max if c.y_max is not None else yt[-1]
    f = _Frame(LEFT, top, c.width - LEFT - RIGHT, c.height - top - BOTTOM, x0, x1, yt[0], y1)
    return f, [v for v in yt if v <= y1]


def _axes(c: Chart, f: _Frame, y_ticks: list[float]) -> list[str]:
    out = []
    for v in y_ticks:
        out += [f.hline(f.sy(v), GRID), _text(f.left - 8, f.sy(v) + 4, c.y_format(v), anchor="end")]
    ticks = c.x_ticks if c.x_ticks is not None else [(v, c.x_format(v)) for v in nice_ticks(f.x0, f.x1, 6) if f.x0 <= v <= f.x1]
    bottom = f.top + f.ph
    for xv, label in ticks:
        out += [f.vline(f.sx(xv), bottom, bottom + 5, AXIS), _text(f.sx(xv), bottom + 18, label, anchor="middle")]
    out.append(f.hline(bottom, AXIS))
    return out


def _bands(c: Chart, f: _Frame) -> list[str]:
    out = []
    for b in c.bands:
        bx0, bx1 = f.sx(max(b.x0, f.x0)), f.sx(min(b.x1, f.x1))
        if bx1 > bx0:
            a = _attrs(x=f"{bx0:.1f}", y=f.top, width=f"{bx1 - bx0:.1f}", height=f.ph, fill=b.color, fill_opacity=b.opacity)
            out.append(f"<rect {a}/>")
            if b.label:
                out.append(_text(bx0 + 4, f.top + 13, b.label, 11, b.color, font_weight=600))
    return out


def _references(c: Chart, f: _Frame) -> list[str]:
    """Vertical marks and horizontal rules: over the grid, under the lines."""
    out = []
    for m in c.marks:
        if f.x0 <= m.x <= f.x1:
            out.append(f.vline(f.sx(m.x), f.top, f.top + f.ph, m.color, "3 3" if m.dashed else None))
            if m.label:
                out.append(_text(f.sx(m.x) + 3, f.top - 4, m.label, 11, MUTED))
    return out + [f.hline(f.sy(r.y), r.color, 1.5, "5 4" if r.dashed else None) for r in c.rules]


def _bars(c: Chart, f: _Frame) -> list[str]:
    out = []
    for b in c.bars:
        left, right = f.sx(b.x - b.width / 2), f.sx(b.x + b.width / 2)
        base = 0.0
        for value, color in b.segments:
            if value <= 0:
                continue
            top, bottom = f.sy(base + value), f.sy(base)
            a = _attrs(x=f"{left:.1f}", y=f"{top:.1f}", width=f"{right - left:.1f}", height=f"{bottom - top:.1f}", fill=color)
            out.append(f"<rect {a}/>")
            base += value
    return out


def _series(c: Chart, f: _Frame) -> list[str]:
    out = []
    for ln in c.lines:
        for run in _runs(ln.points):
            pts = [(f.sx(x), f.sy(y)) for x, y in run]
            a = _attrs(d=_path(pts), fill="none", stroke=ln.color, stroke_width=2, stroke_linejoin="round", stroke_dasharray="6 4" if ln.dashed else None)
            out.append(f"<path {a}/>")
            if ln.markers:
                out += [f"<circle {_attrs(cx=f'{x:.1f}', cy=f'{y:.1f}', r=3.2, fill=ln.color)}/>" for x, y in pts]
    for p in c.points:
        x, y = f.sx(p.x), f.sy(p.y)
        out.append(f"<circle {_attrs(cx=f'{x:.1f}', cy=f'{y:.1f}', r=7, fill='none', stroke=p.color, stroke_width=2)}/>")
        right = x > f.left + f.pw * 0.7  # label on the side with room
        out.append(_text(x - 11 if right else x + 11, y + 4, p.label, 12, p.color, "end" if right else "start", font_weight=600))
    return out


def render_chart(c: Chart, standalone: bool = True) -> str:
    """The chart as one ``<svg>`` element (well-formed XML).

    ``standalone=False`` leaves out the ``xmlns`` declaration, which HTML does not need
    (an ``<svg>`` inside an HTML page is in the SVG namespace by itself).
    """
    legend, rows = _legend(c.lines, c.rules, LEFT + 6.5 * len(c.y_label) + 10, c.width - RIGHT)
    f, y_ticks = _frame(c, top=30 + 17 * rows)
    xmlns = "http://www.w3.org/2000/svg" if standalone else None
    parts = [
        f"<svg {_attrs(xmlns=xmlns, viewBox=f'0 0 {c.width} {c.height}', width='100%', role='img', font_family=FONT)}>",
        f"<title>{escape(c.title)}</title>",
        f"<rect {_attrs(x=0, y=0, width=c.width, height=c.height, fill='#ffffff')}/>",
        *_bands(c, f),
        *_axes(c, f, y_ticks),
        *_references(c, f),
        *_bars(c, f),
        *_series(c, f),
        _text(f.left - 8, 16, c.y_label, 12, INK, font_weight=600),
        *legend,
        _text(f.left + f.pw / 2, c.height - 6, c.x_label, 12, MUTED, "middle"),
        "</svg>",
    ]
    return "\n".join(parts)


def _legend(lines: Sequence[Line], rules: Sequence[HRule], x_min: float, x_max: float) -> tuple[list[str], int]:
    """Swatch + label per line and rule, right-aligned from ``x_max``, wrapping rows; (svg, rows)."""
    items = [(ln.label, ln.color, ln.dashed) for ln in lines if ln.label]
    items += [(r.label, r.color, r.dashed) for r in rules if r.label]
    out: list[str] = []
    rows, x = 1, x_max
    for label, color, dashed in reversed(items):
        width = 6.4 * len(label) + 32
        if x - width < x_min and x < x_max:
            rows, x = rows + 1, x_max
        x -= width
        y = 16 + 17 * (rows - 1)
        dash = "5 3" if dashed else None
        out.append(f"<line {_attrs(x1=f'{x:.1f}', x2=f'{x + 18:.1f}', y1=y - 4, y2=y - 4, stroke=color, stroke_width=2.5, stroke_dasharray=dash)}/>")
        out.append(_text(x + 23, y, label, 12, INK))
    return out, rows
