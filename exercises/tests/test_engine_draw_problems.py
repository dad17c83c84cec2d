"""A draw that fails names what failed: the parameter, part or gate, its field and line,
and how many of the draws it refused, each cause told once however often it recurs."""

import pytest

from exercises.engine import SpecError, check_draws, load_spec
from exercises.engine.errors import CountedDrawProblem, DrawProblem, count_draw_problems

# Line numbers below refer to this file as written (line 1 is "slug: broken").
BASE = """\
slug: broken
title: Broken
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
  n: {generator: int_range, min: 3, max: 4}
  X: {generator: int_matrix, shape: [4, n], min: -2, max: 2}
  W_K: {generator: int_matrix, shape: [3, 4], min: -2, max: 2}
  K:
    generator: derived
    expr: "X @ W_K"
prompt: Compute $K$ for {{a}}.
parts:
  - key: keys
    type: matrix
    answer: "K"
    decimals: 0
    solution: It is {{K}}.
gates:
  max_attempts: 1
"""
WORKING = BASE.replace("shape: [4, n]", "shape: [4, 3]")


def broken(old: str, new: str, base: str = WORKING) -> str:
    assert old in base
    return base.replace(old, new)


# source, failed seeds of 0..9, the problems (as an author reads them, in file order)
DRAW_TIME = [
    pytest.param(
        BASE, [0, 1, 2, 7, 8, 9],  # the seeds whose n is 4
        ["parameter `K` (line 11): expression `X @ W_K` failed for 6 of 10 draws: "
         "shapes (4,4) and (3,4) do not align"],
        id="derived-expression-fails-for-some-seeds",
    ),
    pytest.param(
        # (written as numbers, such bounds are refused when the file is read: test_spec_hostile_options.py)
        broken("n: {generator: int_range, min: 3, max: 4}", 'n: {generator: int_range, min: "2 + 3", max: 2}'),
        list(range(10)),
        ["parameter `n` (line 6): the bounds leave nothing to draw for 10 of 10 draws: min 5 is above max 2"],
        id="impossible-bounds",
    ),
    pytest.param(
        broken("n: {generator: int_range, min: 3, max: 4}", "n: {generator: int_range, min: a, max: 4}"),
        [1, 2, 4, 7, 8, 9],  # where a (drawn first) is above 4
        ["parameter `n` (line 6): the bounds leave nothing to draw for 6 of 10 draws: "
         "e.g. min 6 is above max 4 (and 3 more like it)"],
        id="bounds-impossible-for-some-values",
    ),
    pytest.param(
        broken("gates:\n  max_attempts: 1\n",
               "gates:\n  max_attempts: 3\n  checks:\n    - {kind: require, expr: \"a > 100\", reason: a is at most 9}\n"),
        list(range(10)),
        ["gate `require: a > 100` (line 22): rejected the draw for 30 of 30 draws: a is at most 9"],
        id="gate-rejects-every-draw",
    ),
    pytest.param(
        broken('answer: "K"', 'answer: "X @ K"'),
        list(range(10)),
        ["part `keys` (line 16): expression `X @ K` failed for 10 of 10 draws: shapes (4,3) and (4,4) do not align"],
        id="part-answer-shape-mismatch",
    ),
    pytest.param(
        broken("gates:\n  max_attempts: 1\n",
               "gates:\n  max_attempts: 2\n  checks:\n    - {kind: require, expr: \"a > 4\", reason: a must exceed 4}\n",
               base=BASE),
        [0, 2, 3, 5, 6, 8, 9],  # 19 draws: seed 4 passes at once, seeds 1 and 7 on their second
        ["parameter `K` (line 11): expression `X @ W_K` failed for 10 of 19 draws: "
         "shapes (4,4) and (3,4) do not align",
         "gate `require: a > 4` (line 22): rejected the draw for 6 of 19 draws: a must exceed 4"],
        id="two-causes-in-file-order",
    ),
]


@pytest.mark.parametrize(("source", "failed_seeds", "problems"), DRAW_TIME)
def test_a_failed_draw_names_its_parameter_line_and_count(source, failed_seeds, problems):
    checked = check_draws(load_spec(source), range(10))
    assert checked.failed_seeds == failed_seeds
    assert [str(problem) for problem in checked.problems] == problems


def test_each_problem_has_its_field_and_a_line_free_message_for_pages():
    (problem,) = check_draws(load_spec(BASE), range(10)).problems
    assert (problem.line, problem.field) == (11, "parameters.K.expr")
    assert problem.message == (
        "parameter `K`: expression `X @ W_K` failed for 6 of 10 draws: shapes (4,4) and (3,4) do not align"
    )
    assert str(problem.as_issue()) == f"line 11: parameters.K.expr: {problem.message}"


def test_a_spec_rebuilt_from_json_names_the_field_but_no_line():
    from exercises.engine import spec_from_json, spec_to_json, with_source_lines

    stored = spec_from_json(spec_to_json(load_spec(BASE)))
    (problem,) = check_draws(stored, range(10)).problems
    assert (problem.line, problem.field) == (None, "parameters.K.expr")
    assert str(problem).startswith("parameter `K`: expression `X @ W_K` failed for 6 of 10 draws")
    (again,) = check_draws(with_source_lines(stored, BASE), range(10)).problems
    assert again.line == 11


def test_the_same_cause_is_counted_not_repeated():
    first = DrawProblem("require", "require: r", "gate `require: a > 1`", "gates.checks[0]", 20, "rejected the draw", "r")
    other = DrawProblem("require", "require: s", "gate `require: b > 1`", "gates.checks[1]", 21, "rejected the draw", "s")
    counted = count_draw_problems([other, first, first, other, first], 7)
    assert counted == [CountedDrawProblem(first, 3, 7), CountedDrawProblem(other, 2, 7)]


# Problems found when the file is read (before any draw) name their line and field too.
LOAD_TIME = [
    pytest.param(
        broken('expr: "X @ W_K"', 'expr: "X @ W_Q"'),
        ["line 11: parameters.K.expr: unknown name 'W_Q' in 'X @ W_Q'"],
        id="unknown-name",
    ),
]


@pytest.mark.parametrize(("source", "issues"), LOAD_TIME)
def test_problems_of_the_file_itself_are_named_with_line_and_field(source, issues):
    with pytest.raises(SpecError) as caught:
        load_spec(source)
    assert [str(issue) for issue in caught.value.errors] == issues


UNRENDERABLE = WORKING.replace("prompt: Compute $K$ for {{a}}.", "prompt: |\n  Compute $K$ for {{a}}.\n  And {{X @ X}}.").replace(
    "solution: It is {{K}}.", "solution: It is {{K[9]}}."
)


def test_a_placeholder_that_cannot_be_filled_in_names_its_field_and_own_line():
    from exercises.engine import draw_variant
    from exercises.engine.rendering import text_problems

    spec = load_spec(UNRENDERABLE)
    problems = text_problems(spec, draw_variant(spec, 0).params)
    assert [(problem.line, problem.field, str(problem)) for problem in problems] == [
        (14, "prompt", "the prompt (line 14): placeholder `{{X @ X}}` failed: shapes (4,3) and (4,3) do not align"),
        (20, "parts[0].solution",
         "part `keys` (line 20): placeholder `{{K[9]}}` failed: index 9 is out of bounds for axis 0 with size 4"),
    ]
    assert text_problems(load_spec(WORKING), draw_variant(load_spec(WORKING), 0).params) == []


def _failed_expression(detail: str) -> DrawProblem:
    return DrawProblem("evaluation error", f"evaluation error: {detail}", "gate `unique_max: row(S, i)`",
                       "gates.checks[0].expr", 20, "expression `row(S, i)` failed", detail)


def test_each_reason_of_one_field_carries_its_own_count():
    """A field failing two ways was told as one count with one example ("failed for 9 of 12
    draws: e.g. index 4 ... (and 2 more like it)"), so the count overstated the reason named.
    Details differing only in their numbers are one reason; others are counted apart."""
    problems = ([_failed_expression("index 4 is out of bounds")] * 3 + [_failed_expression("division by zero")] * 2
                + [_failed_expression("index -4 is out of bounds")] * 4)
    (counted,) = count_draw_problems(problems, 12)
    assert (counted.problem.detail, counted.count, counted.other_details) == ("index 4 is out of bounds", 7, 1)
    assert [(reason.problem.detail, reason.count, reason.other_details) for reason in counted.more] == [
        ("division by zero", 2, 0)]
    assert counted.message == ("gate `unique_max: row(S, i)`: expression `row(S, i)` failed for 7 of 12 draws: "
                               "e.g. index 4 is out of bounds (and 1 more like it); for 2 more: division by zero")


def test_nan_and_infinities_are_numbers_of_one_reason():
    from exercises.engine.errors import detail_reason

    assert detail_reason("entry [0][1] is -inf, not a finite number") == detail_reason("entry [2][0] is nan, not a finite number")
    assert detail_reason("top weight 0.9712 > 0.95") == detail_reason("top weight 1 > 0.9")
    assert detail_reason("division by zero") != detail_reason("index 4 is out of bounds")


def test_a_placeholder_written_twice_refuses_its_draw_once():
    from exercises.engine.errors import once_per_draw

    first = DrawProblem("rendering", "rendering: x", "the prompt", "prompt", 6, "placeholder `{{a / 0}}` failed", "division by zero")
    other = DrawProblem("rendering", "rendering: y", "the prompt", "prompt", 6, "placeholder `{{b[9]}}` failed", "index 9")
    assert once_per_draw([first, other, first]) == [first, other]
