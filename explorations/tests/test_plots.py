"""Geometry of the log-log variance plot."""

from types import SimpleNamespace

from explorations import plots


def test_log_position_maps_the_domain_ends_and_its_geometric_middle():
    assert plots.log_position(2, 0, 100) == 0
    assert plots.log_position(2048, 0, 100) == 100
    assert plots.log_position(64, 0, 100) == 50
    assert plots.log_position(1e9, 0, 100) == 100  # clamped, never off the canvas


def test_reference_line_is_the_diagonal_and_a_perfect_estimate_sits_on_it():
    plot = plots.variance_plot([SimpleNamespace(d_k=64, variance=64.0)])
    assert plot.reference_line == (plot.left, plot.bottom, plot.right, plot.top)
    point = plot.points[0]
    x_fraction = (point.x - plot.left) / (plot.right - plot.left)
    y_fraction = (plot.bottom - point.y) / (plot.bottom - plot.top)
    assert x_fraction == y_fraction == 0.5


def test_ticks_are_the_five_widths_of_the_table():
    plot = plots.variance_plot([])
    assert [tick.value for tick in plot.x_ticks] == [4, 16, 64, 256, 1024]
    assert [tick.position for tick in plot.x_ticks] == [103.6, 182.8, 262.0, 341.2, 420.4]
