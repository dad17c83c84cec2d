"""A declared tolerance that grades 0, or a known wrong value, right is refused when a file is
saved and when a version is published (both check seeds 0-9), not only by "Test 100
variants": a too-loose tolerance used to be published unnoticed. Tried without running any
checker, so it costs a save nothing worth measuring."""

from __future__ import annotations

import pytest

from authoring import selectors, services
from authoring.tests.test_publish_check import solo, stored_before_the_rule  # noqa: F401 (fixture)
from exercises import engine
from exercises.models import ExerciseVersion, VersionStatus

SOURCE = """\
slug: loose-ratio
title: Loose ratio
version: 1
parameters:
  r: {generator: choice, from: [1, 2, 4]}
prompt: "Take r = {{r}}. What is r + 1?"
parts:
  - key: p
    type: numeric
    answer: "r + 1"
    tolerance: {abs: ABS}
    solution: "It is {{r + 1}}."
    options:
      value_feedback:
        - {value: "{{1 / r}}", feedback: "that is 1 / r."}
"""


ACCEPTS_THE_SLIP = (
    "The exercise's tolerance is too loose for seed 0: p: line 11: parts[0].tolerance: the tolerance accepts the "
    "known wrong value 1 (options.value_feedback[0].value, line 15) for the right value 2 on this variant (r = 1): "
    "they are 1 apart, within the tolerance 1.5 there; a tolerance must be smaller than the distance from the right "
    "value to every known wrong value, or that slip is graded right"
)
ACCEPTS_0 = (
    "The exercise's tolerance is too loose for seed 0: p: line 11: parts[0].tolerance: the tolerance accepts 0 for "
    "the right value 2 on this variant (r = 1): 0 is 2 from it, within the tolerance 6 there; a tolerance must be "
    "smaller than the right value's distance to 0, or 0 is graded right"
)


def check(abs_tolerance: str) -> dict:
    return selectors.source_check(source=SOURCE.replace("ABS", abs_tolerance))


def test_seed_0_is_the_variant_r_1():
    assert engine.draw_variant(engine.load_spec(SOURCE.replace("ABS", "0.01")), 0).params == {"r": 1}


@pytest.mark.parametrize("abs_tolerance, failure", [
    ("0.01", None),
    ("0.4", None),  # 1 / r is at least 1 from r + 1, and r + 1 at least 2 from 0, on every variant
    ("1.5", ACCEPTS_THE_SLIP),  # on r = 1: 1 / r = 1 is 1 from 2
    ("6", ACCEPTS_0),
])
def test_a_save_is_refused_for_a_tolerance_that_grades_a_wrong_answer_right(abs_tolerance, failure):
    checked = check(abs_tolerance)
    assert (checked["errors"], checked["failure"]) == ([], failure)


def test_the_editor_refuses_it_with_the_line(solo):
    course, owner = solo
    with pytest.raises(engine.SpecError) as error:
        services.exercise_create(course=course, actor=owner, source=SOURCE.replace("ABS", "6"))
    assert [str(issue) for issue in error.value.errors] == [ACCEPTS_0]


def test_a_version_stored_with_it_is_not_published(solo):
    course, owner = solo
    draft = stored_before_the_rule(course=course, author=owner, source=SOURCE.replace("ABS", "6"))
    with pytest.raises(engine.SpecError) as error:
        services.version_transition(version=draft, actor=owner, to_status=VersionStatus.PUBLISHED)
    assert [str(issue) for issue in error.value.errors] == [ACCEPTS_0]
    assert ExerciseVersion.objects.get(pk=draft.pk).status == VersionStatus.DRAFT
