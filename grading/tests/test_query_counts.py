"""Query counts of the hot paths, pinned: a change that adds a query to one of them fails here.

Counted as production runs them: the test's own transaction turns each ``atomic`` block
into a savepoint, which production (autocommit, outermost ``atomic``) does not issue, so
SAVEPOINT statements are left out of the count.
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.models import AssignmentItem, Enrolment, Role
from exercises.services import variant_get_or_create_for_item
from grading import services, tasks
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import WORKED_EXAMPLE
from grading.tests.test_services import as_text, reference


def statements_run(captured) -> list[str]:
    return [
        query["sql"] for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT"))
    ]


@contextmanager
def queries(expected: int):
    with CaptureQueriesContext(connection) as captured:
        yield
    statements = statements_run(captured)
    assert len(statements) == expected, "\n".join(statements)


@pytest.fixture
def student_client(client, student):
    client.force_login(student)
    return client


@pytest.fixture
def queued(settings):
    """Celery mode with the broker call stubbed: the submit request does no grading."""
    settings.GRADING_MODE = "celery"
    settings.GRADING_LONG_POLL_SECONDS = 0
    with mock.patch.object(tasks.grade_submission, "apply_async"):
        yield


def _post_answer(client, variant, answer):
    return client.post(
        reverse("submit", args=[variant.pk, "weights"]), {"answer": answer}, HTTP_HX_REQUEST="true"
    )


def test_submit_is_five_queries(student_client, variant, queued, django_capture_on_commit_callbacks):
    # the session's user, the access-checked variant, the row lock, the attempt count, the insert
    with queries(5), django_capture_on_commit_callbacks(execute=True):
        response = _post_answer(student_client, variant, as_text(reference(variant, "weights")))
    assert response.status_code == 200
    assert Submission.objects.get().status == SubmissionStatus.QUEUED


def test_grading_is_three_queries_without_an_lti_link(variant, student):
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
    )
    # claim, the submission with its variant and assignment, the outcome: no LTI lookup
    with queries(3):
        services.submission_grade(submission_id=submission.pk)
    submission.refresh_from_db()
    assert (submission.status, submission.score) == (SubmissionStatus.GRADED, 1.0)


def test_result_fragment_is_three_queries(student_client, variant, student):
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
    )
    services.submission_grade(submission_id=submission.pk)
    # the session's user, the access-checked submission, the part's attempts, the student's
    # regrade requests about the variant's answers (a graded answer offers to ask about it)
    with queries(4):
        response = student_client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true")
    assert 'data-result="graded"' in response.content.decode()


def test_exercise_page_is_four_queries_with_earlier_attempts(student_client, variant, student):
    for answer in ("[0.25, 0.25, 0.25, 0.25]", as_text(reference(variant, "weights"))):
        submission = Submission.objects.create(
            variant=variant, student=student, part="weights", raw_answer=answer,
            attempt=Submission.objects.filter(variant=variant).count() + 1,
        )
        services.submission_grade(submission_id=submission.pk)
    # the session's user; the variant with its item, assignment, course, version and the
    # accommodation; the role; every part's attempts; the student's regrade requests about
    # the variant's answers, once for every part and attempt
    with queries(5):
        response = student_client.get(reverse("exercise", args=[variant.assignment_item_id]))
    assert response.status_code == 200


def test_exercise_page_on_a_first_visit_reads_the_slot_then_makes_the_variant(student_client, demo, student):
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)
    # the session's user; no variant yet; the slot with its course and the accommodation;
    # the role; the variant's insert (no answers to read: the variant is new)
    with CaptureQueriesContext(connection) as captured:
        response = student_client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    assert len(statements_run(captured)) == 5, "\n".join(statements_run(captured))
    with queries(4):  # and from then on, four
        assert student_client.get(reverse("exercise", args=[item.pk])).status_code == 200


def test_dashboard_queries_do_not_grow_with_the_exercises_opened(student_client, demo, student):
    items = list(AssignmentItem.objects.filter(assignment=demo.assignment))
    assert len(items) >= 10
    for item in items[:3]:
        variant_get_or_create_for_item(item=item, student=student)
    # user, enrolments, assignments, items, variants, submissions, two permission reads,
    # the due review cards of every course at once,
    # the student's skill map (one read of the stored mastery rows), the invitations to courses
    with queries(11):
        response = student_client.get(reverse("dashboard"))
    assert response.status_code == 200


@pytest.mark.parametrize("courses", [1, 4])
def test_dashboard_queries_do_not_grow_with_the_courses(student_client, demo, student, courses):
    from courses.models import Assignment, Course

    item = AssignmentItem.objects.filter(assignment=demo.assignment).first()
    for index in range(1, courses):
        course = Course.objects.create(slug=f"more-{index}", title=f"More {index}")
        Enrolment.objects.create(course=course, user=student, role=Role.STUDENT)
        assignment = Assignment.objects.create(course=course, slug="week1", title="Week 1")
        AssignmentItem.objects.create(assignment=assignment, exercise_version=item.exercise_version)
    # as above, less the submissions (no variant opened): every course's assignments,
    # items, variants and skill map are each read once for all courses.
    with CaptureQueriesContext(connection) as captured:
        response = student_client.get(reverse("dashboard"))
    statements = statements_run(captured)
    assert len(statements) == 10, "\n".join(statements)  # and the invitations to courses
    assert sum('FROM "mastery_skillmastery"' in sql for sql in statements) == 1
    assert response.content.decode().count('<section class="skill-map"') == courses


@pytest.mark.parametrize("exams", [1, 4])
def test_dashboard_queries_do_not_grow_with_exams_pools_and_time_limits(student_client, demo, student, exams):
    """Exams with a withheld review policy, a time limit, an accommodation and a pool, some
    started and answered: the attempts, draws and accommodations are each read once."""
    from courses.models import Assignment, AssignmentKind, PoolDraw, ReleaseMoment
    from exams.models import Accommodation
    from exams.services import attempt_start

    versions = [item.exercise_version for item in AssignmentItem.objects.filter(assignment=demo.assignment)[:2]]
    for index in range(exams):
        exam = Assignment.objects.create(
            course=demo.course, slug=f"exam-{index}", title=f"Exam {index}", kind=AssignmentKind.EXAM,
            show_correctness=ReleaseMoment.ON_RELEASE, show_score=ReleaseMoment.ON_RELEASE, time_limit_minutes=30,
        )
        for version in versions:
            AssignmentItem.objects.create(assignment=exam, exercise_version=version, pool="pick-one")
        Accommodation.objects.create(assignment=exam, student=student, time_factor=1.5)
        attempt_start(assignment=exam, student=student)
        student_client.get(reverse("assignment", args=[demo.course.slug, exam.slug]))  # draws the pool
        drawn = PoolDraw.objects.get(assignment=exam, student=student).item
        assert student_client.get(reverse("exercise", args=[drawn.pk])).status_code == 200
    # the one course's user, enrolments, assignments (with accommodations), items, draws,
    # variants, submissions, attempts, two permission reads, review cards and skill map
    with CaptureQueriesContext(connection) as captured:
        response = student_client.get(reverse("dashboard"))
    statements = statements_run(captured)
    assert response.status_code == 200
    assert len(statements) == 13, "\n".join(statements)  # the invitations to courses included
    assert response.content.decode().count("Exam ") >= exams


@pytest.mark.parametrize("students", [3, 30])
def test_gradebook_queries_do_not_grow_with_students(client, demo, django_user_model, students):
    for index in range(students):
        user = django_user_model.objects.create(username=f"gb-{index}")
        Enrolment.objects.create(course=demo.course, user=user, role=Role.STUDENT)
    client.force_login(django_user_model.objects.get(username="instructor"))
    url = reverse("instructor:gradebook", args=[demo.course.slug, demo.assignment.slug])
    # the course's time zone, user, course, role, assignment, items, best scores, students
    with queries(8):
        response = client.get(url)
    assert response.status_code == 200



@pytest.mark.django_db(transaction=True)
def test_the_grading_task_is_three_queries_with_its_follow_ups_handed_on(
    demo, student, settings, django_assert_num_queries
):
    """The worker's whole share of one answer, as production runs it (a real transaction,
    its on-commit callbacks run): claim, read, store the outcome in its transaction; what
    follows a grade (mastery, review) is only handed to the broker, never done or read here."""
    from exercises.services import variant_get_or_create_for_item

    settings.GRADING_MODE = "celery"
    item = AssignmentItem.objects.filter(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    ).get()
    variant = variant_get_or_create_for_item(item=item, student=student)
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
    )
    with mock.patch("attnquiz.celery.task_publish") as published, django_assert_num_queries(5) as captured:
        tasks.grade_submission.apply(args=[submission.pk])
    statements = [query["sql"].split()[0] for query in captured.captured_queries]
    assert statements == ["UPDATE", "SELECT", "BEGIN", "UPDATE", "COMMIT"]  # claim, read, outcome
    submission.refresh_from_db()
    assert (submission.status, submission.score, submission.correct) == (SubmissionStatus.GRADED, 1.0, True)
    assert published.call_count >= 1
    assert all(call.kwargs.get("queue") != settings.CELERY_TASK_DEFAULT_QUEUE for call in published.call_args_list)
