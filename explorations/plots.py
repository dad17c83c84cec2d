"""Geometry for the server-rendered SVG plot of score variance against d_k (log-log).

Pure Python: it turns numbers into pixel positions and the template draws them.
Both axes share one log domain, so the reference line y = d_k is the diagonal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WIDTH = 480
HEIGHT = 340
MARGIN_LEFT = 64
MARGIN_RIGHT = 20
MARGIN_TOP = 16
MARGIN_BOTTOM = 52
DOMAIN = (2.0, 2048.0)
TICKS = (4, 16, 64, 256, 1024)


@dataclass(frozen=True)
class Tick:
    value: int
    position: float


@dataclass(frozen=True)
class PlotPoint:
    d_k: int
    variance: float
    x: float
    y: float


@dataclass(frozen=True)
class VariancePlot:
    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    points: list[PlotPoint]
    reference_line: tuple[float, float, float, float]  # x1, y1, x2, y2 of y = d_k

    @property
    def centre_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def centre_y(self) -> float:
        return (self.top + self.bottom) / 2


def log_position(value: float, pixel_start: float, pixel_end: float) -> float:
    """Where ``value`` falls between the pixels of DOMAIN's ends, on a log scale."""
    low, high = (math.log(end) for end in DOMAIN)
    clamped = min(DOMAIN[1], max(DOMAIN[0], value))
    fraction = (math.log(clamped) - low) / (high - low)
    return round(pixel_start + fraction * (pixel_end - pixel_start), 2)


def variance_plot(rows) -> VariancePlot:
    """Plot geometry for rows with ``d_k`` and ``variance`` attributes."""
    left, right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    top, bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM

    def x_of(value):
        return log_position(value, left, right)

    def y_of(value):
        return log_position(value, bottom, top)  # SVG y grows downwards

    return VariancePlot(
        width=WIDTH,
        height=HEIGHT,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        x_ticks=[Tick(value, x_of(value)) for value in TICKS],
        y_ticks=[Tick(value, y_of(value)) for value in TICKS],
        points=[
            PlotPoint(row.d_k, row.variance, x_of(row.d_k), y_of(row.variance)) for row in rows
        ],
        reference_line=(x_of(DOMAIN[0]), y_of(DOMAIN[0]), x_of(DOMAIN[1]), y_of(DOMAIN[1])),
    )
