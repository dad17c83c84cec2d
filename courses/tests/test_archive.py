"""An archived course takes no answers and no teaching edits, but its exports still work."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for
from courses import services
from grading.models import Submission
from grading.services import SubmissionRefused, submission_create
from instructor import services as instructor_services


@pytest.fixture
def archived(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    variant = variant_for(assignment.items.get(), people.student, params={"a": 2, "b": 5})
    submission_add(variant, "product", "10", awarded=1.0)
    services.course_archive(course=people.course)
    return assignment, variant


def test_no_answers_are_taken(people, archived):
    _, variant = archived
    with pytest.raises(SubmissionRefused, match="archived") as refused:
        submission_create(variant=variant, student=people.student, part="total", raw_answer="7")
    assert refused.value.code == "archived"
    assert Submission.objects.count() == 1


def test_teaching_writes_are_refused_but_a_regrade_dry_run_and_exports_still_work(client, people, archived):
    assignment, _ = archived
    with pytest.raises(instructor_services.InstructorRefused, match="archived"):
        instructor_services.assignment_update(assignment=assignment, title="New title")
    with pytest.raises(instructor_services.InstructorRefused, match="archived"):
        instructor_services.regrade_job_create(assignment=assignment, actor=people.instructor, dry_run=False, enqueue=False)
    assert instructor_services.regrade_job_create(assignment=assignment, actor=people.instructor, enqueue=False).dry_run
    client.login(username="ines", password=PASSWORD)
    csv = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    assert csv.status_code == 200
    assert b"".join(csv.streaming_content).decode().splitlines()[1:] == [
        "sam,,,Sam,Stone,0.5,0.5,50,", "sue,,,Sue,Shaw,not attempted,not attempted,,"
    ]
