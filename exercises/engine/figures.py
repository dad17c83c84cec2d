"""Figures of a variant: the heatmaps an exercise declares under ``figures:``.

``spec.py`` validates the declaration; here each figure is evaluated on a variant's
parameters and checked to be something a heatmap can show (a matrix of finite numbers,
at most ``MAX_MATRIX_SIDE`` a side). A draw whose figure cannot be shown is redrawn, as
one whose reference answer is not finite is (``variants.first_failed_check``), so a
student never gets one and "Check" names the figure's line when none of its draws works.

A rendered figure is plain data (stored with the variant's body, sent by the API); the
page draws it with the heatmap table of the graded results.
"""

from __future__ import annotations

import numpy as np

from grading.core.attention import AttentionResult

from .errors import DrawFailed, DrawProblem, ExpressionError
from .expressions import evaluate
from .reference import format_number
from .source import render_path
from .spec import MAX_MATRIX_SIDE, ExerciseSpec, Figure

FIGURE_PROBLEM_ACTION = "the heatmap cannot be shown"


def render_figures(spec: ExerciseSpec, params: dict) -> list[dict]:
    """Every figure of the variant, in order, as JSON-able data::

        {"kind": "heatmap", "title": str, "rows": [[number, ...], ...],
         "row_labels": [str, ...], "col_labels": [str, ...], "corner": "query / key",
         "decimals": int, "range": [low, high]}

    The numbers are rounded to the figure's decimals: a figure tells no more than it
    prints. Raises DrawFailed (an ExpressionError) naming the first figure that cannot
    be shown."""
    return [_rendered(figure, _matrix_or_fail(spec, figure, params)) for figure in spec.figures]


def figure_problems(spec: ExerciseSpec, params: dict) -> list[DrawProblem]:
    """Why each figure that cannot be shown on this variant cannot ([] when all can)."""
    problems = []
    for figure in spec.figures:
        try:
            _matrix_or_fail(spec, figure, params)
        except DrawFailed as failed:
            problems.append(failed.problem)
    return problems


def figure_subject(figure: Figure) -> str:
    return f"figure `heatmap: {figure.expression.text}`"


def _rendered(figure: Figure, matrix: np.ndarray) -> dict:
    rows, cols = matrix.shape
    return {
        "kind": "heatmap",
        "title": figure.title,
        "rows": [[_rounded(value, figure.decimals) for value in row] for row in matrix],
        "row_labels": [f"{figure.row_label} {i}" for i in range(rows)] if figure.row_label else [],
        "col_labels": [f"{figure.col_label} {j}" for j in range(cols)] if figure.col_label else [],
        "corner": f"{figure.row_label} / {figure.col_label}" if figure.row_label and figure.col_label else "",
        "decimals": figure.decimals,
        "range": [figure.low, figure.high],
    }


def _rounded(value: float, decimals: int) -> float | int:
    """The number the cell prints (the prompt's ``{{x | d}}`` digits), as a number."""
    number = float(format_number(value, decimals))
    return int(number) if decimals == 0 else number


def _matrix_or_fail(spec: ExerciseSpec, figure: Figure, params: dict) -> np.ndarray:
    try:
        value = evaluate(figure.expression, params)
    except ExpressionError as exc:
        raise _failed(spec, figure, "evaluation error", f"expression `{figure.expression.text}` failed", exc.detail) from None
    problem = matrix_problem(value)
    if problem:
        raise _failed(spec, figure, "figure", FIGURE_PROBLEM_ACTION, problem)
    return np.asarray(value, dtype=float)


def _failed(spec: ExerciseSpec, figure: Figure, kind: str, action: str, detail: str) -> DrawFailed:
    path = ("figures", figure.index, "heatmap")
    return DrawFailed(f"{figure_subject(figure)}: {detail}", DrawProblem(
        kind=kind, reason=f"{kind}: {detail}", subject=figure_subject(figure),
        field=render_path(path), line=spec.line_of(path), action=action, detail=detail,
    ))


def matrix_problem(value) -> str | None:
    """Why ``value`` is not a matrix a heatmap can show, or None."""
    if isinstance(value, AttentionResult):
        return "it is the whole result of attention(...); pick a matrix of it, e.g. .weights"
    try:
        matrix = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return "it is not a matrix of numbers"
    if matrix.ndim == 0:
        return "it is a single number, not a matrix (rows × columns)"
    if matrix.ndim == 1:
        return (f"it is a vector of {matrix.shape[0]} numbers, not a matrix (rows × columns); "
                "put it in brackets, [v], for a one-row heatmap")
    if matrix.ndim > 2:
        return f"it is a {'×'.join(str(size) for size in matrix.shape)} array, not a matrix (rows × columns)"
    rows, cols = matrix.shape
    if rows == 0 or cols == 0:
        return f"it is an empty {rows}×{cols} matrix"
    if rows > MAX_MATRIX_SIDE or cols > MAX_MATRIX_SIDE:
        return f"it is a {rows}×{cols} matrix; a heatmap shows at most {MAX_MATRIX_SIDE} rows and {MAX_MATRIX_SIDE} columns"
    finite = np.isfinite(matrix)
    if not finite.all():
        row, col = (int(i) for i in np.argwhere(~finite)[0])
        return f"entry [{row}][{col}] is {matrix[row, col]}, not a finite number"
    return None
