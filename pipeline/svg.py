"""Small inline SVG charts for the verification report: no plotting library, no network.

:func:`bar_chart` draws horizontal bars, one per labelled value, with an optional marker per
bar (a bound to compare against) and an optional log scale (state counts span decades).
Values that are not finite are drawn as a full bar labelled "unbounded". Everything is escaped;
the output is a ``<svg>`` element to paste into HTML.

Examples
--------
>>> svg = bar_chart([("a", 3), ("b", 1)], title="demo", unit="x")
>>> svg.startswith("<svg") and "demo" in svg and "3 x" in svg
True
>>> ">1 rebalance<" in bar_chart([("a", 1)], title="demo", unit="rebalances")
True
"""

from __future__ import annotations

import math
from html import escape

__all__ = ["bar_chart"]

_PALETTE = {"pass": "#2e7d32", "finding": "#ef6c00", "bad": "#c62828", "neutral": "#546e7a", "marker": "#111111"}


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return "unbounded"
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"


def _unit(value: float, unit: str) -> str:
    """``unit`` as said after ``value``: "1 rebalance", "2 rebalances" (a symbol like "s" stays)."""
    if value == 1 and len(unit) > 2 and unit.endswith("s"):
        return unit[:-1]
    return unit


def bar_chart(
    rows: list[tuple[str, float]],
    *,
    title: str,
    unit: str = "",
    markers: dict[str, float] | None = None,
    marker_label: str = "bound",
    colors: dict[str, str] | None = None,
    log: bool = False,
    width: int = 820,
) -> str:
    """Horizontal bars for ``(label, value)`` rows; ``markers[label]`` draws a tick at a value.

    ``colors[label]`` names a palette entry (``pass``, ``finding``, ``bad``, ``neutral``) or a
    CSS colour.
    """
    markers = markers or {}
    colors = colors or {}
    bar_h, gap, left, right, top = 18, 6, 230, 190, 34
    height = top + len(rows) * (bar_h + gap) + 28
    finite = [v for _, v in rows if math.isfinite(v)] + [v for v in markers.values() if math.isfinite(v)]
    top_value = max(finite + [1.0])
    span = width - left - right

    def x(value: float) -> float:
        if not math.isfinite(value):
            return span
        if log:
            return span * math.log10(1 + max(value, 0)) / math.log10(1 + top_value)
        return span * max(value, 0) / top_value

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="12">',
        f'<text x="{left}" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top - 6}" x2="{left}" y2="{height - 22}" stroke="#999"/>',
    ]
    for i, (label, value) in enumerate(rows):
        y = top + i * (bar_h + gap)
        color = colors.get(label, "neutral")
        fill = _PALETTE.get(color, color)
        w = x(value)
        out.append(f'<text x="{left - 8}" y="{y + bar_h - 5}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{escape(fill)}" rx="2">'
                   f'<title>{escape(label)}: {escape(_fmt(value))} {escape(_unit(value, unit))}</title></rect>')
        text = f"{_fmt(value)} {_unit(value, unit)}".strip()
        if label in markers:
            m = markers[label]
            mx = left + x(m)
            out.append(f'<line x1="{mx:.1f}" y1="{y - 2}" x2="{mx:.1f}" y2="{y + bar_h + 2}" stroke="{_PALETTE["marker"]}" '
                       f'stroke-width="2" stroke-dasharray="3,2"><title>{escape(marker_label)}: {escape(_fmt(m))}</title></line>')
            text += f" ({marker_label} {_fmt(m)})"
        out.append(f'<text x="{left + max(w, x(markers.get(label, 0))) + 6:.1f}" y="{y + bar_h - 5}">{escape(text)}</text>')
    axis = "log scale" if log else "linear scale"
    out.append(f'<text x="{left}" y="{height - 6}" fill="#666">{escape(unit)} ({axis})</text>')
    out.append("</svg>")
    return "\n".join(out)
