"""Copying a course for a new term through its page: the page says what stays behind (per
term and secret: access codes, the join code, LMS links, releases) and, per assignment,
what of it is left behind; the copy holds none of it."""

import html
import re
from datetime import datetime, timezone as dt_timezone

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from courses import services
from courses.models import Assignment, AssignmentKind, Course
from exams.access import access_code_matches


@pytest.fixture
def term(people):
    """An exam with access code s3cret and released grades, homework with a release
    scheduled, a quiz with neither; the course has a join code."""
    services.course_creation_grant(user=people.instructor)
    services.join_code_rotate(course=people.course)
    version = published_version(source=product_yaml())
    when = datetime(2026, 10, 2, 12, 0, tzinfo=dt_timezone.utc)
    exam = assignment_create(people.course, [version], slug="exam", kind=AssignmentKind.EXAM, access_code="s3cret",
                             allowed_networks="10.0.0.0/8", grades_released_at=when)
    assignment_create(people.course, [version], slug="homework", grades_release_scheduled_at=when)
    assignment_create(people.course, [version], slug="quiz")
    return exam


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))).strip()


def test_the_copy_page_says_what_is_not_copied_and_what_each_assignment_leaves_behind(client, term):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("courses:copy", args=["attn"])).content.decode()
    not_copied = re.search(r'<ul id="not-copied">(.*?)</ul>', page, re.S)[1]
    assert [_text(item) for item in re.findall(r"<li>(.*?)</li>", not_copied)] == [
        "Students, their answers, grades and accommodations.",
        "The join code and invite link: the copy gets its own.",
        "Links from an LMS (LTI): link the copy from the new term's LMS course.",
        "Exam access codes: last term's students know them. Set a new code on each exam that needs one.",
        "Released grades and scheduled releases: every exam of the copy starts unreleased.",
        "Gradebook categories and grading rubrics.",
    ]
    assert _text(re.search(r'<p id="copied-controls">(.*?)</p>', page, re.S)[1]) == (
        "Copied as they are: each exam's allowed networks, browser-session rule and review policy. Check the "
        "networks still fit the new term's rooms."
    )
    rows = re.findall(r"<tr><td>(.*?)</td>.*?<td>([^<]*)</td></tr>", page)
    assert rows == [("Exam", "access code · released grades"), ("Homework", "scheduled release"), ("Quiz", "—")]
    assert "s3cret" not in page


def test_copying_through_the_page_leaves_the_code_and_releases_behind(client, term, people):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("courses:copy", args=["attn"]), {
        "title": "Attention", "slug": "attn-2027", "term": "2027", "offset_days": "364", "copy_staff": "on",
    })
    assert response.status_code == 302
    copy = Course.objects.get(slug="attn-2027")
    copied = {a.slug: a for a in copy.assignments.all()}
    assert {slug: (a.access_code, a.allowed_networks, a.grades_released_at, a.grades_release_scheduled_at)
            for slug, a in copied.items()} == {
        "exam": ("", "10.0.0.0/8", None, None), "homework": ("", "", None, None), "quiz": ("", "", None, None),
    }
    assert copy.join_code and copy.join_code != Course.objects.get(slug="attn").join_code
    assert access_code_matches(stored=Assignment.objects.get(pk=term.pk).access_code, given="s3cret")
    # The copy's exam takes no code at all until one is set: the old one opens nothing.
    assert not access_code_matches(stored=copied["exam"].access_code, given="s3cret")
