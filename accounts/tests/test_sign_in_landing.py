"""Where a student lands: signing in leads a student of exactly one course to that course's
section of the dashboard, and a course link (a ``next`` of /courses/<slug>/, a join link,
an invitation) to the course it names; a safe ``next`` always wins, an unsafe one is
ignored, and staff land where they did (the dashboard)."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from authoring.tests.factories import PASSWORD, user_create
from courses import services as course_services
from courses.models import Course, Enrolment, EnrolmentStatus, Role


def sign_in(client, username, next_url=None):
    data = {"username": username, "password": PASSWORD}
    url = reverse("login") + (f"?next={next_url}" if next_url is not None else "")
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:500]
    return response["Location"]


@pytest.fixture
def solo(people):
    """ada, a student of 'attn' only."""
    ada = user_create("ada")
    Enrolment.objects.create(course=people.course, user=ada, role=Role.STUDENT)
    return ada


# --- Signing in without a next ------------------------------------------------------------


def test_a_student_of_one_course_lands_on_its_section(client, solo):
    assert sign_in(client, "ada") == "/#course-attn"
    page = client.get("/").content.decode()
    assert '<section class="course" id="course-attn">' in page


def test_a_student_of_two_courses_lands_on_the_dashboard(client, people, solo):
    Enrolment.objects.create(course=people.other_course, user=solo, role=Role.STUDENT)
    assert sign_in(client, "ada") == "/"
    page = client.get("/").content.decode()
    assert 'id="course-attn"' in page and 'id="course-other"' in page  # each course's section


def test_a_dropped_course_does_not_count(client, people, solo):
    Enrolment.objects.create(
        course=people.other_course, user=solo, role=Role.STUDENT, status=EnrolmentStatus.DROPPED
    )
    assert sign_in(client, "ada") == "/#course-attn"


def test_nobody_without_a_course_lands_on_a_section(client, people):
    user_create("newcomer")
    assert sign_in(client, "newcomer") == "/"


@pytest.mark.parametrize("username", ["tariq", "ines"])
def test_staff_keep_the_dashboard(client, people, username):
    assert sign_in(client, username) == "/"


def test_a_ta_of_one_course_and_student_of_none_keeps_the_dashboard(client, people):
    tess = user_create("tess")
    Enrolment.objects.create(course=people.other_course, user=tess, role=Role.TEACHING_ASSISTANT)
    assert sign_in(client, "tess") == "/"


def test_site_staff_who_study_one_course_keep_the_dashboard(client, solo):
    get_user_model().objects.filter(pk=solo.pk).update(is_staff=True)
    assert sign_in(client, "ada") == "/"


# --- next ----------------------------------------------------------------------------------


def test_a_safe_next_always_wins(client, solo):
    assert sign_in(client, "ada", "/grades/") == "/grades/"


def test_a_course_link_leads_to_that_courses_section(client, people, solo):
    Enrolment.objects.create(course=people.other_course, user=solo, role=Role.STUDENT)
    assert sign_in(client, "ada", "/courses/other/") == "/courses/other/"
    assert client.get("/courses/other/")["Location"] == "/#course-other"


@pytest.mark.parametrize("unsafe", ["https://evil.example/", "//evil.example/", "javascript:alert(1)"])
def test_an_unsafe_next_is_ignored(client, solo, unsafe):
    assert sign_in(client, "ada", unsafe) == "/#course-attn"


def test_staff_follow_a_course_link_to_the_teaching_page(client, people):
    assert sign_in(client, "tariq", "/courses/attn/") == "/courses/attn/"
    assert client.get("/courses/attn/")["Location"] == "/teach/attn/"


# --- Join links ----------------------------------------------------------------------------


@pytest.fixture
def code(people):
    course_services.join_code_rotate(course=people.course)
    people.course.refresh_from_db()
    return people.course.join_code


def test_joining_by_the_link_leads_to_the_course_joined(client, people, code):
    Enrolment.objects.create(course=people.other_course, user=user_create("ada"), role=Role.STUDENT)
    client.login(username="ada", password=PASSWORD)
    joined = client.post(reverse("courses:join", args=[code]))
    assert joined["Location"] == "/courses/attn/"
    assert client.get(joined["Location"])["Location"] == "/#course-attn"
    assert Enrolment.objects.get(course=people.course, user__username="ada").role == Role.STUDENT


def test_joining_by_the_dashboard_box_leads_to_the_course_joined(client, people, code):
    user_create("ada")
    client.login(username="ada", password=PASSWORD)
    assert client.post(reverse("courses:join_enter"), {"code": code})["Location"] == "/courses/attn/"
    refused = client.post(reverse("courses:join_enter"), {"code": "WRONG"})
    assert refused["Location"] == "/"


def test_a_visitor_signing_in_from_the_join_link_comes_back_to_it(client, people, code):
    user_create("ada")
    sent = client.post(reverse("courses:join", args=[code]))
    assert sent["Location"] == f"/login/?next=/join/{code}/"
    assert sign_in(client, "ada", f"/join/{code}/") == f"/join/{code}/"
    assert client.post(f"/join/{code}/")["Location"] == "/courses/attn/"


def test_the_join_page_of_a_course_one_is_in_leads_to_the_course(client, people, code):
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("courses:join", args=[code])).content.decode()
    assert '<a href="/courses/attn/">Go to the course</a>' in page


def test_staff_joining_by_the_link_keep_their_role_and_reach_the_teaching_page(client, people, code):
    client.login(username="tariq", password=PASSWORD)
    joined = client.post(reverse("courses:join", args=[code]))
    assert client.get(joined["Location"])["Location"] == "/teach/attn/"
    assert Enrolment.objects.get(course=people.course, user=people.ta).role == Role.TEACHING_ASSISTANT


def test_a_course_slug_is_the_sections_anchor(client, people, solo):
    course = Course.objects.create(slug="week-3_attn", title="Week 3")
    Enrolment.objects.filter(user=solo).update(course=course)
    assert sign_in(client, "ada") == "/#course-week-3_attn"
    assert 'id="course-week-3_attn"' in client.get("/").content.decode()
