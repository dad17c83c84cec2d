"""Exam scores reach the LMS only after release: before it the platform is told grading
is Pending, with no score; at release every student's score goes as FullyGraded (through
the outbox), against the independent test platform (lti/tests/lms_platform.py)."""

from __future__ import annotations

from django.test import Client

from courses.models import Assignment, Enrolment
from exams import services
from exercises.services import variant_get_or_create_for_item
from grading import services as grading_services
from lti.models import LtiContext, Passback
from lti.tests.conftest import correct_answer
from lti.tests.test_platform import EXERCISE, deep_link, launch, testlms  # noqa: F401 (fixture)

from .conftest import exam_policy

FIELDS = ("userId", "scoreGiven", "scoreMaximum", "gradingProgress")


def test_exam_scores_reach_the_lms_only_after_release(client, testlms, django_capture_on_commit_callbacks):
    deep_link(client, testlms, django_capture_on_commit_callbacks, pick="exercise", exercise=EXERCISE)
    course = LtiContext.objects.get(context_id="ml-301").course
    assignment = exam_policy(Assignment.objects.get(course=course))
    link = testlms.links["dl-link-1"]
    launch(Client(), testlms, user="ada", hint=f"link:{link.resource_link_id}")
    ada = Enrolment.objects.get(course=course, user__email="ada@testlms.example").user
    services.attempt_start(assignment=assignment, student=ada)
    variant = variant_get_or_create_for_item(item=assignment.items.get(), student=ada)
    with django_capture_on_commit_callbacks(execute=True):
        grading_services.submission_create(
            variant=variant, student=ada, part="weights", raw_answer=correct_answer(variant, "weights")
        )
    (pending,) = testlms.scores_for(link.lineitem_id)
    assert {k: pending.get(k) for k in FIELDS} == {
        "userId": "user-ada", "scoreGiven": None, "scoreMaximum": None, "gradingProgress": "Pending",
    }

    with django_capture_on_commit_callbacks(execute=True):
        services.grades_release(assignment=assignment, by=None)
    sent = [{k: s.get(k) for k in FIELDS} for s in testlms.scores_for(link.lineitem_id)[1:]]
    assert sorted(sent, key=lambda s: s["userId"]) == [
        {"userId": "user-ada", "scoreGiven": 0.5, "scoreMaximum": 1.0, "gradingProgress": "FullyGraded"},
        # Every student the roster sync knows on the LMS, whether they sat the exam or not.
        {"userId": "user-bob", "scoreGiven": 0.0, "scoreMaximum": 1.0, "gradingProgress": "FullyGraded"},
        {"userId": "user-cyd", "scoreGiven": 0.0, "scoreMaximum": 1.0, "gradingProgress": "FullyGraded"},
    ]
    assert set(Passback.objects.values_list("user__email", "status")) == {
        ("ada@testlms.example", "sent"), ("bob@testlms.example", "sent"), ("cyd@testlms.example", "sent"),
    }

    with django_capture_on_commit_callbacks(execute=True):
        services.grades_withdraw(assignment=assignment, by=None)
    withdrawn = [{k: s.get(k) for k in FIELDS} for s in testlms.scores_for(link.lineitem_id)[4:]]
    assert [s["gradingProgress"] for s in withdrawn] == ["Pending"] * 3
    assert all(s["scoreGiven"] is None for s in withdrawn)
