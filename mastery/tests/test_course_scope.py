"""Mastery is kept per course: a student answering in two courses has one history and one
P(known) per course, each course's staff see their course's only (the grid, its column
means), the student's dashboard shows each course's map under that course, a practice
answer counts in the course of the item it was started from, and regrading one course's
answer leaves the other course alone."""

from fractions import Fraction

import pytest
from django.urls import reverse

from courses.models import Assignment, AssignmentItem, Course, Enrolment, Role
from exercises.engine.skills import SKILL_SLUGS
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission
from grading.tests.conftest import WORKED_EXAMPLE
from mastery import selectors, services
from mastery.models import Observation, SkillMastery

pytestmark = pytest.mark.django_db

PRIOR, LEARN, GUESS, SLIP = Fraction(3, 10), Fraction(3, 20), Fraction(1, 10), Fraction(1, 10)  # the defaults


def p_known_after(outcomes) -> float:
    """The BKT equations of docs/mastery.md, in exact fractions, from the default prior."""
    known = PRIOR
    for correct in outcomes:
        if correct:
            posterior = known * (1 - SLIP) / (known * (1 - SLIP) + (1 - known) * GUESS)
        else:
            posterior = known * SLIP / (known * SLIP + (1 - known) * (1 - GUESS))
        known = posterior + (1 - posterior) * LEARN
    return float(known)


TWO_SLIPS = p_known_after([False, False])  # 11299/65920
ONE_RIGHT = p_known_after([True])  # 561/680
WRONG_RIGHT = p_known_after([False, True])  # 5337/7360


@pytest.fixture
def second(demo, django_user_model):
    """A second course holding the worked example, taught by 'bea', with student1 enrolled."""
    course = Course.objects.create(slug="second", title="Second course")
    bea = django_user_model.objects.create_user(username="bea", password="pw-bea-123")
    Enrolment.objects.create(course=course, user=bea, role=Role.INSTRUCTOR)
    Enrolment.objects.create(
        course=course, user=django_user_model.objects.get(username="student1"), role=Role.STUDENT
    )
    assignment = Assignment.objects.create(course=course, slug="week1", title="Week 1")
    version = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    ).exercise_version
    item = AssignmentItem.objects.create(assignment=assignment, exercise_version=version)
    return course, item, bea


def stored(course, student):
    return {
        row.skill: (round(row.p_known, 12), row.attempts)
        for row in SkillMastery.objects.filter(course=course, student=student)
    }


def grid(course):
    columns = selectors.grid_columns(course=course)
    _, rows = selectors.grid_page(course=course, columns=columns, page_number=1)
    means = {column.skill: (column.mean, column.students_seen) for column in columns if column.mean is not None}
    cells = {row.name: {column.skill: cell.p_known for column, cell in zip(columns, row.cells) if cell.attempts}
             for row in rows}
    return means, cells


def test_each_course_keeps_its_own_history_and_p_known(answer, demo, variant, student, second):
    course_b, item_b, _ = second
    answer(variant, student, "no_scaling")
    answer(variant, student, "no_scaling_retyped")
    answer(variant_get_or_create_for_item(item=item_b, student=student), student, "right")
    assert stored(demo.course, student) == {"scaling": (round(TWO_SLIPS, 12), 2)}
    assert stored(course_b, student) == {
        skill: (round(ONE_RIGHT, 12), 1) for skill in ("dot-product-scores", "scaling", "softmax")
    }
    assert sorted(Observation.objects.values_list("course__slug", "skill", "correct")) == [
        (demo.course.slug, "scaling", False), (demo.course.slug, "scaling", False),
        ("second", "dot-product-scores", True), ("second", "scaling", True), ("second", "softmax", True),
    ]


def test_each_instructor_sees_only_their_courses_answers(answer, client, demo, variant, student, second):
    course_b, item_b, bea = second
    answer(variant, student, "no_scaling")
    answer(variant, student, "no_scaling_retyped")
    answer(variant_get_or_create_for_item(item=item_b, student=student), student, "right")
    # course A: only the two slips (pooled with B's right answer it would be 5337/7360 = 0.7251)
    assert grid(demo.course) == (
        {"scaling": (pytest.approx(TWO_SLIPS, abs=1e-12), 1)},
        {"student1": {"scaling": pytest.approx(TWO_SLIPS, abs=1e-12)}, "student2": {}, "student3": {}},
    )
    assert (round(TWO_SLIPS, 4), round(ONE_RIGHT, 4), round(WRONG_RIGHT, 4)) == (0.1714, 0.825, 0.7251)
    # course B: one right answer, nothing of A's slips
    assert grid(course_b) == (
        {skill: (pytest.approx(ONE_RIGHT, abs=1e-12), 1) for skill in ("dot-product-scores", "scaling", "softmax")},
        {"student1": {skill: pytest.approx(ONE_RIGHT, abs=1e-12) for skill in ("dot-product-scores", "scaling", "softmax")}},
    )
    # the pages, as each instructor reads them
    client.force_login(bea)
    page = client.get(reverse("mastery:course_grid", args=["second"])).content.decode()
    assert page.count('<td class="cell-developing">0.83<span') == 3
    assert "0.17" not in page and "0.73" not in page
    client.force_login(type(student).objects.get(username="instructor"))
    page = client.get(reverse("mastery:course_grid", args=[demo.course.slug])).content.decode()
    assert page.count('<td class="cell-shaky">0.17<span') == 1
    assert "0.83" not in page and "0.73" not in page


def test_practice_counts_in_the_course_of_the_item_it_was_started_from(answer, demo, variant, student, second):
    course_b, item_b, _ = second
    answer(variant, student, "no_scaling")
    practice = variant_create_practice(item=item_b, student=student)
    answer(practice, student, "right")
    assert stored(demo.course, student) == {"scaling": (round(p_known_after([False]), 12), 1)}
    assert stored(course_b, student) == {
        skill: (round(ONE_RIGHT, 12), 1) for skill in ("dot-product-scores", "scaling", "softmax")
    }
    assert list(Observation.objects.filter(course=course_b).values_list("is_practice", flat=True)) == [True] * 3


def test_practice_whose_item_is_gone_is_no_evidence(answer, student, second):
    _, item_b, _ = second
    practice = variant_create_practice(item=item_b, student=student)
    item_b.delete()
    submission = answer(practice, student, "right")
    assert submission.correct is True
    assert not Observation.objects.exists() and not SkillMastery.objects.exists()


def test_regrading_one_courses_answer_recomputes_that_course_only_and_is_idempotent(
    answer, demo, variant, student, second
):
    course_b, item_b, _ = second
    slip = answer(variant, student, "no_scaling")
    answer(variant_get_or_create_for_item(item=item_b, student=student), student, "no_scaling")
    b_before = list(SkillMastery.objects.filter(course=course_b).values_list("skill", "p_known", "attempts",
                                                                             "updated_at"))
    Submission.objects.filter(pk=slip.pk).update(correct=True, score=1.0, misconception="")
    for _ in range(2):  # a regrade delivered twice
        assert services.mastery_record_submission(submission_id=slip.pk) == ["dot-product-scores", "scaling", "softmax"]
        assert stored(demo.course, student) == {
            skill: (round(ONE_RIGHT, 12), 1) for skill in ("dot-product-scores", "scaling", "softmax")
        }
    assert list(SkillMastery.objects.filter(course=course_b).values_list("skill", "p_known", "attempts",
                                                                         "updated_at")) == b_before
    assert stored(course_b, student) == {"scaling": (round(p_known_after([False]), 12), 1)}


def test_the_refit_pools_the_courses_and_stores_each_courses_mastery(answer, demo, variant, student, second):
    course_b, item_b, _ = second
    answer(variant, student, "no_scaling")
    answer(variant_get_or_create_for_item(item=item_b, student=student), student, "right")
    histories = services.skill_histories(skill="scaling")
    assert histories == {(student.pk, demo.course.pk): [(False, "no_scaling")], (student.pk, course_b.pk): [(True, "")]}
    fit = services.skill_parameters_fit(skill="scaling")  # below the minimum: one student
    assert (fit.fitted, fit.students, fit.observations) == (False, 1, 2)


def test_the_dashboard_shows_each_courses_map_under_that_course(answer, client, demo, variant, student, second):
    course_b, item_b, _ = second
    answer(variant, student, "no_scaling")
    answer(variant, student, "no_scaling_retyped")
    answer(variant_get_or_create_for_item(item=item_b, student=student), student, "right")
    client.force_login(student)
    page = client.get(reverse("dashboard")).content.decode()
    sections = {}
    for chunk in page.split('<section class="skill-map"')[1:]:
        body = chunk.split("</section>")[0]
        sections[body.split('data-course="')[1].split('"')[0]] = body
    assert sorted(sections) == sorted([demo.course.slug, "second"])
    assert "(2 attempts, 17% likely known)" in sections[demo.course.slug]
    assert sections[demo.course.slug].count("not yet seen") == len(SKILL_SLUGS) - 1
    assert sections["second"].count("not yet seen") == len(SKILL_SLUGS) - 3
    assert "(1 attempt, 82% likely known)" in sections["second"] and "17%" not in sections["second"]
    assert sections["second"].count("(1 attempt, 82% likely known)") == 3
    maps = selectors.skill_maps_by_course(student=student, course_ids=[demo.course.pk, course_b.pk])
    assert {line.skill: line.attempts for line in maps[course_b.pk] if line.attempts} == {
        "dot-product-scores": 1, "scaling": 1, "softmax": 1
    }
