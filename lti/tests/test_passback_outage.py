"""Fault test: the broker is down while scores change, then comes back.

A real Celery worker (subprocess) and a private redis-server (grading/harness.py) send
the outbox to the independent test platform over HTTP. Every score must arrive exactly
once, in the order the scores changed, with the latest value.
"""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model

from courses.models import Assignment, AssignmentItem, Course
from exercises.models import ExerciseVersion
from courses.services import enrolment_ensure
from exercises.services import variant_get_or_create_for_item
from grading import services as grading_services
from grading.tests.conftest import broker, redis_server, start_worker  # noqa: F401
from lti.models import LtiIdentity, Passback, ResourceLink
from lti.selectors import tool_jwks
from lti.services import tool_key_ensure

from .conftest import AGS_SCOPES, WORKED_EXAMPLE, correct_answer
from .lms_platform import LEARNER, LmsPlatform, wait_for

STUDENTS = 10

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]


@pytest.fixture
def outage_course(transactional_db):
    from exercises.services_bank import bank_load

    bank_load()
    platform = LmsPlatform(tool_url="http://testserver")
    platform.add_context("ml-301", title="ML 301", label="ML-301", members=[])
    link = platform.add_link("week-1", context_id="ml-301", title="Week 1", score_maximum=1.0)
    tool_key_ensure()
    platform.trust_tool_keys(tool_jwks())
    registered = platform.register_in_attnquiz()
    course = Course.objects.create(slug="ml-301", title="ML 301")
    context = registered.contexts.create(context_id="ml-301", course=course)
    assignment = Assignment.objects.create(course=course, slug="week-1", title="Week 1")
    version = ExerciseVersion.objects.filter(exercise__slug=WORKED_EXAMPLE).latest("number")
    item = AssignmentItem.objects.create(assignment=assignment, exercise_version=version, points=1)
    ResourceLink.objects.create(
        platform=registered, resource_link_id="week-1", context=context, assignment=assignment,
        ags_scopes=AGS_SCOPES, lineitem_url=link.lineitem_id,
    )
    students = []
    for number in range(STUDENTS):
        student = get_user_model().objects.create(username=f"student-{number}")
        enrolment_ensure(course=course, user=student, role="student")
        LtiIdentity.objects.create(platform=registered, sub=f"user-s{number}", user=student)
        platform.add_user(f"s{number}", given="S", family=str(number), roles=[LEARNER])
        students.append(student)
    yield platform, link, item, students
    platform.stop()


def change_score(item, student, *, right: bool):
    """A student's answer is graded here (the grading worker would do the same)."""
    variant = variant_get_or_create_for_item(item=item, student=student)
    raw = correct_answer(variant, "weights") if right else "[0.25, 0.25, 0.25, 0.25]"
    submission = grading_services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=raw
    )
    grading_services.submission_grade(submission_id=submission.pk)


def test_broker_outage_every_score_arrives_once_in_order_with_the_latest_value(
    outage_course, broker, start_worker, settings
):
    from lti.tasks import send_due_passbacks

    platform, link, item, students = outage_course
    start_worker(LTI_PASSBACK_SWEEP_GRACE_SECONDS=0)
    broker.stop()

    # Ten students' scores change while the broker is down; the first one changes twice
    # (wrong, then right) and must arrive once, with the later value.
    change_score(item, students[0], right=False)
    for number, student in enumerate(students[1:], start=1):
        change_score(item, student, right=number % 2 == 0)
    change_score(item, students[0], right=True)
    time.sleep(0.5)
    assert platform.scores == []
    rows = list(Passback.objects.order_by("changed_at"))
    assert [row.status for row in rows] == ["pending"] * STUDENTS

    broker.start()
    send_due_passbacks.apply_async()  # what Celery beat does every 30 s
    wait_for(lambda: len(platform.scores) >= STUDENTS, timeout=60)
    time.sleep(1.0)
    send_due_passbacks.apply_async()  # a second sweep must send nothing again
    time.sleep(2.0)

    scores = platform.scores_for(link.lineitem_id)
    assert len(scores) == STUDENTS
    expected_order = [f"user-s{number}" for number in range(1, STUDENTS)] + ["user-s0"]
    assert [score["userId"] for score in scores] == expected_order
    expected_value = {f"user-s{n}": 0.5 if n % 2 == 0 else 0.0 for n in range(STUDENTS)}
    assert {score["userId"]: score["scoreGiven"] for score in scores} == expected_value
    timestamps = [score["timestamp"] for score in scores]
    assert timestamps == sorted(timestamps) and len(set(timestamps)) == STUDENTS
    assert set(Passback.objects.values_list("status", flat=True)) == {"sent"}
