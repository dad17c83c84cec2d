"""A dropped enrolment opens nothing and leaves the gradebook, but keeps every submission."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for
from courses import selectors
from courses.models import Enrolment, EnrolmentSource, EnrolmentStatus, Role
from courses.services import enrolment_ensure
from grading.models import Submission
from instructor import selectors as instructor_selectors


@pytest.fixture
def dropped_world(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    item = assignment.items.get()
    submission_add(variant_for(item, people.student, params={"a": 3, "b": 4}), "product", "12", awarded=1.0)
    Enrolment.objects.filter(course=people.course, user=people.student).update(status=EnrolmentStatus.DROPPED)
    return assignment


def test_a_dropped_student_has_no_role_and_no_course(people, dropped_world):
    assert selectors.course_role(user=people.student, course=people.course) is None
    assert list(selectors.courses_for_user(user=people.student)) == []
    assert selectors.course_role(user=people.student2, course=people.course) == Role.STUDENT


def test_the_gradebook_hides_dropped_students_unless_asked_and_keeps_their_submissions(people, dropped_world):
    book = instructor_selectors.gradebook(assignment=dropped_world)
    assert [row["student"].username for row in book["rows"]] == ["sue"]
    book = instructor_selectors.gradebook(assignment=dropped_world, include_dropped=True)
    assert [(row["student"].username, row["total"]) for row in book["rows"]] == [("sam", 0.5), ("sue", 0.0)]  # one of two parts solved
    assert Submission.objects.filter(student=people.student).count() == 1


def test_dropped_student_pages_are_404_and_the_gradebook_toggle_shows_them(client, people, dropped_world):
    client.login(username="sam", password=PASSWORD)
    assert client.get(reverse("assignment", args=["attn", "week1"])).status_code == 404
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:gradebook", args=["attn", "week1"])
    assert ">sam<" not in client.get(url).content.decode()
    assert ">sam<" in client.get(url, {"dropped": "1"}).content.decode()


def test_enrolment_ensure_reactivates_and_keeps_the_first_source(people, dropped_world):
    enrolment = enrolment_ensure(course=people.course, user=people.student, role=Role.STUDENT, source=EnrolmentSource.LMS)
    assert (enrolment.status, enrolment.source) == (EnrolmentStatus.ACTIVE, EnrolmentSource.MANUAL)
    fresh = enrolment_ensure(course=people.other_course, user=people.student, role=Role.STUDENT, source=EnrolmentSource.LMS)
    assert (fresh.status, fresh.source, fresh.role) == (EnrolmentStatus.ACTIVE, EnrolmentSource.LMS, Role.STUDENT)
