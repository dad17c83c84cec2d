"""Every URL of the accommodations pages and the proctor view, for every role: teaching
assistants see them (they invigilate), only instructors change accommodations or extend
time; students get 403, anyone outside the course 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    ROLES, assignment_create, people_create, product_yaml, published_version, request_as, user_create,
)
from courses.models import Enrolment, Role
from exams.models import Accommodation, CourseAccommodation

CSV = "username,time_factor\nsue,1.5\n"


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def world(people):
    assignment = assignment_create(
        people.course, [published_version(source=product_yaml())], time_limit_minutes=30
    )
    Accommodation.objects.create(assignment=assignment, student=people.student, extra_minutes=10)
    CourseAccommodation.objects.create(course=people.course, student=people.student, time_factor=1.25)
    return assignment


def urls(world, people):
    c, a, sam = "attn", world.slug, people.student.pk
    # (name, method, url, data, statuses for ROLES: anonymous, student, ta, instructor, outsider)
    return [
        ("accommodations", "get", reverse("proctor:accommodations", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("accommodation_new", "get", reverse("proctor:accommodation_new", args=[c, a]), None, (302, 403, 403, 200, 404)),
        ("accommodation_new", "post", reverse("proctor:accommodation_new", args=[c, a]),
         {"student": people.student2.pk, "extra_minutes": "5"}, (302, 403, 403, 302, 404)),
        ("accommodations_import", "get", reverse("proctor:accommodations_import", args=[c, a]), None,
         (302, 403, 403, 200, 404)),
        ("accommodations_import", "post", reverse("proctor:accommodations_import", args=[c, a]), {"text": CSV},
         (302, 403, 403, 200, 404)),
        ("accommodation_edit", "get", reverse("proctor:accommodation_edit", args=[c, a, sam]), None,
         (302, 403, 403, 200, 404)),
        ("accommodation_edit", "post", reverse("proctor:accommodation_edit", args=[c, a, sam]),
         {"extra_minutes": "20"}, (302, 403, 403, 302, 404)),
        ("accommodation_remove", "post", reverse("proctor:accommodation_remove", args=[c, a, sam]), {},
         (302, 403, 403, 302, 404)),
        ("view", "get", reverse("proctor:view", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("rows", "get", reverse("proctor:rows", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("extend", "post", reverse("proctor:extend", args=[c, a]), {"student": sam, "minutes": "5"},
         (302, 403, 403, 302, 404)),
        ("course_accommodations", "get", reverse("proctor:course_accommodations", args=[c]), None,
         (302, 403, 200, 200, 404)),
        ("course_accommodation_new", "get", reverse("proctor:course_accommodation_new", args=[c]), None,
         (302, 403, 403, 200, 404)),
        ("course_accommodation_new", "post", reverse("proctor:course_accommodation_new", args=[c]),
         {"student": people.student2.pk, "time_factor": "1.5"}, (302, 403, 403, 302, 404)),
        ("course_accommodation_edit", "get", reverse("proctor:course_accommodation_edit", args=[c, sam]), None,
         (302, 403, 403, 200, 404)),
        ("course_accommodation_edit", "post", reverse("proctor:course_accommodation_edit", args=[c, sam]),
         {"time_factor": "2"}, (302, 403, 403, 302, 404)),
        ("course_accommodation_remove", "post", reverse("proctor:course_accommodation_remove", args=[c, sam]), {},
         (302, 403, 403, 302, 404)),
    ]


URL_NAMES = [
    "accommodations", "accommodation_new", "accommodations_import", "accommodation_edit",
    "accommodation_remove", "view", "rows", "extend", "course_accommodations", "course_accommodation_new",
    "course_accommodation_edit", "course_accommodation_remove",
]


def test_the_walk_covers_every_url():
    from exams.urls_proctor import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted(URL_NAMES)


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("row_index", range(17))
def test_every_url_for_every_role(client, people, world, role_index, role, row_index):
    name, method, url, data, expected = urls(world, people)[row_index]
    response = request_as(client, role, method, url, data)
    assert response.status_code == expected[role_index], (role, name, method)


def test_a_student_of_another_course_gets_404_everywhere(client, people, world):
    stranger = user_create("stella")
    Enrolment.objects.create(course=people.other_course, user=stranger, role=Role.STUDENT)
    client.force_login(stranger)
    for name, method, url, data, _ in urls(world, people):
        assert getattr(client, method)(url, data or {}).status_code == 404, (name, method)


def test_refused_requests_change_nothing(client, people, world):
    before = list(Accommodation.objects.values_list("student__username", "extra_minutes"))
    course_wide = list(CourseAccommodation.objects.values_list("student__username", "time_factor"))
    for role in ("anonymous", "student", "ta", "outsider"):
        for name, method, url, data, _ in urls(world, people):
            if method == "post":
                request_as(client, role, method, url, data)
                client.logout()
    assert list(Accommodation.objects.values_list("student__username", "extra_minutes")) == before
    assert list(CourseAccommodation.objects.values_list("student__username", "time_factor")) == course_wide
    assert course_wide == [("sam", 1.25)]


def test_other_courses_students_and_strangers_cannot_be_given_an_accommodation(client, people, world):
    client.force_login(people.instructor)
    for user in (people.outsider, people.ta):
        url = reverse("proctor:accommodation_edit", args=["attn", world.slug, user.pk])
        assert client.get(url).status_code == 404
        assert client.post(url, {"extra_minutes": "5"}).status_code == 404
    response = client.post(
        reverse("proctor:accommodation_new", args=["attn", world.slug]),
        {"student": people.outsider.pk, "extra_minutes": "5"},
    )
    assert response.status_code == 422
    assert "Select a valid choice" in response.content.decode()
    assert not Accommodation.objects.filter(student=people.outsider).exists()


def test_another_courses_staff_and_students_get_404_on_the_course_wide_pages(client, people, world):
    for user in (people.outsider,):  # an instructor of the other course
        client.force_login(user)
        for name in ("course_accommodations", "course_accommodation_new"):
            assert client.get(reverse(f"proctor:{name}", args=["attn"])).status_code == 404
        url = reverse("proctor:course_accommodation_edit", args=["attn", people.student.pk])
        assert client.post(url, {"time_factor": "3"}).status_code == 404
    # The outsider's own course does not reach this course's students either.
    client.force_login(people.outsider)
    url = reverse("proctor:course_accommodation_edit", args=["other", people.student.pk])
    assert client.get(url).status_code == 404
    assert CourseAccommodation.objects.get().time_factor == 1.25


def test_course_wide_pages_refuse_students_of_other_courses_and_staff(client, people, world):
    client.force_login(people.instructor)
    for user in (people.outsider, people.ta):
        url = reverse("proctor:course_accommodation_edit", args=["attn", user.pk])
        assert client.get(url).status_code == 404
        assert client.post(url, {"time_factor": "1.5"}).status_code == 404
    assert not CourseAccommodation.objects.exclude(student=people.student).exists()
