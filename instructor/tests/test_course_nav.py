"""One course navigation on every staff page: /teach and /courses pages used to carry two
navigations with different links, so a lecturer lost "Exercises" on the People page and
"Spaced review" on the gradebook."""

import re

import pytest
from django.urls import reverse

COURSE_LINKS = ["Exercises", "Course gradebook", "Grade by question", "Skills", "People",
                "Course-wide accommodations", "Spaced review", "Settings and join link", "LMS"]


def course_nav_links(html):
    nav = re.search(r'<nav class="staff-nav" aria-label="Course">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r"<a [^>]*>([^<]+)</a>", nav)[1:], re.findall(r'<a [^>]*aria-current="page"[^>]*>([^<]+)</a>', nav)


@pytest.mark.parametrize(("name", "args", "current"), [
    ("instructor:course", [], ["Attention, from scratch"]),
    ("mastery:course_grid", [], ["Skills"]),
    ("lti:course_lms", [], ["LMS"]),
    ("instructor:grading", [], ["Grade by question"]),
    ("instructor:course_gradebook", [], ["Course gradebook"]),
    ("authoring:list", [], ["Exercises"]),
    ("courses:people", [], ["People"]),
    ("courses:settings", [], ["Settings and join link"]),
    ("review:settings", [], ["Spaced review"]),
    ("proctor:course_accommodations", [], ["Course-wide accommodations"]),
])
def test_every_staff_page_of_a_course_has_the_same_links_and_marks_its_own(client, demo, name, args, current):
    assert client.login(username="instructor", password="attention-demo")
    response = client.get(reverse(name, args=[demo.course.slug, *args]))
    assert response.status_code == 200
    links, marked = course_nav_links(response.content.decode())
    assert links == COURSE_LINKS
    assert marked == current


def test_an_assignment_page_adds_its_own_navigation_under_the_course(client, demo):
    assert client.login(username="instructor", password="attention-demo")
    html = client.get(reverse("instructor:gradebook", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    assert course_nav_links(html)[0] == COURSE_LINKS
    assignment_nav = re.search(r'<nav class="staff-nav" aria-label="Assignment">(.*?)</nav>', html, re.S).group(1)
    assert re.findall(r"<a [^>]*>([^<]+)</a>", assignment_nav) == [
        demo.assignment.title, "Gradebook", "Analytics", "Accommodations", "Proctor"]
    assert '<a href="%s" aria-current="page">Gradebook</a>' % reverse(
        "instructor:gradebook", args=[demo.course.slug, demo.assignment.slug]) in assignment_nav


def test_a_teaching_assistant_is_not_shown_the_instructors_only_lms_link(client, demo):
    assert client.login(username="ta", password="attention-demo")
    html = client.get(reverse("instructor:course_gradebook", args=[demo.course.slug])).content.decode()
    links, _ = course_nav_links(html)
    assert links == [link for link in COURSE_LINKS if link != "LMS"]
    assert client.get(reverse("lti:course_lms", args=[demo.course.slug])).status_code == 403


def test_every_page_with_the_course_navigation_loads_the_staff_stylesheet(client, demo):
    assert client.login(username="instructor", password="attention-demo")
    for name in ("lti:course_lms", "courses:people", "instructor:course", "review:settings"):
        html = client.get(reverse(name, args=[demo.course.slug])).content.decode()
        assert "attnquiz/css/staff" in html, name
