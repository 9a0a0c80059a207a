"""Charts as inline SVG: stacked bars, a sample distribution, a log-log scatter with fitted lines, a timeline.

Plain SVG with classes (colours come from the report's CSS, so dark mode and print work);
every mark has a ``<title>`` so hovering shows its value without JavaScript.
"""

from __future__ import annotations

import math
from html import escape

from jitscope.report.views.document import Chart
from jitscope.units import fmt_slope, fmt_value

W, ROW, PAD_L, PAD_R = 640, 26, 150, 16
#: Room right of a bar for its total ("12.3 ms").
LABEL_W = 56


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>')


def _legend(names: list[str], y: int) -> list[str]:
    out, x = [], PAD_L
    for i, name in enumerate(names):
        out.append(f'<rect class="c{i % 8}" x="{x}" y="{y - 9}" width="10" height="10"/>'
                   f'<text class="lab" x="{x + 14}" y="{y}">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return out


def bars(chart: Chart) -> str:
    """One stacked horizontal bar per category, a segment per series (cold-call phases)."""
    cats = chart.categories
    totals = [sum(v for s in chart.series for c, v in s.points if int(c) == i) for i in range(len(cats))]
    top = max(totals, default=0) or 1.0
    scale = (W - PAD_L - PAD_R - LABEL_W) / top  # the longest bar leaves room for its total
    body: list[str] = []
    for i, name in enumerate(cats):
        y, x = 8 + i * ROW, float(PAD_L)
        body.append(f'<text class="lab" x="{PAD_L - 6}" y="{y + 14}" text-anchor="end">{escape(name[:24])}</text>')
        for k, series in enumerate(chart.series):
            value = sum(v for c, v in series.points if int(c) == i)
            if value <= 0:
                continue
            w = value * scale
            body.append(f'<rect class="c{k % 8}" x="{x:.1f}" y="{y}" width="{max(w, 0.5):.1f}" height="18">'
                        f'<title>{escape(series.name)}: {fmt_value(value, chart.x_unit)}</title></rect>')
            x += w
        body.append(f'<text class="val" x="{x + 4:.1f}" y="{y + 14}">{fmt_value(totals[i], chart.x_unit)}</text>')
    height = 8 + len(cats) * ROW + 22
    body += _legend([s.name for s in chart.series], height - 6)
    return _svg(W, height, body, chart.title)


def distribution(chart: Chart) -> str:
    """Each sample as a dot on a time axis, with the median and the interquartile box."""
    samples = sorted(y for s in chart.series[:1] for _, y in s.points)
    if not samples:
        return ""
    lo, hi = samples[0], samples[-1]
    span = (hi - lo) or (abs(hi) or 1.0) * 0.1
    lo, hi = lo - span * 0.05, hi + span * 0.05
    x = lambda v: PAD_L + (v - lo) / (hi - lo) * (W - PAD_L - PAD_R)
    n = len(samples)
    q1, med, q3 = samples[n // 4], samples[n // 2], samples[(3 * n) // 4]
    body = [f'<text class="lab" x="{PAD_L - 6}" y="34" text-anchor="end">{escape(chart.series[0].name)}</text>',
            (f'<rect class="box" x="{x(q1):.1f}" y="14" width="{max(x(q3) - x(q1), 1):.1f}" height="32">'
            f'<title>IQR {fmt_value(q1, chart.y_unit)} .. {fmt_value(q3, chart.y_unit)}</title></rect>'),
            (f'<line class="med" x1="{x(med):.1f}" x2="{x(med):.1f}" y1="10" y2="50"><title>median '
            f'{fmt_value(med, chart.y_unit)}</title></line>')]
    for i, v in enumerate(samples):
        body.append(f'<circle class="dot" cx="{x(v):.1f}" cy="{22 + (i * 7) % 17}" r="2.5"/>')
    labels = [samples[0], samples[-1]] + ([med] if min(x(med) - x(samples[0]), x(samples[-1]) - x(med)) > 60 else [])
    for v in labels:
        body.append(f'<text class="val" x="{x(v):.1f}" y="66" text-anchor="middle">{fmt_value(v, chart.y_unit)}</text>')
    return _svg(W, 74, body, chart.title)


def _log_ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(lo), math.ceil(hi) + 1)]


def loglog(chart: Chart) -> str:
    """Points and fitted lines on log-log axes; the slope of each fit in the legend."""
    pts = [(x, y) for s in chart.series for x, y in s.points if x > 0 and y > 0]
    if not pts:
        return ""
    lx = [math.log10(x) for x, _ in pts]
    ly = [math.log10(y) for _, y in pts]
    x0, x1 = min(lx) - 0.1, max(lx) + 0.1
    y0, y1 = min(ly) - 0.2, max(ly) + 0.2
    left, right, top, bottom, height = 70, W - 16, 10, 200, 240
    px = lambda v: left + (v - x0) / (x1 - x0) * (right - left)
    py = lambda v: bottom - (v - y0) / (y1 - y0) * (bottom - top)
    body = [f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
            f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>']
    for t in _log_ticks(x0, x1):
        if x0 <= math.log10(t) <= x1:
            body.append(f'<text class="val" x="{px(math.log10(t)):.1f}" y="{bottom + 14}" text-anchor="middle">'
                        f'{fmt_value(t, chart.x_unit)}</text>')
    for t in _log_ticks(y0, y1):
        if y0 <= math.log10(t) <= y1:
            body.append(f'<text class="val" x="{left - 4}" y="{py(math.log10(t)) + 4:.1f}" text-anchor="end">'
                        f'{fmt_value(t, chart.y_unit)}</text>')
    fits = {name: (slope, icpt) for name, slope, icpt in chart.fits}
    names = []
    for k, series in enumerate(chart.series):
        for x, y in series.points:
            if x > 0 and y > 0:
                body.append(f'<circle class="c{k % 8}" cx="{px(math.log10(x)):.1f}" cy="{py(math.log10(y)):.1f}" r="4">'
                            f'<title>{escape(series.name)}: {fmt_value(y, chart.y_unit)} at {fmt_value(x, chart.x_unit)}'
                            '</title></circle>')
        fit = fits.get(series.name)
        label = series.name
        if fit is not None:
            slope, icpt = fit
            xs = [math.log10(x) for x, y in series.points if x > 0 and y > 0]
            a, b = min(xs), max(xs)
            body.append(f'<line class="fit s{k % 8}" x1="{px(a):.1f}" y1="{py(icpt + slope * a):.1f}" '
                        f'x2="{px(b):.1f}" y2="{py(icpt + slope * b):.1f}"/>')
            label += f" (slope {fmt_slope(slope)})"
        names.append(label)
    body.append(f'<text class="lab" x="{(left + right) / 2:.0f}" y="{bottom + 30}" text-anchor="middle">'
                f'{escape(chart.x_label)}</text>')
    out = _svg(W, height + 16, [*body, *_legend(names, height + 10)], chart.title)
    return out


TIMELINE_W, LANE_PAD_L, BAR_H, LABEL_H, MAX_LABEL_ROWS = 880, 170, 14, 13, 4
#: Rough width of one character of an 11px label, to keep labels from overlapping.
CHAR_W = 6.2


def nice_step(span: float, ticks: int = 8) -> float:
    """A 1-2-5 step giving at most ``ticks`` intervals over ``span``."""
    if span <= 0:
        return 1.0
    step = 10.0 ** math.floor(math.log10(span / ticks))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= ticks:
            return step * factor
    return step * 10


def _label_rows(items: list[tuple[float, str]], right: float) -> list[tuple[int, float]]:
    """Where each label at x goes: (row 0, 1, ...; -1 for none, x), so that labels in a row do not overlap
    and none runs past ``right``."""
    ends: list[float] = []
    out = []
    for x, text in items:
        if not text:
            out.append((-1, x))
            continue
        width = CHAR_W * len(text) + 6
        x = max(min(x, right - width), LANE_PAD_L)
        row = next((i for i, end in enumerate(ends) if end <= x), None)
        if row is None and len(ends) < MAX_LABEL_ROWS:
            ends.append(0.0)
            row = len(ends) - 1
        if row is not None:
            ends[row] = x + width
        out.append((-1 if row is None else row, x))
    return out


def timeline(chart: Chart) -> str:
    """A lane per category, each span a stack of phase segments at its start; labels under the bars."""
    if not chart.spans:
        return ""
    end = max(s.start + sum(s.lengths) for s in chart.spans)
    x0, x1 = chart.x_range or (min(0.0, min(s.start for s in chart.spans)), end)
    x1 = max(x1, end, x0 + 1e-9)
    right = TIMELINE_W - 16
    scale = (right - LANE_PAD_L) / (x1 - x0)
    px = lambda v: LANE_PAD_L + (v - x0) * scale
    body: list[str] = []
    y = 6
    for lane, name in enumerate(chart.categories):
        spans = sorted((s for s in chart.spans if s.lane == lane), key=lambda s: s.start)
        rows = _label_rows([(px(s.start), s.label) for s in spans], TIMELINE_W - 4)
        used = max((r + 1 for r, _ in rows), default=0)
        height = BAR_H + 6 + used * LABEL_H
        short = name if len(name) <= 26 else name[:25] + "…"
        body.append(f'<text class="lab" x="{LANE_PAD_L - 8}" y="{y + 11}" text-anchor="end">{escape(short)}'
                    f"<title>{escape(name)}</title></text>")
        for span, (row, label_x) in zip(spans, rows, strict=True):
            widths = [max(v, 0.0) * scale for v in span.lengths]
            if sum(widths) < 2:  # too short to see: widen its longest phase to 2 px
                longest = max(range(len(widths)), key=lambda k: span.lengths[k]) if widths else 0
                if widths:
                    widths[longest] += 2 - sum(widths)
            x = px(span.start)
            phases = ", ".join(f"{series.name} {fmt_value(v, chart.x_unit)}"
                               for series, v in zip(chart.series, span.lengths, strict=False) if v > 0)
            title = escape("\n".join(t for t in (span.title or span.label, phases) if t))
            parts = [f'<g class="span{" mark" if span.mark else ""}"><title>{title}</title>']
            for k, w in enumerate(widths):
                if w >= 0.05:  # thinner would print as width="0.0"
                    parts.append(f'<rect class="c{k % 8}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}"/>')
                    x += w
            if span.mark:
                start = px(span.start)
                parts.append(f'<rect class="re" x="{start - 1:.1f}" y="{y - 1}" width="{x - start + 2:.1f}" '
                             f'height="{BAR_H + 2}"/>')
            if span.label and row >= 0:
                ly = y + BAR_H + LABEL_H * (row + 1) - 2
                parts.append(f'<text class="{"relab" if span.mark else "val"}" x="{label_x:.1f}" '
                             f'y="{ly}">{escape(span.label)}</text>')
            body.append("".join(parts) + "</g>")
        body.append(f'<line class="grid" x1="{LANE_PAD_L}" x2="{right}" y1="{y + height - 2}" '
                    f'y2="{y + height - 2}"/>')
        y += height + 4
    body.append(f'<line class="axis" x1="{LANE_PAD_L}" y1="{y}" x2="{right}" y2="{y}"/>')
    step = nice_step(x1 - x0)
    tick = math.ceil(x0 / step) * step
    while tick <= x1 + step * 1e-6:
        body.append(f'<line class="axis" x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{y}" y2="{y + 4}"/>'
                    f'<text class="val" x="{px(tick):.1f}" y="{y + 16}" text-anchor="middle">'
                    f'{fmt_value(tick, chart.x_unit) if tick else "0"}</text>')
        tick += step
    if chart.x_label:
        body.append(f'<text class="val" x="{LANE_PAD_L - 8}" y="{y + 16}" text-anchor="end">'
                    f"{escape(chart.x_label)}</text>")
    legend = _legend([s.name for s in chart.series], y + 40)
    if any(s.mark for s in chart.spans):
        lx = PAD_L + sum(24 + 7 * len(s.name) for s in chart.series)
        legend.append(f'<rect class="re" x="{lx}" y="{y + 31}" width="10" height="10"/>'
                      f'<text class="lab" x="{lx + 14}" y="{y + 40}">recompile</text>')
    return _svg(TIMELINE_W, y + 48, [*body, *legend], chart.title)


def render_svg(chart: Chart) -> str:
    return {"bars": bars, "distribution": distribution, "loglog": loglog, "timeline": timeline}[chart.kind](chart)
