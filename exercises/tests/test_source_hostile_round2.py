"""Hostile exercise sources, second round: expressions whose result would be too large to
allocate, work that grows with the square of a size, answers no checker can grade, and
text that grows without bound once filled in. Each is refused with its line, or inert."""

import time

import numpy as np
import pytest

from exercises import engine
from exercises.engine.errors import ExpressionError
from exercises.engine.expressions import compile_expression, evaluate
from exercises.engine.reference import MAX_FILLED_TEXT_CHARS, MAX_SHOWN_ENTRIES
from exercises.engine.rendering import render_prompt, text_problems

SOURCE = """\
slug: hostile-probe
title: Probe
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 9}
  M: {generator: int_matrix, shape: [2, 2], min: 0, max: 3}
#PARAMETERS
prompt: |
  Multiply {{a}} by two.
#PROMPT
parts:
  - key: p
    type: numeric
    answer: "a * 2"
    decimals: 0
    solution: |
      It is {{a * 2}}.
"""


def source_with(*, parameters: str = "", prompt: str = "", answer: str = '"a * 2"', part_type: str = "numeric") -> str:
    return (
        SOURCE.replace("#PARAMETERS\n", parameters + "\n" if parameters else "")
        .replace("#PROMPT\n", prompt + "\n" if prompt else "")
        .replace('answer: "a * 2"', f"answer: {answer}")
        .replace("type: numeric", f"type: {part_type}")
    )


def evaluated(text: str):
    return evaluate(compile_expression(text), {})


TOO_LARGE = [
    ("outer(ones(100000), ones(100000))", "outer(...) would make an array of 10000000000 entries (at most 100000)"),
    ("diag(ones(100000))", "diag(...) would make an array of 10000000000 entries (at most 100000)"),
    ("softmax_jacobian(ones(100000))",
     "softmax_jacobian(...) would make an array of 10000000000 entries (at most 100000)"),
    ("ones(100000, 1) + ones(1, 100000)", "+ would make an array of 10000000000 entries (at most 100000)"),
    ("ones(100000, 1) * ones(1, 1000)", "* would make an array of 100000000 entries (at most 100000)"),
    ("ones(100000, 1) < ones(1, 100000)",
     "a comparison would make an array of 10000000000 entries (at most 100000)"),
    ("transpose(ones(1, 100000)) @ ones(1, 100000)", "@ would make an array of 10000000000 entries (at most 100000)"),
    ("matmul(transpose(ones(1, 100000)), ones(1, 100000))",
     "matmul(...) would make an array of 10000000000 entries (at most 100000)"),
    ("dot(transpose(ones(1, 100000)), ones(1, 100000))",
     "dot(...) would make an array of 10000000000 entries (at most 100000)"),
    ("attention(ones(100000, 1), ones(100000, 1), ones(100000, 1)).weights",
     "attention(...) scores would make an array of 10000000000 entries (at most 100000)"),
    ("attention(ones(1000, 1), ones(100, 1), ones(100, 1000)).output",
     "attention(...) output would make an array of 1000000 entries (at most 100000)"),
    ("[ones(100000), ones(100000)]", "a list would make an array of 200000 entries (at most 100000)"),
    ("int(1e300)", "a whole number in the expression is too large (at most 2^63)"),
]


@pytest.mark.parametrize(("text", "message"), TOO_LARGE)
def test_a_result_too_large_to_allocate_is_refused_before_it_is_made(text, message):
    with pytest.raises(ExpressionError) as refused:
        evaluated(text)
    assert str(refused.value) == message


STILL_ALLOWED = [
    ("outer([1, 2], [3, 4, 5])", [[3, 4, 5], [6, 8, 10]]),
    ("diag([1, 2])", [[1, 0], [0, 2]]),
    ("diag([[1, 2], [3, 4]])", [1, 4]),
    ("softmax_jacobian([0.5, 0.5])", [[0.25, -0.25], [-0.25, 0.25]]),
    ("[[1], [2]] + [[10, 20]]", [[11, 21], [12, 22]]),
    ("[[1, 2], [3, 4]] @ [1, 1]", [3, 7]),
    ("[1, 2] @ [3, 4]", 11),
    ("dot(2, [1, 2])", [2, 4]),
    ("matmul([[1, 2]], [[3], [4]])", [[11]]),
    ("attention(eye(2), eye(2), [[1, 2], [3, 4]], scale=0).output", [[2, 3], [2, 3]]),
    ("sum(outer(ones(316), ones(316)))", 99856),
    ("int(2.6)", 3),
]


@pytest.mark.parametrize(("text", "value"), STILL_ALLOWED)
def test_results_within_the_limit_are_unchanged(text, value):
    assert np.asarray(evaluated(text)).tolist() == value


EQUAL_ROW_PAIRS = [
    ("[[1, 2], [1, 2], [3, 4]]", 1),
    ("[[1, 2], [1, 2], [1, 2]]", 3),
    ("[[0, 0], [-0.0, 0], [0, -0.0]]", 3),
    ("[[1, 2], [2, 1]]", 0),
    ("[1, 1, 1]", 0),
    ("5", 0),
    ("zeros(100000, 1)", 4999950000),
    ("[[log(-1), 1], [log(-1), 1]]", 0),
]


@pytest.mark.parametrize(("text", "pairs"), EQUAL_ROW_PAIRS)
def test_equal_row_pairs_counts_pairs_without_comparing_every_pair(text, pairs):
    started = time.monotonic()
    assert evaluated(f"equal_row_pairs({text})") == pairs
    assert time.monotonic() - started < 2


def test_a_derived_parameter_too_large_to_make_is_a_draw_problem_naming_its_line():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "outer(ones(100000), ones(100000))"}'))
    checked = engine.check_draws(spec, range(2))
    assert checked.failed_seeds == [0, 1]
    assert [str(problem) for problem in checked.problems] == [
        "parameter `Z` (line 7): expression `outer(ones(100000), ones(100000))` failed for 200 of 200 draws: "
        "outer(...) would make an array of 10000000000 entries (at most 100000)"
    ]


@pytest.mark.parametrize("answer", ['"a > 1"', '"M == M"', '"True"'])
@pytest.mark.parametrize("part_type", ["numeric", "matrix"])
def test_an_answer_of_true_or_false_is_refused_on_every_draw_not_left_ungradable(answer, part_type):
    spec = engine.load_spec(source_with(answer=answer, part_type=part_type))
    checked = engine.check_draws(spec, range(2))
    assert checked.failed_seeds == [0, 1]
    assert [str(problem) for problem in checked.problems] == [
        f"part `p` (line 12): expression `{answer.strip(chr(34))}` failed for 200 of 200 draws: "
        f"a {part_type} answer must be made of numbers, not true/false (a comparison)"
    ]


def test_a_placeholder_printing_too_many_numbers_is_named_with_its_line():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "ones(100000)"}',
                                        prompt="  Here: {{Z}}"))
    params = engine.draw_variant(spec, 0).params
    assert [str(problem) for problem in text_problems(spec, params)] == [
        f"the prompt (line 10): placeholder `{{{{Z}}}}` failed: a value shown in text has at most "
        f"{MAX_SHOWN_ENTRIES} numbers; this one has 100000"
    ]


def test_a_text_that_grows_past_the_limit_once_filled_is_named_not_built():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "ones(30, 30)"}',
                                        prompt="  " + "{{Z}}" * 100))
    params = engine.draw_variant(spec, 0).params
    assert [str(problem) for problem in text_problems(spec, params)] == [
        f"the prompt (line 8): the text could not be filled in: the text would be longer than "
        f"{MAX_FILLED_TEXT_CHARS} characters once filled in"
    ]
    with pytest.raises(ExpressionError):
        render_prompt(spec, params)


def test_a_matrix_within_the_limits_still_prints():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "eye(2)"}', prompt="  $${{Z}}$$"))
    params = engine.draw_variant(spec, 0).params
    assert text_problems(spec, params) == []
    assert r"$$\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}$$" in render_prompt(spec, params)


REFUSED_ON_READING = [
    ('"__import__(\'os\').system(\'id\')"', "line 12: parts[0].answer: only the built-in functions may be called"),
    ('"getattr(a, \'__class__\')"', "line 12: parts[0].answer: unknown function 'getattr'; known: abs, argmax, argmin, "
     "attention, col, diag, dot, equal_row_pairs, exp, eye, float, head_dim, int, len, log, matmul, max, mean, min, "
     "ones, outer, round, row, set_row, shape, softmax, softmax_jacobian, sort, sqrt, std, sum, transpose, var, zeros"),
    ('"M.__class__"', "line 12: parts[0].answer: name '__class__' is not allowed (names may not start with '_')"),
    ('"M.real"', "line 12: parts[0].answer: attribute '.real' is not allowed; allowed: .T, .output, .scale, "
     ".scaled_scores, .scores, .weights"),
    ('"(lambda x: x)(a)"', "line 12: parts[0].answer: only the built-in functions may be called"),
    ("\"'{0.__class__}'.format(a)\"", "line 12: parts[0].answer: only the built-in functions may be called"),
    ("\"'%s' % a\"", "line 12: parts[0].answer: only numbers, True and False are allowed as constants, not '%s'"),
    ('"f\'{a}\'"', "line 12: parts[0].answer: f-string is not allowed in an expression"),
    ('"[x for x in M]"', "line 12: parts[0].answer: comprehension is not allowed in an expression"),
    ('"a if a else 1"', "line 12: parts[0].answer: conditional expression is not allowed in an expression"),
    ('"(b := a)"', "line 12: parts[0].answer: assignment expression is not allowed in an expression"),
    ('"99999999999999999999 * a"', "line 12: parts[0].answer: a whole number in the expression is too large (at most 2^63)"),
]


@pytest.mark.parametrize(("answer", "message"), REFUSED_ON_READING)
def test_python_tricks_in_an_expression_are_refused_with_their_line(answer, message):
    with pytest.raises(engine.SpecError) as refused:
        engine.load_spec(source_with(answer=answer))
    assert str(refused.value) == message


def test_ten_to_the_ten_to_the_ten_is_refused_on_every_draw_without_being_computed():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "10**10**10"}'))
    started = time.monotonic()
    checked = engine.check_draws(spec, range(1))
    assert time.monotonic() - started < 5
    assert [str(problem) for problem in checked.problems] == [
        "parameter `Z` (line 7): expression `10**10**10` failed for 100 of 100 draws: "
        "exponent 1e+10 is too large (at most 1000)"
    ]
