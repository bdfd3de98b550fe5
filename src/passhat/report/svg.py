"""Inline SVG charts written from Python: no chart library, no network, nothing to load.

Every label passes through html.escape, so text from a store cannot inject markup.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 640, 300
MARGIN = {"left": 52, "right": 150, "top": 16, "bottom": 40}
COLORS = ("#1f6feb", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#495057")
FONT_PX = 11  # the charts' text size (svg.chart text in the HTML report's CSS)
SWATCH, SWATCH_GAP, ENTRY_GAP, LEGEND_ROW = 12, 4, 18, 18  # legend geometry, in pixels

# Glyph widths in em, rounded up from DejaVu Sans (the widest common sans), so an estimated label is never
# narrower than the drawn one: there are no font metrics to ask when the chart is written.
NARROW, WIDE = frozenset("iljftr.,:;'|!()[] "), frozenset("mwMW@%^=+<>#~≥≤—")


def text_width(text: str, size: float = FONT_PX) -> float:
    """An upper bound on the drawn width of text in a sans-serif font of the given pixel size."""
    em = sum(0.42 if c in NARROW else 1.0 if c in WIDE or ord(c) > 127 else 0.8 if c.isupper() else 0.64 for c in text)
    return em * size


@dataclasses.dataclass(frozen=True)
class Box:
    """A rectangle in chart pixels: (x, y) is its top-left corner."""

    x: float
    y: float
    w: float
    h: float

    def overlaps(self, other: Box) -> bool:
        return (
            self.x < other.x + other.w and other.x < self.x + self.w and self.y < other.y + other.h and other.y < self.y + self.h
        )


def legend_boxes(labels: Sequence[str], left: float, right: float, top: float) -> list[Box]:
    """Where each legend entry (swatch and label) goes: left to right, onto a new row before an entry would
    pass `right`; an entry wider than a whole row gets the row, and its label is squeezed to fit (see _legend)."""
    boxes: list[Box] = []
    x, y = left, top
    for label in labels:
        w = min(SWATCH + SWATCH_GAP + text_width(label), right - left)
        if x > left and x + w > right:
            x, y = left, y + LEGEND_ROW
        boxes.append(Box(x, y, w, LEGEND_ROW - 4))
        x += w + ENTRY_GAP
    return boxes


def _legend(labels: Sequence[str], colors: Sequence[str], boxes: Sequence[Box]) -> list[str]:
    parts = []
    for label, color, box in zip(labels, colors, boxes, strict=True):
        room = box.w - SWATCH - SWATCH_GAP
        squeeze = f' textLength="{room:.1f}" lengthAdjust="spacingAndGlyphs"' if text_width(label) > room else ""
        parts.append(
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{SWATCH}" height="{SWATCH}" fill="{color}"/>'
            f'<text class="legend" x="{box.x + SWATCH + SWATCH_GAP:.1f}" y="{box.y + 10:.1f}"{squeeze}>'
            f"{escape(label)}</text>"
        )
    return parts


@dataclasses.dataclass(frozen=True)
class Series:
    """A line through points (x, y); band, when given, is (x, lo, hi) drawn as a shaded area."""

    name: str
    points: Sequence[tuple[float, float]]
    band: Sequence[tuple[float, float, float]] = ()
    color: str = COLORS[0]
    dashed: bool = False


class _Axes:
    """Maps data to pixels: x linear or log10, y linear on [0, 1] unless told."""

    def __init__(self, x_range: tuple[float, float], log_x: bool, y_range: tuple[float, float] = (0.0, 1.0)):
        self.log_x, self.y_range = log_x, y_range
        self.x0, self.x1 = (math.log10(v) for v in x_range) if log_x else x_range
        if self.x1 == self.x0:
            self.x1 = self.x0 + 1

    def x(self, value: float) -> float:
        v = math.log10(value) if self.log_x else value
        span = WIDTH - MARGIN["left"] - MARGIN["right"]
        return MARGIN["left"] + (v - self.x0) / (self.x1 - self.x0) * span

    def y(self, value: float) -> float:
        lo, hi = self.y_range
        span = HEIGHT - MARGIN["top"] - MARGIN["bottom"]
        return MARGIN["top"] + (1 - (value - lo) / (hi - lo)) * span


def _frame(axes: _Axes, x_ticks: Sequence[float], x_label: str, y_label: str) -> list[str]:
    parts = []
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = axes.y(t)
        parts.append(f'<line x1="{MARGIN["left"]}" x2="{WIDTH - MARGIN["right"]}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{MARGIN["left"] - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in x_ticks:
        x = axes.x(t)
        parts.append(f'<text x="{x:.1f}" y="{HEIGHT - MARGIN["bottom"] + 16}" text-anchor="middle">{t:g}</text>')
    parts.append(
        f'<text x="{(WIDTH - MARGIN["right"] + MARGIN["left"]) / 2}" y="{HEIGHT - 6}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{HEIGHT / 2}" transform="rotate(-90 14 {HEIGHT / 2})" text-anchor="middle">{escape(y_label)}</text>'
    )
    return parts


def _svg(title: str, parts: list[str], height: float = HEIGHT) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height:.0f}" width="{WIDTH}" height="{height:.0f}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        + "".join(parts)
        + "</svg>"
    )


def line_chart(
    title: str, series: Sequence[Series], x_ticks: Sequence[float], x_label: str, y_label: str, log_x: bool = False
) -> str:
    """Lines with optional shaded bands; a legend on the right names each series."""
    axes = _Axes((min(x_ticks), max(x_ticks)), log_x)
    parts = _frame(axes, x_ticks, x_label, y_label)
    for i, s in enumerate(series):
        if s.band:
            upper = " ".join(f"{axes.x(x):.1f},{axes.y(hi):.1f}" for x, _, hi in s.band)
            lower = " ".join(f"{axes.x(x):.1f},{axes.y(lo):.1f}" for x, lo, _ in reversed(s.band))
            parts.append(f'<polygon points="{upper} {lower}" fill="{s.color}" class="band"/>')
        path = " ".join(f"{axes.x(x):.1f},{axes.y(y):.1f}" for x, y in s.points)
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        parts.append(f'<polyline points="{path}" fill="none" stroke="{s.color}" stroke-width="2"{dash} class="line"/>')
        if len(s.points) == 1 or not log_x:
            parts += [f'<circle cx="{axes.x(x):.1f}" cy="{axes.y(y):.1f}" r="3" fill="{s.color}"/>' for x, y in s.points]
        ly = MARGIN["top"] + 14 + 18 * i
        lx = WIDTH - MARGIN["right"] + 10
        parts.append(f'<line x1="{lx}" x2="{lx + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{s.color}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{lx + 24}" y="{ly}">{escape(s.name)}</text>')
    return _svg(title, parts)


def bar_chart(title: str, rows: Sequence[tuple[str, float, tuple[float, float] | None]], unit_max: float = 1.0) -> str:
    """Horizontal bars (label, value, optional interval drawn as a whisker), value in [0, unit_max]."""
    row_h, label_w, bar_w = 22, 170, WIDTH - 170 - 90
    parts = []
    for i, (label, value, ci) in enumerate(rows):
        y = 8 + i * row_h
        w = bar_w * value / unit_max if unit_max else 0
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" fill="{COLORS[0]}"/>')
        if ci:
            x0, x1 = (label_w + bar_w * v / unit_max for v in ci)
            parts.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y + 11}" y2="{y + 11}" class="whisker"/>')
        text = f"{value:.3f}" if unit_max == 1.0 else f"{value:g}"
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 14}">{text}</text>')
    return _svg(title, parts, height=16 + row_h * len(rows))


def stacked_bars(title: str, rows: Sequence[tuple[str, Sequence[int]]], legend: Sequence[str]) -> str:
    """One horizontal bar per row split into shares (e.g. reliable / unreliable / out of reach)."""
    row_h, label_w, bar_w = 22, 170, WIDTH - 170 - 20
    colors = (COLORS[2], "#f59f00", COLORS[4])
    boxes = legend_boxes(legend, label_w, WIDTH - 10, 4)
    parts = _legend(legend, colors, boxes)
    top = max(b.y + b.h for b in boxes) + 8
    for i, (label, counts) in enumerate(rows):
        y, x, total = top + i * row_h, float(label_w), sum(counts) or 1
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        for j, count in enumerate(counts):
            w = bar_w * count / total
            parts.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" fill="{colors[j]}"><title>{escape(legend[j])}: {count}</title></rect>'
            )
            x += w
    return _svg(title, parts, height=top + 8 + row_h * len(rows))
