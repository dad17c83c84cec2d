"""Hostile exercise sources, third round: work that is small in every single result but
large in total (hundreds of matrix products in one expression, many such parameters, a
text of thousands of placeholders), parameters too large to store with every student's
variant, and Markdown whose link syntax costs the square of its length. Each is refused
with its line or rendered inert, quickly, on every seed (a student's too, not only 0–9)."""

import time

import numpy as np
import pytest

from exercises import bodies, engine
from exercises.engine.errors import ExpressionError
from exercises.engine.expressions import (
    MAX_DRAW_WORK,
    MAX_EXPRESSION_WORK,
    compile_expression,
    evaluate,
    to_json_value,
    work_budget,
)
from exercises.engine.variants import MAX_VARIANT_ENTRIES
from exercises.markdown_math import MAX_LINK_BRACKETS, render_markdown_math

SOURCE = """\
slug: hostile-round-three
title: Probe
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 9}
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

EXPRESSION_TOO_COSTLY = (
    f"the expression needs too much computation (more than {MAX_EXPRESSION_WORK:,} steps, counting every "
    "entry made and every multiply-add); use smaller matrices or fewer of them"
)
DRAW_TOO_COSTLY = (
    f"this draw (all its expressions together) needs too much computation (more than {MAX_DRAW_WORK:,} steps, "
    "counting every entry made and every multiply-add); use smaller matrices or fewer of them"
)


def source_with(*, parameters: str = "", prompt: str = "") -> str:
    return (SOURCE.replace("#PARAMETERS\n", parameters + "\n" if parameters else "")
            .replace("#PROMPT\n", prompt + "\n" if prompt else ""))


def balanced_sum(term: str, count: int) -> str:
    """``term + term + …`` as a balanced tree, so that it passes the nesting limit."""
    terms = [term] * count
    while len(terms) > 1:
        terms = [f"({terms[i]}+{terms[i + 1]})" if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


MANY_PRODUCTS = "sum(" + balanced_sum("ones(316, 316)@ones(316, 316)", 20) + ")"


def test_an_expression_of_many_products_each_within_the_size_limit_is_refused_before_it_is_done():
    started = time.monotonic()
    with pytest.raises(ExpressionError) as refused:
        evaluate(compile_expression(MANY_PRODUCTS), {})
    assert str(refused.value) == EXPRESSION_TOO_COSTLY
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(("text", "value"), [
    ("sum(ones(100, 100) @ ones(100, 100))", 1_000_000),  # 10^6 multiply-adds: within
    ("sum(outer(ones(316), ones(316)))", 99856),
    ("sum(attention(ones(50, 4), ones(50, 4), ones(50, 4)).output)", 200),
    ("equal_row_pairs(zeros(100000, 1))", 4999950000),
])
def test_work_within_the_budget_is_unchanged(text, value):
    assert evaluate(compile_expression(text), {}) == pytest.approx(value)


@pytest.mark.parametrize("text", [
    "sum(ones(200, 200) @ ones(200, 200))",  # 8·10^6 multiply-adds
    "sum(matmul(ones(200, 200), ones(200, 200)))",
    "sum(dot(ones(200, 200), ones(200, 200)))",
    "sum(attention(ones(300, 300), ones(300, 300), ones(300, 300)).output)",
])
def test_one_product_past_the_budget_is_refused_before_numpy_does_it(text):
    with pytest.raises(ExpressionError) as refused:
        evaluate(compile_expression(text), {})
    assert str(refused.value) == EXPRESSION_TOO_COSTLY


def test_budgets_nest_and_the_innermost_is_named():
    with work_budget(3_000_000, "this draw"), pytest.raises(ExpressionError) as refused:
        for _ in range(4):
            evaluate(compile_expression("sum(ones(100, 100) @ ones(100, 100))"), {})
    assert str(refused.value).startswith("this draw needs too much computation (more than 3,000,000 steps")


def test_a_costly_derived_parameter_is_a_draw_problem_naming_its_line_on_any_seed():
    spec = engine.load_spec(source_with(parameters=f'  Z: {{generator: derived, expr: "{MANY_PRODUCTS}"}}'))
    checked = engine.check_draws(spec, range(1))
    assert checked.failed_seeds == [0]
    assert [str(problem) for problem in checked.problems] == [
        f"parameter `Z` (line 6): expression `{MANY_PRODUCTS}` failed for 100 of 100 draws: {EXPRESSION_TOO_COSTLY}"
    ]
    started = time.monotonic()
    with pytest.raises(engine.VariantError):
        engine.draw_variant(spec, 8_123_456_789)  # a student's seed: refused as quickly
    assert time.monotonic() - started < 10


def test_many_parameters_each_within_the_budget_share_the_draws_budget():
    product = "sum(ones(100, 100) @ ones(100, 100))"  # about 1.03·10^6 steps: each is within
    parameters = "\n".join(f'  Y{i}: {{generator: derived, expr: "{product}"}}' for i in range(12))
    spec = engine.load_spec(source_with(parameters=parameters))
    checked = engine.check_draws(spec, range(1))
    assert checked.failed_seeds == [0]
    assert [str(problem) for problem in checked.problems] == [
        f"parameter `Y9` (line 15): expression `{product}` failed for 100 of 100 draws: {DRAW_TOO_COSTLY}"
    ]


def test_parameters_too_large_to_store_with_every_variant_are_refused_with_the_line():
    parameters = "\n".join(f'  Z{i}: {{generator: derived, expr: "ones(300, 300)"}}' for i in range(3))
    spec = engine.load_spec(source_with(parameters=parameters))
    checked = engine.check_draws(spec, range(1))
    assert checked.failed_seeds == [0]
    assert [str(problem) for problem in checked.problems] == [
        f"parameter `Z1` (line 7): expression `ones(300, 300)` failed for 100 of 100 draws: the parameters of a "
        f"variant hold at most {MAX_VARIANT_ENTRIES} numbers together (they are stored with every student's "
        f"variant); this one would make 180001"
    ]


def test_a_large_derived_value_is_stored_exactly_as_before():
    spec = engine.load_spec(source_with(parameters='  Z: {generator: derived, expr: "[[0.5, 2], [-0.0, 1e300]]"}'))
    assert engine.draw_variant(spec, 0).params["Z"] == [[0.5, 2], [0, 1e300]]
    stored = to_json_value(np.array([1.5, 2.0, -7.0, 2.0**53, np.nan]))
    assert [type(item).__name__ for item in stored] == ["float", "int", "int", "float", "float"]
    assert stored[:4] == [1.5, 2, -7, 2.0**53] and np.isnan(stored[4])


def test_a_text_of_thousands_of_costly_placeholders_is_refused_not_computed():
    spec = engine.load_spec(source_with(prompt="  " + "{{sum(ones(100, 100) @ ones(100, 100))}} " * 200))
    params = engine.draw_variant(spec, 0).params
    started = time.monotonic()
    with pytest.raises(engine.VariantError) as refused:
        bodies.body_render(spec=spec, params=params, content_hash="x", part_points=None)
    assert str(refused.value) == (
        "'hostile-round-three': this variant's text cannot be filled in: filling in this variant's texts needs too "
        f"much computation (more than {MAX_DRAW_WORK:,} steps, counting every entry made and every multiply-add); "
        "use smaller matrices or fewer of them"
    )
    assert time.monotonic() - started < 5


def test_a_placeholder_that_fails_on_a_students_variant_is_a_variant_error_not_a_500():
    spec = engine.load_spec(source_with(prompt="  Row: {{row(eye(3), a)}}"))
    with pytest.raises(engine.VariantError) as refused:
        bodies.body_render(spec=spec, params={"a": 7}, content_hash="x", part_points=None)
    assert str(refused.value) == (
        "'hostile-round-three': this variant's text cannot be filled in: cannot evaluate 'row(eye(3), a)': "
        "index 7 is out of bounds for axis 0 with size 3"
    )


UNCLOSED_LINKS = [
    ("[a " * 33_000, "<p>" + "[a " * 33_000 + "</p>"),
    ("[" * 100_000, "<p>" + "[" * 100_000 + "</p>"),
    ("![" * 50_000, "<p>" + "![" * 50_000 + "</p>"),
    ("[](" * 33_000, "<p>" + "[](" * 33_000 + "</p>"),
]


@pytest.mark.parametrize(("text", "html"), UNCLOSED_LINKS, ids=["words", "brackets", "images", "empty links"])
def test_a_text_of_many_unclosed_links_renders_in_linear_time_as_text(text, html):
    started = time.monotonic()
    assert render_markdown_math(text) == html
    assert time.monotonic() - started < 2


def test_past_the_bracket_limit_links_are_text_and_within_it_they_stay_links():
    within = "[notes](https://example.org/) " + "[" * (MAX_LINK_BRACKETS - 1)
    assert render_markdown_math(within) == (
        '<p><a href="https://example.org/" rel="noopener noreferrer">notes</a> ' + "[" * (MAX_LINK_BRACKETS - 1) + "</p>"
    )
    past = "[notes](javascript:alert(1)) `[x]` $[a]_{i}$ " + "[" * MAX_LINK_BRACKETS
    assert render_markdown_math(past) == (
        "<p>[notes](javascript:alert(1)) <code>[x]</code> $[a]_{i}$ " + "[" * MAX_LINK_BRACKETS + "</p>"
    )


def test_a_power_past_the_largest_float_is_named_not_a_bare_errno():
    spec = engine.load_spec(SOURCE.replace('answer: "a * 2"', 'answer: "(a * 1.0) ** 999 ** 999"')
                            .replace("#PARAMETERS\n", "").replace("#PROMPT\n", ""))
    checked = engine.check_draws(spec, range(1))
    assert [str(problem) for problem in checked.problems] == [
        "part `p` (line 11): expression `(a * 1.0) ** 999 ** 999` failed for 100 of 100 draws: "
        "the result of ** is too large (beyond about ±1.8e308)"
    ]
