"""The authoring pages reached from a course carry the course's navigation (they had only
breadcrumbs, so a lecturer in the editor lost the way to the gradebook): the same links as
every staff page, "Exercises" marked as the section the page belongs to, the breadcrumbs kept,
and the role the view already checked reused (no query for the LMS link)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from authoring import services
from authoring.views import NEW_EXERCISE_TEMPLATE
from instructor.tests.test_course_nav import COURSE_LINKS, course_nav_links


def section_marked(html):
    nav = re.search(r'<nav class="staff-nav" aria-label="Course">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r'<a [^>]*aria-current="true"[^>]*>([^<]+)</a>', nav)


@pytest.fixture
def own_version(demo):
    instructor = get_user_model().objects.get(username="instructor")
    return services.exercise_create(course=demo.course, actor=instructor, source=NEW_EXERCISE_TEMPLATE)


def authoring_pages(course, version):
    exercise = [course.slug, version.exercise.slug]
    return [
        ("new exercise", reverse("authoring:new", args=[course.slug])),
        ("import", reverse("authoring:import", args=[course.slug])),
        ("format reference", reverse("authoring:format", args=[course.slug])),
        ("exercise", reverse("authoring:exercise", args=exercise)),
        ("version", reverse("authoring:version", args=[*exercise, 1])),
        ("editor", reverse("authoring:edit", args=[*exercise, 1])),
        ("preview", reverse("authoring:preview", args=[*exercise, 1])),
        ("variant test", reverse("authoring:test", args=[*exercise, 1])),
        ("pre-flight", reverse("authoring:preflight", args=[*exercise, 1])),
    ]


def test_every_authoring_page_has_the_course_navigation_with_exercises_marked(client, demo, own_version):
    assert client.login(username="instructor", password="attention-demo")
    for page, url in authoring_pages(demo.course, own_version):
        response = client.get(url)
        assert response.status_code == 200, page
        html = response.content.decode()
        links, marked_as_page = course_nav_links(html)
        assert links == COURSE_LINKS, page
        assert marked_as_page == [], page  # "Exercises" is the section, not this page
        assert section_marked(html) == ["Exercises"], page
        assert '<p class="breadcrumb">' in html, page


def test_the_exercise_list_itself_stays_marked_as_the_page(client, demo):
    assert client.login(username="instructor", password="attention-demo")
    html = client.get(reverse("authoring:list", args=[demo.course.slug])).content.decode()
    assert course_nav_links(html)[1] == ["Exercises"]
    assert section_marked(html) == []


def test_a_teaching_assistant_gets_the_navigation_without_the_lms_link(client, demo, own_version):
    assert client.login(username="ta", password="attention-demo")
    exercise = [demo.course.slug, own_version.exercise.slug]
    for url in (reverse("authoring:format", args=[demo.course.slug]),
                reverse("authoring:version", args=[*exercise, 1]),
                reverse("authoring:preview", args=[*exercise, 1])):
        links, _ = course_nav_links(client.get(url).content.decode())
        assert links == [link for link in COURSE_LINKS if link != "LMS"], url


def test_the_navigation_reuses_the_role_the_view_checked(client, demo, own_version, monkeypatch):
    def no_second_lookup(**kwargs):
        raise AssertionError("the navigation looked the role up again")

    monkeypatch.setattr("courses.templatetags.course_roles.course_role", no_second_lookup)
    assert client.login(username="instructor", password="attention-demo")
    for page, url in authoring_pages(demo.course, own_version):
        assert client.get(url).status_code == 200, page
