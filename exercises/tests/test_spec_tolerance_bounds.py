"""A declared tolerance (``tolerance: {abs, rel}``, or ``options.atol`` / ``rtol``) is a finite
number >= 0 when the file is read, and on every variant the self-test grades it must refuse
what a serious platform marks wrong: 0 for a right value that is not 0 (a matrix: 0 in every
entry), and each of the part's known wrong values that is not the right value itself.

An absolute tolerance says nothing of the answer's size, which depends on the variant, so
this is checked on each drawn variant, naming the tolerance's line, the variant's values
and the numbers compared (the bank's validation names the seed in front)."""

import pytest

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, spec_from_json, spec_to_json
from exercises.engine.selftest import self_test_variant

# Line numbers below refer to these sources as written (line 1 is "slug: ...").
SOURCE = """\
slug: tolerance-bounds
title: Tolerance bounds
version: 1
parameters:
  a: {generator: choice, from: [A]}
prompt: "Take a = {{a}}."
parts:
  - key: p
    type: numeric
    answer: "a / 10"
    tolerance: TOLERANCE
    solution: "It is {{a / 10}}."
"""
TOLERANCE_LINE = 11
UNSTORABLE = ("is not a finite number ({value}); write a finite number (NaN, infinity and numbers beyond ±1.8e308 "
              "cannot be stored)")
NOT_A_TOLERANCE = "must be a number >= 0"


def source(tolerance: str, a: str = "3") -> str:
    return SOURCE.replace("TOLERANCE", tolerance).replace("[A]", f"[{a}]")


# (abs as written in YAML, the issue; None: the file is read)
ABSOLUTE = [
    ("0", None),
    ("0.05", None),
    ("1.0e+300", None),  # finite: what it accepts is the variant's business (below)
    ("-1", NOT_A_TOLERANCE),
    ("-0.001", NOT_A_TOLERANCE),
    (".nan", UNSTORABLE.format(value=".nan")),
    (".inf", UNSTORABLE.format(value=".inf")),
    ("-.inf", UNSTORABLE.format(value="-.inf")),
    ("1e400", NOT_A_TOLERANCE),  # YAML 1.1 reads it as text
    ('"0.05"', NOT_A_TOLERANCE),
    ("true", NOT_A_TOLERANCE),
    ("[0.05]", NOT_A_TOLERANCE),
    ("null", NOT_A_TOLERANCE),
]


@pytest.mark.parametrize("written, issue", ABSOLUTE, ids=[row[0] for row in ABSOLUTE])
def test_an_absolute_tolerance_is_a_finite_number_not_below_0(written, issue):
    text = source(f"{{abs: {written}}}")
    if issue is None:
        assert load_spec(text).part("p").tolerance == {"atol": float(written), "rtol": 0.0}
        return
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    assert [str(problem) for problem in caught.value.errors] == [
        f"line {TOLERANCE_LINE}: parts[0].tolerance.abs: {issue}"
    ]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_a_stored_version_is_held_to_a_finite_absolute_tolerance_too(value):
    data = spec_to_json(load_spec(source("{abs: 0.05}")))
    data["parts"][0]["tolerance"]["abs"] = value
    with pytest.raises(SpecError) as caught:
        spec_from_json(data)
    assert [str(problem) for problem in caught.value.errors] == [f"parts[0].tolerance.abs: {NOT_A_TOLERANCE}"]


def failures(text: str) -> list[str]:
    spec = load_spec(text)
    return self_test_variant(spec, draw_variant(spec, 0).params).failures


ZERO_ACCEPTED = ("p: line 11: parts[0].tolerance: the tolerance accepts 0 for the right value 0.3 on this variant "
                 "(a = 3): 0 is 0.3 from it, within the tolerance {tolerance} there; a tolerance must be smaller "
                 "than the right value's distance to 0, or 0 is graded right")

# (tolerance, a, the self-test's failures on the variant): the right value is a / 10.
AGAINST_ZERO = [
    ("{abs: 0.05}", "3", []),
    ("{abs: 0.29}", "3", []),
    ("{abs: 0.3}", "3", [ZERO_ACCEPTED.format(tolerance="0.3")]),  # the boundary is included: 0 is right
    ("{abs: 0.5}", "3", [ZERO_ACCEPTED.format(tolerance="0.5")]),
    ("{rel: 0.5}", "3", []),  # a relative tolerance below 1 alone never reaches 0
    ("{abs: 0.2, rel: 0.4}", "3", [ZERO_ACCEPTED.format(tolerance="0.32")]),  # 0.2 + 0.4 × 0.3
    ("{abs: 0.2, rel: 0.3}", "3", []),  # 0.2 + 0.3 × 0.3 = 0.29
    ("{abs: 0.05}", "0", []),  # 0 is the right value: nothing to keep it from
    ("{abs: 0.5}", "0", []),
]


@pytest.mark.parametrize("tolerance, a, expected", AGAINST_ZERO, ids=[f"{row[0]} a={row[1]}" for row in AGAINST_ZERO])
def test_a_tolerance_that_accepts_0_for_a_right_value_that_is_not_0_fails_the_self_test(tolerance, a, expected):
    assert failures(source(tolerance, a)) == expected


def test_what_the_failure_is_about_a_tolerance_that_reaches_0_grades_0_right():
    spec = load_spec(source("{abs: 0.5}"))
    params = draw_variant(spec, 0).params
    assert grade_part(spec, params, "p", "0").correct is True


def test_a_huge_absolute_tolerance_is_named_as_such():
    assert failures(source("{abs: 1.0e+300}")) == [
        ZERO_ACCEPTED.format(tolerance="1e+300"),
        "p: wrong answer '-0.3' was accepted",  # the checker's own wrong answers only show the sign slip
    ]


KNOWN_WRONG = """\
slug: inverted-ratio
title: Inverted ratio
version: 1
parameters:
  r: {generator: choice, from: [R]}
prompt: "Take r = {{r}}."
parts:
  - key: ratio
    type: numeric
    answer: "r"
    tolerance: TOLERANCE
    options:
      value_feedback:
        - {value: 0.5, feedback: "that is half of it."}
        - {value: "{{1 / r}}", feedback: "that is the ratio inverted."}
    solution: "It is {{r}}."
"""
INVERTED = ("ratio: line 11: parts[0].tolerance: the tolerance accepts the known wrong value 0.980392 "
            "(options.value_feedback[1].value, line 15) for the right value 1.02 on this variant (r = 1.02): they "
            "are 0.0396078 apart, within the tolerance {tolerance} there; a tolerance must be smaller than the "
            "distance from the right value to every known wrong value, or that slip is graded right")

# (tolerance, r, failures): the inverted ratio 1/r is 0.0396 from r = 1.02.
AGAINST_KNOWN_WRONG = [
    ("{abs: 0.01}", "1.02", []),
    ("{abs: 0.05}", "1.02", [INVERTED.format(tolerance="0.05")]),
    ("{rel: 0.01}", "1.02", []),
    ("{rel: 0.05}", "1.02", [INVERTED.format(tolerance="0.051")]),  # 0.05 × 1.02: rel is held to it too
    ("{abs: 0.05}", "1", []),  # 1/r is the right value itself on this variant: never said, not a slip
    ("{abs: 0.5}", "1", [
        "ratio: line 11: parts[0].tolerance: the tolerance accepts the known wrong value 0.5 "
        "(options.value_feedback[0].value, line 14) for the right value 1 on this variant (r = 1): they are 0.5 "
        "apart, within the tolerance 0.5 there; a tolerance must be smaller than the distance from the right value "
        "to every known wrong value, or that slip is graded right",
    ]),
]


@pytest.mark.parametrize("tolerance, r, expected", AGAINST_KNOWN_WRONG,
                         ids=[f"{row[0]} r={row[1]}" for row in AGAINST_KNOWN_WRONG])
def test_a_tolerance_that_accepts_a_known_wrong_value_fails_the_self_test(tolerance, r, expected):
    assert failures(KNOWN_WRONG.replace("TOLERANCE", tolerance).replace("[R]", f"[{r}]")) == expected


def test_the_slip_a_loose_tolerance_lets_through_is_graded_right():
    spec = load_spec(KNOWN_WRONG.replace("TOLERANCE", "{abs: 0.05}").replace("[R]", "[1.02]"))
    grade = grade_part(spec, draw_variant(spec, 0).params, "ratio", "0.98")
    assert (grade.correct, grade.feedback) == (True, "Correct.")


def test_an_atol_option_is_the_tolerance_named_when_it_overrides_the_part_s_tolerance():
    text = source("{abs: 0.001}").replace('    solution: "It is {{a / 10}}."\n',
                                           '    options: {atol: 0.5}\n    solution: "It is {{a / 10}}."\n')
    assert failures(text) == [
        "p: line 12: parts[0].options.atol: the tolerance accepts 0 for the right value 0.3 on this variant (a = 3): "
        "0 is 0.3 from it, within the tolerance 0.5 there; a tolerance must be smaller than the right value's "
        "distance to 0, or 0 is graded right"
    ]


def test_decimals_are_a_rounding_rule_not_a_declared_tolerance():
    # 0.003 shown to 2 decimals is 0.00: 0 is a right rounding of it, not a tolerance too loose.
    text = source("{abs: 0.05}").replace("    tolerance: {abs: 0.05}\n", "    decimals: 2\n").replace(
        'answer: "a / 10"', 'answer: "a / 1000"')
    assert failures(text) == []


MATRIX = """\
slug: small-entries
title: Small entries
version: 1
parameters:
  a: {generator: choice, from: [3]}
prompt: "Take a = {{a}}."
parts:
  - key: m
    type: matrix
    answer: "[a / 1000, B]"
    tolerance: TOLERANCE
    solution: "It is {{[a / 1000, B]}}."
"""


def test_a_matrix_tolerance_fails_when_it_accepts_0_in_every_entry():
    loose = MATRIX.replace("TOLERANCE", "{abs: 0.01}").replace("B", "2 * a / 1000")
    assert [failure for failure in failures(loose) if "tolerance" in failure] == [
        "m: line 11: parts[0].tolerance: the tolerance accepts 0 in every entry of the right value [0.003, 0.006] on "
        "this variant (a = 3): each entry is within its tolerance of 0 (at most 0.01 there); a tolerance must be "
        "smaller than the right value's distance to 0, or 0 is graded right"
    ]
    one_entry_apart = MATRIX.replace("TOLERANCE", "{abs: 0.01}").replace("B", "a / 10")
    assert failures(one_entry_apart) == []


def test_the_bank_s_validation_names_the_seed_of_the_variant():
    from exercises.services_bank import exercise_validate

    report = exercise_validate(spec=load_spec(source("{abs: 0.5}")), seeds=2)
    assert report.failures == [f"seed {seed}: {ZERO_ACCEPTED.format(tolerance='0.5')}" for seed in (0, 1)]
