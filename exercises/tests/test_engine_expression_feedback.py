"""A symbolic part's known wrong expressions (``options.expression_feedback``) must read with
the part's symbols, as its expected answer does, and must not be the right answer: the file is
refused when one is not (naming the field and its line, in the editor's live check too); a
{{ }} template is filled per variant and checked on drawn variants; a variant grades each
slip wrong, with its feedback."""

import pytest
from django.urls import reverse

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, spec_from_json, spec_to_json
from exercises.engine.rendering import text_problems
from exercises.engine.selftest import self_test_variant

# Line numbers below refer to this file as written (line 1 is "slug: head-scale").
SOURCE = """\
slug: head-scale
title: The per-head scale
version: 1
parameters:
  d_model: {generator: choice, from: [256, 512]}
  h: {generator: choice, from: [4, 8]}
prompt: "A layer {{d_model}} wide runs {{h}} heads."
parts:
  - key: per_head_dk
    type: numeric
    answer: "d_model / h"
    decimals: 0
    solution: "It is {{d_model / h}}."
  - key: heads
    type: numeric
    answer: "h"
    decimals: 0
    solution: "It is {{h}}."
  - key: scale_formula
    type: symbolic
    answer: "1/sqrt(d_model/h)"
    symbols: {d_model: positive, h: positive}
    solution: "Each head divides by the square root of its own width."
    options:
      expression_feedback:
        - expression: EXPRESSION
          feedback: FEEDBACK
        - {expression: "sqrt(d_model/h)", feedback: "that multiplies; the scale divides."}
"""
EXPRESSION_LINE = 26  # the first entry's expression
WHOLE_WIDTH = "you scaled by the whole width d_model, not by one head's d_k = d_model / h."
FIELD = "parts[2].options.expression_feedback"
ENTRY_SHAPE = ("each known wrong expression needs exactly 'expression' (the wrong expression) and 'feedback' (why it "
               "is wrong), and may name its slip with 'misconception' (a misconception code, e.g. no_scaling)")


def source(expression: str = '"1/sqrt(d_model)"', feedback: str = f'"{WHOLE_WIDTH}"') -> str:
    return SOURCE.replace("EXPRESSION", expression).replace("FEEDBACK", feedback)


def refusals(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    return [str(issue) for issue in caught.value.errors]


def test_a_valid_option_loads_and_each_slip_gets_its_feedback():
    spec = load_spec(source())
    params = draw_variant(spec, 0).params
    assert text_problems(spec, params) == []
    assert self_test_variant(spec, params).failures == []
    slip = grade_part(spec, params, "scale_formula", "d_model^(-1/2)")
    assert (slip.correct, slip.score, slip.feedback) == (False, 0.0, f"Not quite: {WHOLE_WIDTH}")
    other = grade_part(spec, params, "scale_formula", "sqrt(d_model)/sqrt(h)")
    assert (other.correct, other.feedback) == (False, "Not quite: that multiplies; the scale divides.")
    right = grade_part(spec, params, "scale_formula", "sqrt(h/d_model)")
    assert (right.correct, right.feedback) == (True, "Correct.")


@pytest.mark.parametrize(
    "expression, message",
    [
        ('"sqrt(h/d_model)"', "is equivalent to the right answer"),
        ('"(d_model/h)^(-1/2)"', "is equivalent to the right answer"),
        ('"1/sqrt(d_k)"', "cannot be read with the part's symbols: unknown symbol 'd_k'; this answer may use d_model, h"),
        ('"1/sqrt(d_model"', "cannot be read with the part's symbols: unbalanced brackets: '(' at position 7 is "
                             "never closed"),
        ('"__import__(\'os\')"', "cannot be read with the part's symbols: unexpected character '_' at position 1: "
                                 "names must start with a letter"),
        ('"d_model @ h"', "cannot be read with the part's symbols: '@' is only used in matrix expressions; "
                         "write * for a product"),
        ('"1/(h - h)"', "cannot be read with the part's symbols: the expression is undefined (it divides by zero)"),
        ('""', "cannot be read with the part's symbols: the answer is empty: type an expression"),
        ("true", 'true is not an expression: write one in the part\'s symbols, e.g. "1/sqrt(d_model)"'),
        ("null", 'null is not an expression: write one in the part\'s symbols, e.g. "1/sqrt(d_model)"'),
        ("[1, 2]", '[1, 2] is not an expression: write one in the part\'s symbols, e.g. "1/sqrt(d_model)"'),
        ('"{{nope}}"', "placeholder {{nope}}: unknown name 'nope' in 'nope'"),
    ],
)
def test_an_expression_that_is_no_known_wrong_one_is_refused_with_its_field_and_line(expression, message):
    assert refusals(source(expression)) == [f"line {EXPRESSION_LINE}: {FIELD}[0].expression: {message}"]


@pytest.mark.parametrize("expression", ['"1/sqrt(d_model)"', '"h/d_model"', "2", "0.125", '"{{d_model}}"',
                                        '"1/sqrt({{d_model}})"', '"1/sqrt({{d_model * h}})"'])
def test_expressions_numbers_and_templates_are_valid(expression):
    spec = load_spec(source(expression))
    assert text_problems(spec, draw_variant(spec, 0).params) == []


@pytest.mark.parametrize(
    "option, issue",
    [
        ('"1/sqrt(d_model)"',
         f"line 25: {FIELD}: must be a list of {{expression, feedback}}: a known wrong expression and why it is wrong"),
        ('["1/sqrt(d_model)"]',
         f"line 26: {FIELD}[0]: {ENTRY_SHAPE}"),
        ('[{expression: "1/sqrt(d_model)"}]',
         f"line 26: {FIELD}[0]: {ENTRY_SHAPE}"),
        ('[{expression: "1/sqrt(d_model)", feedback: "x", value: 1}]',
         f"line 26: {FIELD}[0]: {ENTRY_SHAPE}"),
        ('[{expression: "1/sqrt(d_model)", feedback: " "}]', f"line 26: {FIELD}[0].feedback: must be non-empty text"),
        ('[{expression: "1/sqrt(d_model)", feedback: null}]', f"line 26: {FIELD}[0].feedback: must be non-empty text"),
        ('[{expression: "1/sqrt(d_model)", feedback: "it is {{nope}}"}]',
         f"line 26: {FIELD}[0].feedback: placeholder {{{{nope}}}}: unknown name 'nope' in 'nope'"),
        ("[" + ", ".join(['{expression: "1/sqrt(d_model)", feedback: "x"}'] * 21) + "]",
         f"line 25: {FIELD}: at most 20 known wrong expressions are allowed, found 21"),
    ],
)
def test_the_shape_of_the_option_is_checked(option, issue):
    start = SOURCE.index("      expression_feedback:\n")
    text = SOURCE[:start] + (
        f"      expression_feedback: {option}\n" if not option.startswith("[") else
        "      expression_feedback:\n        " + option + "\n")
    assert refusals(text) == [issue]


def test_every_bad_entry_is_reported_in_one_pass():
    text = source('"sqrt(h/d_model)"', '" "').replace(
        '{expression: "sqrt(d_model/h)", feedback: "that multiplies; the scale divides."}',
        '{expression: "1/sqrt(d_k)", feedback: "x"}')
    assert refusals(text) == [
        f"line 26: {FIELD}[0].expression: is equivalent to the right answer",
        f"line 27: {FIELD}[0].feedback: must be non-empty text",
        f"line 28: {FIELD}[1].expression: cannot be read with the part's symbols: unknown symbol 'd_k'; "
        "this answer may use d_model, h",
    ]


def with_code(code: str) -> str:
    """The source with the first entry naming its slip with ``code`` (as written in YAML)."""
    return source().replace(f'          feedback: "{WHOLE_WIDTH}"\n',
                            f'          feedback: "{WHOLE_WIDTH}"\n          misconception: {code}\n')


def test_an_entry_may_name_its_slip_with_a_misconception_code_a_matching_answer_carries():
    spec = load_spec(with_code("d_model_scale"))
    params = draw_variant(spec, 0).params
    assert self_test_variant(spec, params).failures == []
    slip = grade_part(spec, params, "scale_formula", "d_model^(-1/2)")
    assert (slip.correct, slip.feedback, slip.misconception) == (False, f"Not quite: {WHOLE_WIDTH}", "d_model_scale")
    uncoded = grade_part(spec, params, "scale_formula", "sqrt(d_model)/sqrt(h)")
    assert (uncoded.feedback, uncoded.misconception) == ("Not quite: that multiplies; the scale divides.", None)
    stored = spec_from_json(spec_to_json(spec))
    assert grade_part(stored, params, "scale_formula", "1/sqrt(d_model)").misconception == "d_model_scale"


CODES = ("no_scaling, divided_by_d_k, softmax_wrong_axis, k_not_transposed, weights_transposed, d_model_scale, "
         "raw_weights_used, scale_after_softmax, keys_queries_swapped, values_on_left, transposed_result, "
         "matrix_transposed, dimension_as_number, forgot_sigma, forgot_squares, sigmas_added, projections_swapped, product_of_variances, "
         "sum_of_variances, count_squared, square_of_mean, dropped_mean_square, no_mask, mask_transposed, "
         "mask_hides_self, mask_one_extra, masked_scores_zeroed, mask_after_softmax")


@pytest.mark.parametrize(
    "code, message",
    [
        ("d_model_scal", f"unknown misconception 'd_model_scal' (did you mean 'd_model_scale'?); known: {CODES}"),
        ("wrong_head", f"unknown misconception 'wrong_head'; known: {CODES}"),
        ("null", f"must be a misconception code; known: {CODES}"),
        ("3", f"must be a misconception code; known: {CODES}"),
        ("[no_scaling]", f"must be a misconception code; known: {CODES}"),
    ],
)
def test_a_code_outside_the_catalogue_is_refused_with_its_line(code, message):
    assert refusals(with_code(code)) == [f"line 28: {FIELD}[0].misconception: {message}"]


def test_the_codes_named_in_the_file_are_the_catalogues():
    from grading.core.misconceptions import MISCONCEPTIONS

    assert CODES == ", ".join(MISCONCEPTIONS)


def test_the_file_and_the_checker_allow_the_same_number_of_entries():
    from exercises.engine import spec
    from grading.core import symbolic

    assert spec.MAX_EXPRESSION_FEEDBACK == symbolic.MAX_EXPRESSION_FEEDBACK == 20


def test_only_a_symbolic_part_takes_the_option():
    text = source().replace('    solution: "It is {{h}}."\n', '    solution: "It is {{h}}."\n    options:\n'
                            '      expression_feedback: [{expression: "h", feedback: "x"}]\n')
    assert refusals(text) == [
        "line 20: parts[1].options.expression_feedback: only a symbolic part names known wrong expressions; "
        "a numeric part names known wrong values with value_feedback"
    ]


def test_a_right_answer_written_with_a_template_is_compared_on_each_variant():
    # The right answer depends on the variant, so an entry is compared on each draw: where it is
    # right it is left out (never said), and not offered to the self-test as a wrong answer.
    text = source('"1/sqrt(256/h)"').replace('answer: "1/sqrt(d_model/h)"', 'answer: "1/sqrt({{d_model}}/h)"')
    spec = load_spec(text)
    for seed in range(6):
        params = draw_variant(spec, seed).params
        assert self_test_variant(spec, params).failures == []
        grade = grade_part(spec, params, "scale_formula", "sqrt(h/256)")
        if params["d_model"] == 256:
            assert (grade.correct, grade.feedback) == (True, "Correct.")
        else:
            assert (grade.correct, grade.feedback) == (False, f"Not quite: {WHOLE_WIDTH}")


def test_a_template_is_filled_per_variant():
    spec = load_spec(source('"1/sqrt({{d_model}})"', '"that is 1/sqrt({{d_model}}), the whole width."'))
    params = draw_variant(spec, 0).params
    grade = grade_part(spec, params, "scale_formula", f"1/sqrt({params['d_model']})")
    assert (grade.correct, grade.feedback) == (False, f"Not quite: that is 1/sqrt({params['d_model']}), the whole width.")
    assert self_test_variant(spec, params).failures == []


@pytest.mark.parametrize(
    "expression, detail",
    [
        ('"{{[h, h]}}"', "it fills to [{h}, {h}], not one expression"),
        ('"1/sqrt({{d_model}}) +"', "the expression ends with '+': something is missing after it"),
        ('"{{d_model / (h - h)}}"', "division by zero"),
    ],
)
def test_a_template_is_checked_on_a_drawn_variant_as_grading_fills_it(expression, detail):
    spec = load_spec(source(expression))
    params = draw_variant(spec, 0).params
    template = expression.strip('"')
    assert [(problem.line, problem.field, str(problem)) for problem in text_problems(spec, params)] == [(
        EXPRESSION_LINE, f"{FIELD}[0].expression",
        f"part `scale_formula` (line {EXPRESSION_LINE}): known wrong expression `{template}` cannot be read: "
        f"{detail.format(**params)}; an expression must read with the part's symbols once its {{{{ }}}} are filled in",
    )]


def stored_before_the_check(expression) -> dict:
    """A version whose stored JSON holds an entry the file check would refuse (stored JSON is
    not checked again when it is opened)."""
    data = spec_to_json(load_spec(source()))
    data["parts"][2]["options"]["expression_feedback"][0]["expression"] = expression
    return data


def test_a_stored_version_with_an_unreadable_entry_still_grades_and_its_self_test_names_it():
    spec = spec_from_json(stored_before_the_check("1/sqrt(d_k)"))
    params = draw_variant(spec, 0).params
    assert grade_part(spec, params, "scale_formula", "sqrt(d_model/h)").feedback == (
        "Not quite: that multiplies; the scale divides.")
    assert grade_part(spec, params, "scale_formula", "1/sqrt(d_model)").feedback == (
        "Not equivalent to the correct expression.")
    assert self_test_variant(spec, params).failures == [
        "scale_formula: the part cannot be graded as written: option 'expression_feedback': '1/sqrt(d_k)' cannot "
        "be read: unknown symbol 'd_k'; this answer may use d_model, h (entry 1)"
    ]


def test_the_bank_exercise_names_the_chapters_slips():
    from pathlib import Path

    bank = Path(__file__).resolve().parents[1] / "bank" / "multi-head-dimensions.yaml"
    spec = load_spec(bank.read_text())
    params = draw_variant(spec, 0, name="chapter").params
    assert spec.version == 3
    starts = {
        "1/sqrt(d_model)": "you scaled by the whole width d_model, not by one head's d_k = d_model / h",
        "h/d_model": "that divides by d_k = d_model / h itself, the variance",
        "sqrt(d_model)/sqrt(h)": "that multiplies the scores by √d_k",
        "1/sqrt(h*d_model)": "that uses d_model × h",
    }
    for answer, start in starts.items():
        grade = grade_part(spec, params, "scale_formula", answer)
        assert (grade.correct, grade.score, grade.feedback.startswith(f"Not quite: {start}")) == (False, 0.0, True)
    for right in ("1/sqrt(d_model/h)", "sqrt(h/d_model)", "sqrt(h)/sqrt(d_model)"):
        assert grade_part(spec, params, "scale_formula", right).feedback == "Correct."
    assert self_test_variant(spec, params).failures == []


# --------------------------------------------------------------------------- the editor's live check


@pytest.fixture
def instructor(client, db):
    from authoring.tests.factories import PASSWORD, people_create

    people_create()
    assert client.login(username="ines", password=PASSWORD)
    return client


def test_the_editors_check_shows_the_refusal_with_its_line(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]),
                               {"source": source('"sqrt(h/d_model)"'), "seed": "0"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "The file is valid" not in html
    assert "1 problem in the exercise file" in html
    assert (f'<li data-line="{EXPRESSION_LINE}">line {EXPRESSION_LINE}: '
            f"{FIELD}[0].expression: is equivalent to the right answer</li>") in html


def test_the_editors_check_names_a_template_that_does_not_read_on_the_draws(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]),
                               {"source": source('"1/sqrt({{d_model}}) +"'), "seed": "0"})
    html = response.content.decode()
    assert "Not valid yet. The exercise draws, but its text does not render for any of seeds 0–9." in html
    assert (f'<li data-line="{EXPRESSION_LINE}" data-field="{FIELD}[0].expression">line {EXPRESSION_LINE}: '
            f"{FIELD}[0].expression: part `scale_formula`: known wrong expression `1/sqrt({{{{d_model}}}}) +` cannot "
            "be read for 10 of 10 draws: the expression ends with &#x27;+&#x27;: something is missing after it") in html


def test_the_editors_check_accepts_the_option(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source(), "seed": "0"})
    assert "The file is valid" in response.content.decode()
