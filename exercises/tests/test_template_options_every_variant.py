"""Options filled from {{ }} templates on every variant a student can be given.

What a template fills to is known only on a variant. Two kinds of option are told apart:

* feedback entries (a known wrong value or expression, a choice's feedback) are extra: on a
  variant where one cannot be filled in, grading leaves it out, so the page shows and the
  answer grades as without it (the page had answered 500, and so had grading); and when the
  parameters can take at most MAX_VARIANTS_CHECKED_EVERY sets of values, the file is refused
  if one fails on any of the variants students can be given, naming the line, how many and
  the values of one, since a sample of seeds may miss them;
* an option the checker grades with (a matrix expression's scalars) is what the variant is
  graded by: a draw on which it cannot be filled in is redrawn, as a draw that fails a gate
  is, and a named variant (never redrawn) on which it cannot is refused.
"""

import pytest
from django.urls import reverse

from exercises.engine import (
    SpecError,
    VariantError,
    draw_variant,
    grade_part,
    load_spec,
    part_options,
    spec_to_json,
)
from exercises.engine.selftest import options_on_every_variant, self_test_variant
from exercises.engine.spec import MAX_VARIANTS_CHECKED_EVERY
from exercises.engine.variants import every_variant

# Line numbers below refer to these sources as written (line 1 is "slug: ...").
INVERTED = """\
slug: inverted-ratio
title: Inverted ratio
version: 1
parameters:
  r: {generator: choice, from: [0, 1, 2, 4]}
prompt: "Take r = {{r}}."
parts:
  - key: p
    type: numeric
    answer: "r + 1"
    decimals: 2
    solution: "It is {{r + 1}}."
    options:
      value_feedback:
        - {value: "VALUE", feedback: "that is 1 / r."}
"""
VALUE_LINE = 15
NO_GATE = "it must fill in on every variant (a gate with kind: require can rule the others out)"
RATIO_IS_NOT_0 = """\
gates:
  checks:
    - {kind: require, expr: "r != 0", reason: the inverted ratio needs r other than 0}
"""


def refused(value: str, count: str, example: str, why: str) -> str:
    return (f"line {VALUE_LINE}: parts[0].options.value_feedback[0].value: part `p`: known wrong value `{value}` "
            f"cannot be filled in on {count} of the 4 variants students can be given, e.g. {example}: {why}; {NO_GATE}")


# (the known wrong value, the issue when the file is read)
TEMPLATES = [
    ("{{1 / r}}", refused("{{1 / r}}", "1", "r = 0", "division by zero")),
    ("{{log(r)}}", refused("{{log(r)}}", "1", "r = 0", "it fills to -inf, not a finite number")),
    ("{{sqrt(r - 1)}}", refused("{{sqrt(r - 1)}}", "1", "r = 0", "it fills to nan, not a finite number")),
    ("{{[r, r][r]}}", refused("{{[r, r][r]}}", "2", "r = 2", "index 2 is out of bounds for axis 0 with size 2")),
    ("{{1 / (r + 1)}}", None),
]


@pytest.mark.parametrize("value, issue", TEMPLATES, ids=[row[0] for row in TEMPLATES])
def test_a_feedback_template_is_filled_in_on_every_variant_of_a_small_space(value, issue):
    text = INVERTED.replace("VALUE", value)
    if issue is None:
        load_spec(text)
        return
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    assert [str(problem) for problem in caught.value.errors] == [issue]


def test_a_gate_that_rules_the_variant_out_makes_the_file_valid():
    spec = load_spec(INVERTED.replace("VALUE", "{{1 / r}}") + RATIO_IS_NOT_0)
    assert sorted(draw_variant(spec, seed).params["r"] for seed in range(40)) == [1] * 16 + [2] * 12 + [4] * 12
    assert [self_test_variant(spec, {"r": r}).failures for r in (1, 2, 4)] == [[], [], []]


def test_a_choice_feedback_is_filled_in_on_every_variant_too():
    text = INVERTED.replace(
        """    type: numeric
    answer: "r + 1"
    decimals: 2
    solution: "It is {{r + 1}}."
    options:
      value_feedback:
        - {value: "VALUE", feedback: "that is 1 / r."}
""", """    type: choice
    choices:
      - {key: A, text: "r + 1"}
      - {key: B, text: "1 / r", feedback: "that is {{1 / r}}, the ratio inverted."}
    answer: A
    solution: "It is {{r + 1}}."
""")
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    assert [str(problem) for problem in caught.value.errors] == [
        "line 12: parts[0].choices[1].feedback: part `p`: choice feedback `that is {{1 / r}}, the ratio inverted.` "
        f"cannot be filled in on 1 of the 4 variants students can be given, e.g. r = 0: division by zero; {NO_GATE}"
    ]


def test_a_template_that_fills_in_on_no_variant_is_left_to_the_drawn_variants_check():
    # Every drawn variant reports it (Check and preview refuses the file for seeds 0–9).
    spec = load_spec(INVERTED.replace("VALUE", "{{1 / (r - r)}}"))
    assert self_test_variant(spec, draw_variant(spec, 0).params).failures == [
        f"p: line {VALUE_LINE}: parts[0].options.value_feedback[0].value: known wrong value `{{{{1 / (r - r)}}}}` "
        f"cannot be filled in on this variant (r = {draw_variant(spec, 0).params['r']}): division by zero"
    ]


# A space too large to fill in every variant of: only a sample is, so r = 0 can be drawn.
LARGE = INVERTED.replace("{generator: choice, from: [0, 1, 2, 4]}",
                         f"{{generator: int_range, min: 0, max: {MAX_VARIANTS_CHECKED_EVERY}}}")


def test_a_space_past_the_limit_is_not_filled_in_on_every_variant():
    spec = load_spec(LARGE.replace("VALUE", "{{1 / r}}"))  # read, with its unchecked variant r = 0
    assert every_variant(spec, MAX_VARIANTS_CHECKED_EVERY) is None
    at_the_limit = load_spec(LARGE.replace("VALUE", "{{1 / (r + 1)}}").replace("min: 0,", "min: 1,"))
    assert len(every_variant(at_the_limit, MAX_VARIANTS_CHECKED_EVERY)) == MAX_VARIANTS_CHECKED_EVERY
    with pytest.raises(SpecError) as caught:
        load_spec(LARGE.replace("VALUE", "{{1 / r}}").replace("min: 0,", "min: -1999,").replace(
            f"max: {MAX_VARIANTS_CHECKED_EVERY}", "max: 0"))
    assert [str(problem) for problem in caught.value.errors] == [
        f"line {VALUE_LINE}: parts[0].options.value_feedback[0].value: part `p`: known wrong value `{{{{1 / r}}}}` "
        f"cannot be filled in on 1 of the 2000 variants students can be given, e.g. r = 0: division by zero; {NO_GATE}"
    ]


def test_on_a_variant_a_feedback_entry_that_cannot_be_filled_in_is_left_out_and_the_answer_graded():
    spec = load_spec(LARGE.replace("VALUE", "{{1 / r}}"))
    assert part_options(spec, {"r": 0}, "p") == {"decimals": 2, "value_feedback": []}
    assert part_options(spec, {"r": 4}, "p") == {
        "decimals": 2, "value_feedback": [{"value": 0.25, "feedback": "that is 1 / r."}]}
    right, wrong = grade_part(spec, {"r": 0}, "p", "1"), grade_part(spec, {"r": 0}, "p", "7")
    assert (right.correct, right.feedback, wrong.correct, wrong.feedback) == (True, "Correct.", False, "Not correct.")
    assert grade_part(spec, {"r": 4}, "p", "0.25").feedback == "Not quite: that is 1 / r."
    assert self_test_variant(spec, {"r": 0}).failures == [
        f"p: line {VALUE_LINE}: parts[0].options.value_feedback[0].value: known wrong value `{{{{1 / r}}}}` cannot be "
        "filled in on this variant (r = 0): division by zero"
    ]


@pytest.mark.django_db
def test_a_student_given_such_a_variant_gets_the_page_and_a_grade(client, django_user_model,
                                                                  django_capture_on_commit_callbacks):
    from exercises.tests.stored_variants import variant_stored
    from grading.models import Submission

    student = django_user_model.objects.create_user(username="student", password="x")
    variant = variant_stored(source=LARGE.replace("VALUE", "{{1 / r}}"), params={"r": 0}, student=student)
    item = variant.assignment_item
    client.force_login(student)
    assert client.get(reverse("exercise", args=[item.pk])).status_code == 200
    for answer in ("7", "1"):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("submit", args=[variant.pk, "p"]), {"answer": answer},
                                   HTTP_HX_REQUEST="true")
        assert response.status_code == 200
    graded = Submission.objects.order_by("attempt").values_list("status", "correct", "feedback")
    assert [(status, correct, feedback["message"]) for status, correct, feedback in graded] == [
        ("graded", False, "Not correct."), ("graded", True, "Correct."),
    ]


SCALARS = """\
slug: scalar-sizes
title: Scalar sizes
version: 1
parameters:
  n: {generator: int_range, min: 2, max: 4}
  w: {generator: choice, from: [0, 8, 16]}
prompt: "Q and K are {{n}} by {{w}}."
parts:
  - key: f
    type: matrix_expression
    answer: "Q K^T"
    options:
      matrices: {Q: [n, d_k], K: [n, d_k]}
      scalars: {n: "{{n}}", d_k: "{{w}}"}
    solution: "Q K^T."
"""
SCALAR_PROBLEM = ("part `f` (line 14): option scalars.d_k `{{w}}` cannot be filled in: it fills to 0, and the size "
                  "of a matrix must be a whole number from 1 to 64")


def test_a_draw_whose_graded_options_cannot_be_filled_in_is_redrawn():
    spec = load_spec(SCALARS)
    draws = [draw_variant(spec, seed) for seed in range(30)]
    assert sorted({draw.params["w"] for draw in draws}) == [8, 16]
    redrawn = [draw for draw in draws if draw.attempts > 1]
    assert [draw.seed for draw in redrawn] == [1, 5, 16, 18, 22, 26, 27]
    assert {str(problem) for draw in redrawn for problem in draw.problems} == {SCALAR_PROBLEM}
    assert {reason for draw in redrawn for reason in draw.rejections} == {
        "option: it fills to 0, and the size of a matrix must be a whole number from 1 to 64"}
    assert self_test_variant(spec, {"n": 2, "w": 0}).failures == [
        "f: line 14: parts[0].options.scalars.d_k: option scalars.d_k `{{w}}` cannot be filled in on this variant "
        "(w = 0): it fills to 0, and the size of a matrix must be a whole number from 1 to 64"
    ]
    assert options_on_every_variant(spec) == []  # the draws never give it: nothing to refuse the file for


def test_a_named_variant_whose_graded_options_cannot_be_filled_in_is_refused():
    spec = load_spec(SCALARS + "variants:\n  flat: {n: 2, w: 0}\n  wide: {n: 3, w: 16}\n")
    assert draw_variant(spec, 0, name="wide").params == {"n": 3, "w": 16}
    with pytest.raises(VariantError) as caught:
        draw_variant(spec, 0, name="flat")
    assert str(caught.value) == f"'scalar-sizes': the named variant 'flat' cannot be graded: {SCALAR_PROBLEM}"


def test_check_and_preview_refuses_graded_options_that_fill_in_on_no_variant():
    from authoring.selectors import source_check, source_check_issues

    checked = source_check(source=SCALARS.replace("from: [0, 8, 16]", "from: [0]"))
    assert [str(issue) for issue in source_check_issues(checked)] == [
        "The exercise does not work: none of seeds 0–9 gives an acceptable variant in 100 draws each.",
        "line 14: parts[0].options.scalars.d_k: part `f`: option scalars.d_k `{{w}}` cannot be filled in for 1000 of "
        "1000 draws: it fills to 0, and the size of a matrix must be a whole number from 1 to 64",
    ]


ENUMERATED = """\
slug: enumerated
title: Every variant
version: 1
parameters:
  n: {generator: int_range, min: 1, max: 2}
  m: {generator: int_range, min: n, max: 2}
  c: {generator: choice, from: [5, 5, 6]}
  s: {generator: derived, expr: "n + m + c"}
  M: {generator: int_matrix, shape: [1, n], min: 0, max: 1}
prompt: "{{s}}"
parts:
  - {key: p, type: numeric, answer: "s", solution: "{{s}}"}
"""


def test_every_variant_follows_the_generators_and_each_bound_on_the_ones_above():
    spec = load_spec(ENUMERATED)
    variants = every_variant(spec, 100)
    assert [(v["n"], v["m"], v["c"], v["s"], v["M"]) for v in variants] == [
        (1, 1, 5, 7, [[0]]), (1, 1, 5, 7, [[1]]), (1, 1, 6, 8, [[0]]), (1, 1, 6, 8, [[1]]),
        (1, 2, 5, 8, [[0]]), (1, 2, 5, 8, [[1]]), (1, 2, 6, 9, [[0]]), (1, 2, 6, 9, [[1]]),
        (2, 2, 5, 9, [[0, 0]]), (2, 2, 5, 9, [[0, 1]]), (2, 2, 5, 9, [[1, 0]]), (2, 2, 5, 9, [[1, 1]]),
        (2, 2, 6, 10, [[0, 0]]), (2, 2, 6, 10, [[0, 1]]), (2, 2, 6, 10, [[1, 0]]), (2, 2, 6, 10, [[1, 1]]),
    ]
    drawn = {tuple(map(str, draw_variant(spec, seed).params.values())) for seed in range(200)}
    assert drawn == {tuple(map(str, v.values())) for v in variants}  # the draws give exactly these
    assert every_variant(spec, 15) is None


def test_a_space_whose_variants_cost_too_much_to_evaluate_is_left_to_the_drawn_variants():
    # 2,000 variants, each with ten derived parameters of about 250 syntax-tree nodes: five
    # million nodes to evaluate, past MAX_EVERY_VARIANT_WORK, so reading the file stays quick.
    from exercises.engine.spec import MAX_EVERY_VARIANT_WORK

    heavy = "sum([" + ", ".join(["r * 2 + r"] * 30) + "])"
    derived = "".join(f'  d{index}: {{generator: derived, expr: "{heavy}"}}\n' for index in range(10))
    text = LARGE.replace("VALUE", "{{1 / r}}").replace(
        f"max: {MAX_VARIANTS_CHECKED_EVERY}}}\n", f"max: {MAX_VARIANTS_CHECKED_EVERY - 1}}}\n" + derived)
    spec = load_spec(text)  # not refused: r = 0 is left to the drawn variants' check
    assert every_variant(spec, MAX_VARIANTS_CHECKED_EVERY, budget=MAX_EVERY_VARIANT_WORK) is None
    assert len(every_variant(spec, MAX_VARIANTS_CHECKED_EVERY, budget=10 * MAX_EVERY_VARIANT_WORK)) == 2000
    assert self_test_variant(spec, {**draw_variant(spec, 0).params, "r": 0}).failures == [
        "p: line 25: parts[0].options.value_feedback[0].value: known wrong value `{{1 / r}}` cannot be filled in on "
        "this variant (r = 0): division by zero"
    ]
