"""A stored score enqueues a passback on commit — and only for an LTI-linked student."""

import pytest

from courses.models import Enrolment
from grading.signals import send_submission_scored
from lti.models import LtiIdentity

from .conftest import AGS_SCOPES


@pytest.fixture
def enqueued(settings, monkeypatch):
    """Enqueue through the real broker path, recording what would be sent."""
    from lti import tasks

    settings.GRADING_MODE = "celery"
    sent = []
    monkeypatch.setattr(
        tasks.passback_score, "apply_async", lambda args, **kwargs: sent.append(tuple(args))
    )
    return sent


@pytest.fixture
def submission(linked, answer, settings):
    with_grading_inline = answer(linked, "weights")
    return with_grading_inline


def score_signal(submission, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        send_submission_scored(submission)
    return callbacks


def test_score_of_a_linked_student_enqueues_on_commit(
    linked, submission, enqueued, django_capture_on_commit_callbacks
):
    linked.link.lineitem_url = "https://lms.example.edu/api/lti/courses/42/line_items/7"
    linked.link.save()
    callbacks = score_signal(submission, django_capture_on_commit_callbacks)
    assert enqueued == []  # nothing before the commit
    assert len(callbacks) == 1
    callbacks[0]()
    assert enqueued == [(linked.link.pk, linked.student.pk)]


@pytest.mark.parametrize(
    "change",
    ["no line item", "no score scope", "no identity", "instructor", "link unmapped"],
)
def test_no_enqueue_without_a_link_identity_and_student_role(
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


def test_grading_a_course_without_lti_enqueues_nothing(
    demo, monkeypatch, django_capture_on_commit_callbacks
):
    from lti import services

    passbacks = []
    monkeypatch.setattr(
        services, "score_passback_enqueue", lambda **kwargs: passbacks.append(kwargs)
    )
    from django.contrib.auth import get_user_model

    from courses.models import AssignmentItem
    from exercises.services import variant_get_or_create_for_item
    from grading import services as grading_services

    from .conftest import WORKED_EXAMPLE, correct_answer

    student = get_user_model().objects.get(username="student1")
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        created = grading_services.submission_create(
            variant=variant,
            student=student,
            part="weights",
            raw_answer=correct_answer(variant, "weights"),
        )
    created.refresh_from_db()
    assert created.status == "graded"
    assert len(callbacks) == 1  # the grading itself, and no passback after it
    assert passbacks == []


def test_broker_down_does_not_raise(linked, submission, settings, monkeypatch):
    from lti import services, tasks

    settings.GRADING_MODE = "celery"

    def down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(tasks.passback_score, "apply_async", down)
    assert (
        services.score_passback_enqueue(resource_link_id=linked.link.pk, user_id=linked.student.pk)
        is False
    )
