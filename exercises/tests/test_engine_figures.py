"""Figures: a heatmap of a parameter matrix, declared under ``figures:``. A declaration is
refused when read with its line; a matrix a heatmap cannot show is refused on every draw,
naming the figure's line; a shown figure tells no more digits than it prints."""

import pytest

from exercises.engine import (
    SpecError,
    check_draws,
    draw_variant,
    figure_problems,
    load_spec,
    render_figures,
    spec_from_json,
    spec_to_json,
)

# Line numbers below refer to this file as written (line 1 is "slug: figured").
BASE = """\
slug: figured
title: Figured
version: 1
parameters:
  S: {generator: int_matrix, shape: [3, 4], min: 0, max: 3}
  W: {generator: derived, expr: "softmax(S)"}
prompt: Read the heatmap.
figures:
  - heatmap: W
    title: Weights
    row_label: query
    col_label: key
parts:
  - key: top
    type: numeric
    answer: "argmax(W[0])"
    decimals: 0
    solution: It is key {{argmax(W[0])}}.
gates:
  max_attempts: 1
"""
FIGURE = "figures:\n  - heatmap: W\n    title: Weights\n    row_label: query\n    col_label: key\n"
RANGE_MESSAGE = "must be [low, high]: two numbers, low below high (the lightest and the darkest colour)"


def with_figure(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


def errors_of(text):
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    return [str(issue) for issue in caught.value.errors]


def test_a_figure_loads_with_its_fields_and_defaults():
    (figure,) = load_spec(BASE).figures
    assert (figure.expression.text, figure.title, figure.row_label, figure.col_label) == ("W", "Weights", "query", "key")
    assert (figure.decimals, figure.low, figure.high, figure.index) == (2, 0.0, 1.0, 0)
    assert load_spec(BASE.replace(FIGURE, "")).figures == ()


def test_every_field_may_be_given():
    spec = load_spec(with_figure("    col_label: key\n", "    col_label: key\n    decimals: 0\n    range: [-3, 3]\n"))
    (figure,) = spec.figures
    assert (figure.decimals, figure.low, figure.high) == (0, -3.0, 3.0)


# (the figure's lines as changed, the issues as an author reads them)
BAD_DECLARATIONS = [
    pytest.param(("    col_label: key\n", "    col_label: key\n    colour: blue\n"),
                 ["line 13: figures[0].colour: unknown field 'colour'; "
                  "known: heatmap, title, decimals, row_label, col_label, range"], id="unknown-field"),
    pytest.param(("  - heatmap: W\n    title: Weights\n", "  - title: Weights\n"),
                 ["line 9: figures[0]: missing required field 'heatmap'"], id="no-heatmap"),
    pytest.param(("heatmap: W", "heatmap: Z"),
                 ["line 9: figures[0].heatmap: unknown name 'Z' in 'Z'"], id="unknown-name"),
    pytest.param(("heatmap: W", "heatmap: \"__import__('os')\""),
                 ["line 9: figures[0].heatmap: name '__import__' is not allowed (names may not start with '_')"],
                 id="hostile-expression"),
    pytest.param(("heatmap: W", "heatmap: \"" + " + ".join(["W"] * 700) + "\""),
                 ["line 9: figures[0].heatmap: expression longer than 2000 characters"], id="huge-expression"),
    pytest.param(("heatmap: W", 'heatmap: ""'), ["line 9: figures[0].heatmap: empty expression"], id="empty-expression"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    decimals: 7\n"),
                 ["line 11: figures[0].decimals: must be a whole number from 0 to 6"], id="too-many-decimals"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    decimals: 1.5\n"),
                 ["line 11: figures[0].decimals: must be a whole number from 0 to 6"], id="fractional-decimals"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    decimals: true\n"),
                 ["line 11: figures[0].decimals: must be a whole number from 0 to 6"], id="boolean-decimals"),
    pytest.param(("title: Weights", "title: " + "x" * 121),
                 ["line 10: figures[0].title: must be at most 120 characters long, got 121"], id="long-title"),
    pytest.param(("title: Weights", 'title: "W for {{r}}"'),
                 ["line 10: figures[0].title: is shown as written: {{ placeholders }} are not filled in here"],
                 id="placeholder-in-title"),
    pytest.param(("title: Weights", "title: [a]"), ["line 10: figures[0].title: must be non-empty text"],
                 id="title-not-text"),
    pytest.param(("title: Weights", 'title: "  "'), ["line 10: figures[0].title: must be non-empty text"],
                 id="blank-title"),
    pytest.param(("title: Weights", 'title: "one\\ntwo"'), ["line 10: figures[0].title: must be one line of text"],
                 id="two-line-title"),
    pytest.param(("row_label: query", "row_label: " + "q" * 31),
                 ["line 11: figures[0].row_label: must be at most 30 characters long, got 31"], id="long-label"),
    pytest.param(("col_label: key", "col_label: 3"), ["line 12: figures[0].col_label: must be non-empty text"],
                 id="label-not-text"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    range: [1, 0]\n"),
                 [f"line 11: figures[0].range: {RANGE_MESSAGE}"], id="range-upside-down"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    range: [0]\n"),
                 [f"line 11: figures[0].range: {RANGE_MESSAGE}"], id="range-of-one"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    range: [0, \"1\"]\n"),
                 [f"line 11: figures[0].range: {RANGE_MESSAGE}"], id="range-of-text"),
    pytest.param(("    title: Weights\n", f"    title: Weights\n    range: [0, {'9' * 400}]\n"),
                 [f"line 11: figures[0].range: {RANGE_MESSAGE}"], id="range-beyond-floats"),
    pytest.param(("    title: Weights\n", "    title: Weights\n    range: [0, .nan]\n"),
                 ["line 11: figures[0].range[1]: is not a finite number (.nan); write a finite number "
                  "(NaN, infinity and numbers beyond ±1.8e308 cannot be stored)"], id="range-nan"),
    pytest.param((FIGURE, "figures: W\n"), ["line 8: figures: must be a list of figures, e.g. - heatmap: W"],
                 id="not-a-list"),
    pytest.param((FIGURE, "figures: [W]\n"), ["line 8: figures[0]: a figure must be a mapping"],
                 id="not-a-mapping"),
    pytest.param((FIGURE, "figures:\n" + "  - heatmap: W\n" * 5), ["line 8: figures: at most 4 figures are allowed, found 5"],
                 id="too-many"),
]


@pytest.mark.parametrize(("change", "issues"), BAD_DECLARATIONS)
def test_a_bad_declaration_is_refused_when_read_with_its_line(change, issues):
    assert errors_of(with_figure(*change)) == issues


# The heatmap's expression, and how each of seeds 0..9 (one draw each) is refused.
BAD_MATRICES = [
    pytest.param("W[0]", "the heatmap cannot be shown for 10 of 10 draws: it is a vector of 4 numbers, not a matrix "
                         "(rows × columns); put it in brackets, [v], for a one-row heatmap", id="vector"),
    pytest.param("sum(W)", "the heatmap cannot be shown for 10 of 10 draws: it is a single number, not a matrix "
                           "(rows × columns)", id="number"),
    pytest.param("[W, W]", "the heatmap cannot be shown for 10 of 10 draws: it is a 2×3×4 array, not a matrix "
                           "(rows × columns)", id="three-dimensions"),
    pytest.param("zeros(300, 300)", "the heatmap cannot be shown for 10 of 10 draws: it is a 300×300 matrix; "
                                    "a heatmap shows at most 12 rows and 12 columns", id="huge"),
    pytest.param("ones(3, 13)", "the heatmap cannot be shown for 10 of 10 draws: it is a 3×13 matrix; "
                                "a heatmap shows at most 12 rows and 12 columns", id="one-column-too-many"),
    pytest.param("W[0:0]", "the heatmap cannot be shown for 10 of 10 draws: it is an empty 0×4 matrix", id="empty"),
    pytest.param("(W - W) / 0", "the heatmap cannot be shown for 10 of 10 draws: entry [0][0] is nan, "
                                "not a finite number", id="nan"),
    pytest.param("W / 0", "the heatmap cannot be shown for 10 of 10 draws: entry [0][0] is inf, not a finite number",
                 id="infinite"),
    pytest.param("attention(S, S, S)", "the heatmap cannot be shown for 10 of 10 draws: it is the whole result of "
                                       "attention(...); pick a matrix of it, e.g. .weights", id="attention-result"),
    pytest.param("W @ W", "expression `W @ W` failed for 10 of 10 draws: shapes (3,4) and (3,4) do not align",
                 id="evaluation-error"),
]


@pytest.mark.parametrize(("expression", "problem"), BAD_MATRICES)
def test_a_matrix_a_heatmap_cannot_show_refuses_the_draw_naming_the_figures_line(expression, problem):
    spec = load_spec(with_figure("heatmap: W", f'heatmap: "{expression}"'))
    checked = check_draws(spec, range(10))
    assert checked.failed_seeds == list(range(10))
    assert [str(counted) for counted in checked.problems] == [f"figure `heatmap: {expression}` (line 9): {problem}"]
    (counted,) = checked.problems
    assert (counted.line, counted.field) == (9, "figures[0].heatmap")


def test_a_draw_whose_figure_cannot_be_shown_is_redrawn():
    source = with_figure("  W: {generator: derived", "  n: {generator: int_range, min: 11, max: 14}\n"
                                                     "  W: {generator: derived").replace(
        "heatmap: W", 'heatmap: "ones(n, 2)"').replace("max_attempts: 1", "max_attempts: 50")
    spec = load_spec(source)
    draws = [draw_variant(spec, seed) for seed in range(10)]
    assert all(draw.params["n"] in (11, 12) for draw in draws)
    rejected = [reason for draw in draws for reason in draw.rejections]
    assert rejected and all(reason.startswith("figure: it is a 1") for reason in rejected)
    assert all(reason.endswith("a heatmap shows at most 12 rows and 12 columns") for reason in rejected)


def test_a_figure_is_its_matrix_rounded_to_its_decimals_with_numbered_labels():
    spec = load_spec(BASE)
    params = {"S": [[0, 0, 0, 0]] * 3, "W": [[0.123456, 0.876544], [0.5, 0.5], [1.0, 0.0]]}
    assert render_figures(spec, params) == [{
        "kind": "heatmap",
        "title": "Weights",
        "rows": [[0.12, 0.88], [0.5, 0.5], [1.0, 0.0]],
        "row_labels": ["query 0", "query 1", "query 2"],
        "col_labels": ["key 0", "key 1"],
        "corner": "query / key",
        "decimals": 2,
        "range": [0.0, 1.0],
    }]


def test_a_figure_without_labels_or_title_has_none_and_whole_numbers_at_zero_decimals():
    spec = load_spec(with_figure(FIGURE, "figures:\n  - {heatmap: \"S\", decimals: 0, range: [0, 3]}\n"))
    (figure,) = render_figures(spec, {"S": [[0, 1.6, 3, 2]] * 3, "W": [[0.25] * 4] * 3})
    assert figure == {"kind": "heatmap", "title": "", "rows": [[0, 2, 3, 2]] * 3, "row_labels": [], "col_labels": [],
                      "corner": "", "decimals": 0, "range": [0.0, 3.0]}
    assert all(isinstance(value, int) for value in figure["rows"][0])


def test_a_named_variant_is_not_redrawn_so_its_figure_problem_is_listed():
    spec = load_spec(BASE.replace('heatmap: W', 'heatmap: "W[0]"') + "variants:\n  flat:\n    S: [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]\n")
    params = draw_variant(spec, 0, name="flat").params
    (problem,) = figure_problems(spec, params)
    assert str(problem) == ("figure `heatmap: W[0]` (line 9): the heatmap cannot be shown: it is a vector of 4 "
                            "numbers, not a matrix (rows × columns); put it in brackets, [v], for a one-row heatmap")
    with pytest.raises(ValueError, match="it is a vector of 4 numbers"):
        render_figures(spec, params)
    assert figure_problems(load_spec(BASE), params) == []


def test_figures_survive_the_stored_json():
    spec = load_spec(BASE)
    assert spec_from_json(spec_to_json(spec)).figures == spec.figures
