"""A stored score arms the outbox in its own transaction — only for an LTI-linked student."""

import pytest

from courses.models import Enrolment
from grading.events import GradeChange, grade_changed_publish
from lti.models import LtiIdentity, Passback

from .conftest import AGS_SCOPES


@pytest.fixture
def enqueued(settings, monkeypatch):
    """Enqueue through the real broker path, recording what would be sent."""
    from lti import tasks

    settings.GRADING_MODE = "celery"
    sent = []
    monkeypatch.setattr(
        tasks.send_passback, "apply_async", lambda args, **kwargs: sent.append(tuple(args))
    )
    return sent


@pytest.fixture
def submission(linked, answer, settings):
    return answer(linked, "weights")


def score_signal(submission, django_capture_on_commit_callbacks):
    """The after-commit work the signal arms for the LMS (other apps' receivers, such as
    spaced review, arm their own)."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        grade_changed_publish(submission=submission, change=GradeChange.GRADED)
    return [callback for callback in callbacks if getattr(callback, "func", callback).__module__.startswith("lti.")]


def test_score_of_a_linked_student_arms_the_outbox_and_enqueues_on_commit(
    linked, submission, enqueued, django_capture_on_commit_callbacks
):
    linked.link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    linked.link.save()
    callbacks = score_signal(submission, django_capture_on_commit_callbacks)
    row = Passback.objects.get()
    assert (row.link_id, row.user_id, row.status, row.attempts) == (
        linked.link.pk,
        linked.student.pk,
        "pending",
        0,
    )
    assert enqueued == []  # nothing before the commit
    assert len(callbacks) == 1
    callbacks[0]()
    assert enqueued == [(row.pk,)]


def test_one_assignment_linked_from_two_lms_courses_arms_one_row_per_link(
    linked, submission, enqueued, django_capture_on_commit_callbacks
):
    from lti.models import ResourceLink

    linked.link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    linked.link.save()
    section = linked.platform.contexts.create(context_id="course-43", course=linked.course)
    second = ResourceLink.objects.create(
        platform=linked.platform,
        resource_link_id="link-10",
        context=section,
        assignment=linked.assignment,
        ags_scopes=AGS_SCOPES,
        lineitem_url="https://lms.example.edu/api/lti/courses/43/line_items/8",
    )
    callbacks = score_signal(submission, django_capture_on_commit_callbacks)
    callbacks[0]()
    rows = dict(Passback.objects.values_list("link_id", "status"))
    assert rows == {linked.link.pk: "pending", second.pk: "pending"}
    assert sorted(enqueued) == sorted((pk,) for pk in Passback.objects.values_list("pk", flat=True))


@pytest.mark.parametrize(
    "change",
    ["no line item", "no score scope", "no identity", "instructor", "link unmapped"],
)
def test_no_row_without_a_link_identity_and_student_role(
    linked, submission, enqueued, django_capture_on_commit_callbacks, change
):
    link = linked.link
    link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    if change == "no line item":
        link.lineitem_url = ""
    elif change == "no score scope":
        link.ags_scopes = [AGS_SCOPES[0]]
    elif change == "no identity":
        LtiIdentity.objects.filter(user=linked.student).delete()
    elif change == "instructor":
        Enrolment.objects.filter(user=linked.student).update(role="instructor")
    elif change == "link unmapped":
        link.assignment = None
    link.save()
    callbacks = score_signal(submission, django_capture_on_commit_callbacks)
    assert callbacks == []
    assert enqueued == []
    assert Passback.objects.count() == 0


def _worked_example_variant(assignment, student):
    from courses.models import AssignmentItem
    from exercises.services import variant_get_or_create_for_item

    from .conftest import WORKED_EXAMPLE

    item = AssignmentItem.objects.get(assignment=assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)
    return variant_get_or_create_for_item(item=item, student=student)


def test_a_score_on_an_unlinked_assignment_the_sender_loaded_costs_no_query(
    demo, django_assert_num_queries
):
    from django.contrib.auth import get_user_model

    from grading.models import Submission
    from lti import receivers

    student = get_user_model().objects.get(username="student1")
    variant = _worked_example_variant(demo.assignment, student)
    submission = Submission.objects.select_related("variant__assignment_item__assignment").get(
        pk=Submission.objects.create(variant=variant, student=student, part="weights", raw_answer="[1]").pk
    )
    assert submission.variant.assignment_item.assignment.has_lti_link is False
    with django_assert_num_queries(0):
        receivers.schedule_score_passback(sender=Submission, submission=submission)
    assert Passback.objects.count() == 0


def test_a_score_whose_assignment_was_not_loaded_costs_the_one_existence_query(
    demo, django_assert_num_queries
):
    from django.contrib.auth import get_user_model

    from grading.models import Submission
    from lti import receivers

    student = get_user_model().objects.get(username="student1")
    variant = _worked_example_variant(demo.assignment, student)
    submission = Submission(variant_id=variant.pk, student_id=student.pk)
    # One existence query, nothing else (no savepoint either).
    with django_assert_num_queries(1):
        receivers.schedule_score_passback(sender=Submission, submission=submission)
    assert Passback.objects.count() == 0


def test_a_link_flags_the_assignment_it_opens_and_only_that_one(linked, demo):
    from courses.models import Assignment
    from lti.models import ResourceLink

    assert Assignment.objects.get(pk=linked.assignment.pk).has_lti_link is True
    assert Assignment.objects.get(pk=demo.assignment.pk).has_lti_link is False
    unmapped = ResourceLink.objects.create(
        platform=linked.platform, resource_link_id="link-11", context=linked.link.context
    )
    assert Assignment.objects.filter(has_lti_link=True).count() == 1
    unmapped.assignment = demo.assignment
    unmapped.save()
    assert Assignment.objects.get(pk=demo.assignment.pk).has_lti_link is True


def test_a_copied_course_starts_without_the_flag(linked):
    from courses.models import Assignment
    from courses.services import course_copy

    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create(username="copy-owner", is_superuser=True)
    copy = course_copy(source=linked.course, actor=owner, slug="ml-302", title="ML 302")
    assert list(Assignment.objects.filter(course=copy).values_list("slug", "has_lti_link")) == [
        ("week-3", False)
    ]


def test_grading_a_linked_assignment_through_the_pipeline_arms_the_outbox(
    linked, submission, enqueued, django_capture_on_commit_callbacks
):
    """The pipeline loads the assignment with its flag, and a linked one still passes back."""
    from grading import services as grading_services
    from grading.models import Submission

    linked.link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    linked.link.save()
    Passback.objects.all().delete()
    fresh = Submission.objects.create(
        variant=linked.variant, student=linked.student, part="weights", raw_answer=submission.raw_answer,
        attempt=submission.attempt + 1,
    )
    with django_capture_on_commit_callbacks(execute=True):
        grading_services.submission_grade(submission_id=fresh.pk)
    assert list(Passback.objects.values_list("link_id", "user_id")) == [(linked.link.pk, linked.student.pk)]


def test_broker_down_leaves_the_row_pending_and_does_not_raise(linked, submission, settings, monkeypatch):
    from lti import passback, tasks

    settings.GRADING_MODE = "celery"

    def down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(tasks.send_passback.app, "connection_for_write", down)
    linked.link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    linked.link.save()
    ids = passback.passbacks_record(submission=submission)
    passback.passbacks_enqueue(passback_ids=ids)
    assert Passback.objects.get().status == "pending"
