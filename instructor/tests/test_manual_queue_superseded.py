"""The manual queue lists and counts only answers a grader can act on. Where the course has a
rubric of a part, its pages grade each student's newest answer to it; an earlier attempt of
the same student that still waits is superseded by the newer one, so it neither waits in the
queue nor counts on the course's page. A part without a course rubric is graded attempt by
attempt on the manual-grade page: every waiting attempt stays in the queue."""

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from grading.models import SubmissionStatus
from instructor import selectors_rubrics, services, services_rubrics

MANUAL = SubmissionStatus.MANUAL


@pytest.fixture
def answers(people):
    """Two free-text exercises in one assignment; on each, sam answered twice and sue once,
    in this order: sam's first (both exercises), sue's, sam's second."""
    rubric_version = published_version(source=FREE_TEXT_YAML)
    plain_version = published_version(source=FREE_TEXT_YAML.replace("slug: explain-scaling", "slug: explain-again"))
    assignment = assignment_create(people.course, [rubric_version, plain_version], slug="essay")
    with_rubric, without_rubric = assignment.items.order_by("position")
    rows = {}
    variants = {
        (item, student): variant_for(item, student, params={"d": 64})
        for item in (with_rubric, without_rubric) for student in (people.student, people.student2)
    }
    for name, item, student in (
        ("sam1", with_rubric, people.student), ("sam1_plain", without_rubric, people.student),
        ("sue1", with_rubric, people.student2), ("sue1_plain", without_rubric, people.student2),
        ("sam2", with_rubric, people.student), ("sam2_plain", without_rubric, people.student),
    ):
        rows[name] = submission_add(variants[(item, student)], "why", f"{name} answers.", awarded=None, status=MANUAL)
    rows["with_rubric"], rows["without_rubric"] = with_rubric, without_rubric
    return rows


@pytest.fixture
def course_rubric(people, answers):
    return services_rubrics.rubric_create(
        course=people.course, item=answers["with_rubric"], part="why", criteria=[("Says the variance grows", 1.0)]
    )


def queue(course, **kwargs) -> list[tuple[int, int | None]]:
    return [(s.pk, s.rubric_answer_id) for s in selectors_rubrics.manual_queue_rows(course=course, **kwargs)]


def part_counts(course) -> list[tuple[str, int, int]]:
    return [(p.item.exercise_version.exercise.slug, p.answers, p.waiting)
            for p in selectors_rubrics.course_manual_parts(course=course)]


def ids(answers, *names) -> list[int]:
    return [answers[name].pk for name in names]


def test_without_a_course_rubric_every_waiting_attempt_is_in_the_queue(people, answers):
    assert queue(people.course) == [
        (pk, None) for pk in ids(answers, "sam1", "sam1_plain", "sue1", "sue1_plain", "sam2", "sam2_plain")
    ]
    assert selectors_rubrics.manual_waiting_count(course=people.course) == 6
    # The question's page grades each student's newest answer: two students wait on each part.
    assert part_counts(people.course) == [("explain-scaling", 2, 2), ("explain-again", 2, 2)]


def test_with_a_course_rubric_an_earlier_waiting_attempt_is_superseded(people, answers, course_rubric):
    sam2, sue1 = answers["sam2"].pk, answers["sue1"].pk
    assert queue(people.course) == [
        (answers["sam1_plain"].pk, None), (sue1, sue1), (answers["sue1_plain"].pk, None), (sam2, sam2),
        (answers["sam2_plain"].pk, None),
    ]
    assert selectors_rubrics.manual_waiting_count(course=people.course) == 5
    assert part_counts(people.course) == [("explain-scaling", 2, 2), ("explain-again", 2, 2)]
    # The superseded attempt keeps its status: nothing is written by reading the queue.
    answers["sam1"].refresh_from_db()
    assert answers["sam1"].status == MANUAL


def test_once_the_newest_answer_is_graded_by_the_rubric_nothing_of_that_student_waits(
    people, answers, course_rubric
):
    services_rubrics.submission_grade_with_rubric(
        submission=answers["sam2"], rubric=course_rubric, grader=people.ta, item_ids=[course_rubric.items.get().pk],
    )
    assert queue(people.course) == [
        (answers["sam1_plain"].pk, None), (answers["sue1"].pk, answers["sue1"].pk),
        (answers["sue1_plain"].pk, None), (answers["sam2_plain"].pk, None),
    ]
    assert selectors_rubrics.manual_waiting_count(course=people.course) == 4
    assert part_counts(people.course) == [("explain-scaling", 2, 1), ("explain-again", 2, 2)]
    # With the answers already graded by hand: sam's graded newest answer, never the attempt it superseded.
    assert queue(people.course, include_graded=True) == [
        (answers["sam1_plain"].pk, None), (answers["sue1"].pk, answers["sue1"].pk),
        (answers["sue1_plain"].pk, None), (answers["sam2"].pk, answers["sam2"].pk), (answers["sam2_plain"].pk, None),
    ]


def test_an_attempt_graded_by_hand_before_the_rubric_stays_in_the_graded_list(people, answers):
    services.submission_grade_manually(
        submission=answers["sam1"], grader=people.ta, score=0.5, criteria_met=[0], comment="",
    )
    services_rubrics.rubric_create(
        course=people.course, item=answers["with_rubric"], part="why", criteria=[("Says the variance grows", 1.0)]
    )
    sam2 = answers["sam2"].pk
    assert [pk for pk, _ in queue(people.course, include_graded=True)] == ids(
        answers, "sam1", "sam1_plain", "sue1", "sue1_plain", "sam2", "sam2_plain"
    )
    assert queue(people.course, include_graded=True)[0] == (answers["sam1"].pk, sam2)
    assert [pk for pk, _ in queue(people.course)] == ids(answers, "sam1_plain", "sue1", "sue1_plain", "sam2", "sam2_plain")


def test_a_course_rubric_without_items_supersedes_nothing(people, answers):
    services_rubrics.rubric_create(course=people.course, item=answers["with_rubric"], part="why", criteria=[])
    assert [pk for pk, _ in queue(people.course)] == ids(
        answers, "sam1", "sam1_plain", "sue1", "sue1_plain", "sam2", "sam2_plain"
    )
    assert selectors_rubrics.manual_waiting_count(course=people.course) == 6


def test_the_pages_list_and_count_what_waits(client, people, answers, course_rubric):
    client.login(username="tariq", password=PASSWORD)
    home = client.get(reverse("instructor:course", args=["attn"])).content.decode()
    assert "5 answers waiting for manual grading</a>" in home
    page = client.get(reverse("instructor:manual_queue", args=["attn"])).content.decode()
    assert f">Grade {answers['sam1'].pk}</a>" not in page
    for name in ("sam1_plain", "sue1", "sue1_plain", "sam2", "sam2_plain"):
        assert f">Grade {answers[name].pk}</a>" in page


def pending_parts(answers, people) -> set:
    from grading.models import Submission
    from instructor.selectors import part_best_scores

    scores = part_best_scores(submissions=Submission.objects.filter(variant__assignment_item__assignment__course=people.course))
    names = {people.student.pk: "sam", people.student2.pk: "sue"}
    items = {answers["with_rubric"].pk: "rubric", answers["without_rubric"].pk: "plain"}
    return {(names[student], items[item], part) for student, item, part in scores.pending}


def test_the_gradebook_does_not_count_a_superseded_attempt_as_pending(people, answers, course_rubric):
    # sam's newest answer under the course rubric is graded; his first one still has status MANUAL.
    answers["sam2"].__class__.objects.filter(pk=answers["sam2"].pk).update(
        status=SubmissionStatus.GRADED, score=0.5, awarded=0.5
    )
    assert pending_parts(answers, people) == {
        ("sam", "plain", "why"), ("sue", "rubric", "why"), ("sue", "plain", "why"),
    }


def test_without_a_course_rubric_an_earlier_waiting_attempt_stays_pending(people, answers):
    answers["sam2"].__class__.objects.filter(pk=answers["sam2"].pk).update(
        status=SubmissionStatus.GRADED, score=0.5, awarded=0.5
    )
    assert pending_parts(answers, people) == {
        ("sam", "rubric", "why"), ("sam", "plain", "why"), ("sue", "rubric", "why"), ("sue", "plain", "why"),
    }
