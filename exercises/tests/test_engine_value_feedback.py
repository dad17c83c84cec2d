"""A numeric part's known wrong values (``options.value_feedback``) must be numbers, or
{{ }} templates that fill to a number: the file is refused when one cannot be (naming the
part, the field and its line), a drawn variant is checked the way grading fills it, and a
version stored before this check still grades its answers (the unreadable value left out)."""

import pytest

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, spec_from_json, spec_to_json
from exercises.engine.rendering import text_problems
from exercises.engine.selftest import self_test_variant

# Line numbers below refer to this file as written (line 1 is "slug: known-values").
SOURCE = """\
slug: known-values
title: Known wrong values
version: 1
parameters:
  d_k: {generator: choice, from: [16, 64]}
  a: {generator: int_range, min: 2, max: 5}
prompt: "Take d_k = {{d_k}}."
parts:
  - key: divisor
    type: numeric
    answer: "sqrt(d_k)"
    decimals: 2
    solution: "It is {{sqrt(d_k)}}."
    options:
      value_feedback:
        - {value: VALUE, feedback: "that is d_k itself, not its square root."}
"""
VALUE_LINE = 16
NOT_A_VALUE = "is not a number: a value must be a number or a {{ }} template that fills to a number"


def source(value: str, *, feedback: str = '"that is d_k itself, not its square root."') -> str:
    return SOURCE.replace("VALUE", value).replace('"that is d_k itself, not its square root."', feedback)


@pytest.mark.parametrize(
    "value",
    ['"{{d_k}}"', "'{{ d_k | 0 }}'", '"{{a * 2}}"', '"{{a}}/2"', "64", "0.25", '"1/4"', '"2.5e-3"', "-3"],
)
def test_numbers_and_templates_are_valid(value):
    spec = load_spec(source(value))
    assert text_problems(spec, draw_variant(spec, 0).params) == []


@pytest.mark.parametrize(
    "value, message",
    [
        ('"d_k"', f"part `divisor`: 'd_k' {NOT_A_VALUE}; to use the value of d_k, write \"{{{{d_k}}}}\""),
        ('"a+1"', f"part `divisor`: 'a+1' {NOT_A_VALUE}; to use the value of a+1, write \"{{{{a+1}}}}\""),
        ('"sqrt(d_k) * 2"',
         f"part `divisor`: 'sqrt(d_k) * 2' {NOT_A_VALUE}; to use the value of sqrt(d_k) * 2, write \"{{{{sqrt(d_k) * 2}}}}\""),
        ('"sixty-four"', f"part `divisor`: 'sixty-four' {NOT_A_VALUE}"),
        ('"0,25"', f"part `divisor`: '0,25' {NOT_A_VALUE}"),
        ("true", f"part `divisor`: true {NOT_A_VALUE}"),
        ("[1, 2]", f"part `divisor`: [1, 2] {NOT_A_VALUE}"),
        ("null", f"part `divisor`: null {NOT_A_VALUE}"),
        ('"{{nope}}"', "placeholder {{nope}}: unknown name 'nope' in 'nope'"),
    ],
)
def test_a_value_that_is_no_number_is_refused_with_its_part_field_and_line(value, message):
    with pytest.raises(SpecError) as caught:
        load_spec(source(value))
    assert [str(issue) for issue in caught.value.errors] == [
        f"line {VALUE_LINE}: parts[0].options.value_feedback[0].value: {message}"
    ]


@pytest.mark.parametrize(
    "value_feedback, issue",
    [
        ('"0.25"', "line 15: parts[0].options.value_feedback: must be a list of {value, feedback}: "
                   "a known wrong value and why it is wrong"),
        ("[0.25]", "line 16: parts[0].options.value_feedback[0]: each known wrong value needs exactly "
                   "'value' (the wrong value) and 'feedback' (why it is wrong)"),
        ("[{value: 0.25}]", "line 16: parts[0].options.value_feedback[0]: each known wrong value needs exactly "
                            "'value' (the wrong value) and 'feedback' (why it is wrong)"),
        ('[{value: 0.25, feedback: " "}]', "line 16: parts[0].options.value_feedback[0].feedback: must be non-empty text"),
        ('[{value: 0.25, feedback: "it is {{nope}}"}]',
         "line 16: parts[0].options.value_feedback[0].feedback: placeholder {{nope}}: unknown name 'nope' in 'nope'"),
    ],
)
def test_the_shape_of_the_option_is_checked(value_feedback, issue):
    text = SOURCE.replace(
        '      value_feedback:\n        - {value: VALUE, feedback: "that is d_k itself, not its square root."}\n',
        f"      value_feedback: {value_feedback}\n" if not value_feedback.startswith("[") else
        "      value_feedback:\n        " + value_feedback + "\n",
    )
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    assert [str(issue) for issue in caught.value.errors] == [issue]


@pytest.mark.parametrize(
    "value, detail",
    [
        ('"{{a}} + 1"', "could not read '{a} + 1' as a number; write it like 0.25, 1/4 or 2.5e-3"),
        ('"{{[a, a]}}"', "it fills to [{a}, {a}], not one number"),
        ('"{{a / (a - a)}}"', "division by zero"),
    ],
)
def test_a_template_is_checked_on_a_drawn_variant_as_grading_fills_it(value, detail):
    spec = load_spec(source(value))
    params = draw_variant(spec, 0).params
    problems = text_problems(spec, params)
    template = value.strip('"')
    assert [(problem.line, problem.field, str(problem)) for problem in problems] == [(
        VALUE_LINE, "parts[0].options.value_feedback[0].value",
        f"part `divisor` (line {VALUE_LINE}): known wrong value `{template}` is not a number: "
        f"{detail.format(a=params['a'])}; a value must be a number or a {{{{ }}}} template that fills to a number",
    )]


def test_check_and_preview_refuses_the_file():
    from authoring.selectors import source_check, source_check_issues

    checked = source_check(source=source('"d_k"'))
    assert [str(issue) for issue in source_check_issues(checked)] == [
        f"line {VALUE_LINE}: parts[0].options.value_feedback[0].value: part `divisor`: 'd_k' {NOT_A_VALUE}; "
        "to use the value of d_k, write \"{{d_k}}\""
    ]
    drawn = source_check(source=source('"{{a}} + 1"'))
    issues = [str(issue) for issue in source_check_issues(drawn)]
    assert issues[0] == "The exercise draws, but its text does not render for any of seeds 0–9."
    assert issues[1].startswith(
        f"line {VALUE_LINE}: parts[0].options.value_feedback[0].value: part `divisor`: "
        "known wrong value `{{a}} + 1` is not a number for 10 of 10 draws: e.g. could not read"
    )


def stored_before_the_check(value) -> dict:
    """A version saved before values were checked: its stored JSON, with ``value``."""
    data = spec_to_json(load_spec(source("0.5")))
    data["parts"][0]["options"]["value_feedback"][0]["value"] = value
    return data


@pytest.mark.parametrize("value", ["d_k", "a+1", True, [4]])
def test_a_version_stored_before_the_check_still_grades_its_answers(value):
    spec = spec_from_json(stored_before_the_check(value))  # opens: not refused for a newer rule
    params = draw_variant(spec, 0).params
    right = f"{params['d_k'] ** 0.5:.2f}"
    assert (grade_part(spec, params, "divisor", right).correct, grade_part(spec, params, "divisor", right).error) == (
        True, None)
    wrong = grade_part(spec, params, "divisor", str(params["d_k"]))
    assert (wrong.correct, wrong.error, wrong.feedback) == (False, None, "Not correct.")
    assert grade_part(spec, params, "divisor", "abc").error == (
        "could not read 'abc' as a number: it contains letters; type a number such as 0.25 or 1/4"
    )


def test_the_variant_self_test_names_the_unreadable_value():
    spec = spec_from_json(stored_before_the_check("d_k"))
    result = self_test_variant(spec, draw_variant(spec, 0).params)
    assert result.failures == [
        "divisor: the part cannot be graded as written: option 'value_feedback': could not read 'd_k' as a "
        "number: it contains letters; type a number such as 0.25 or 1/4 (entry 1)"
    ]


def test_a_known_wrong_value_from_a_template_is_said():
    spec = load_spec(source('"{{d_k}}"'))
    params = draw_variant(spec, 0).params
    grade = grade_part(spec, params, "divisor", str(params["d_k"]))
    assert (grade.correct, grade.feedback) == (False, "Not quite: that is d_k itself, not its square root.")
    assert self_test_variant(spec, params).failures == []
