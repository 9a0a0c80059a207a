"""A ``loglog`` chart for the terminal: a scatter of every series on log-log axes, in characters.

Marker characters stand for the series (``●``, ``▲``...); a console that cannot encode them
(``ascii_only``, a non-UTF encoding) gets ``o``, ``x``... The fitted slopes are in the tables
beside the chart, so the chart draws points only.
"""

from __future__ import annotations

import math

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from jitscope.report.views.document import Chart
from jitscope.units import fmt_value

MARKS = ("●", "▲", "■", "◆")
ASCII_MARKS = ("o", "x", "+", "*")
_LABEL = 9  # width of the y axis labels


class LogLogChart:
    """``chart`` drawn ``width`` columns wide at most (fewer on a narrow console, never under 16)."""

    def __init__(self, chart: Chart, width: int = 56, height: int = 10) -> None:
        self.chart = chart
        self.width = width
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        chart, height = self.chart, self.height
        ascii_only = options.ascii_only or not (options.encoding or "").lower().startswith("utf")
        marks = ASCII_MARKS if ascii_only else MARKS
        points = [(math.log10(x), math.log10(y), k) for k, series in enumerate(chart.series)
                  for x, y in series.points if x > 0 and y > 0]
        if not points:
            return
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
        y0, y1 = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1
        width = max(16, min(self.width, options.max_width - _LABEL - 3))
        grid: list[list[int | None]] = [[None] * width for _ in range(height)]
        for x, y, series_index in points:
            grid[height - 1 - round((y - y0) / (y1 - y0) * (height - 1))][round((x - x0) / (x1 - x0) * (width - 1))] = series_index
        yield Text("")  # set apart from the table above it, as a figure
        yield Text(chart.title, style="jitscope.muted")
        labels = {0: fmt_value(10**y1, chart.y_unit), height - 1: fmt_value(10**y0, chart.y_unit)}
        for i, cells in enumerate(grid):
            text = Text(f"{labels.get(i, ''):>{_LABEL}} |", style="jitscope.muted")
            for cell in cells:
                if cell is None:
                    text.append(" ")
                else:
                    text.append(marks[cell % len(marks)], chart.series[cell].style or None)
            text.rstrip()  # no trailing spaces after the last point
            yield text
        yield Text(" " * (_LABEL + 1) + "+" + "-" * width, style="jitscope.muted")
        left, right = fmt_value(10**x0, chart.x_unit), fmt_value(10**x1, chart.x_unit)
        yield Text(" " * (_LABEL + 2) + left + right.rjust(width - len(left)), style="jitscope.muted")
        legend = Text(" " * (_LABEL + 2))
        for k, series in enumerate(chart.series):
            legend.append(marks[k % len(marks)], series.style or None)
            legend.append(f" {series.name}" + ("   " if k < len(chart.series) - 1 else ""), "jitscope.muted")
        yield legend
