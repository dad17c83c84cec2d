"""One time zone: every time a person reads on the student pages and the teaching pages
of an exam is in the course's zone and labelled. Each page is rendered for a course on
Berlin time with an exam under way; the test fails on a clock time without its zone's
label, and on any "UTC". (Durations — a countdown's 14:59 — are taken out first.)

Not covered yet: the accommodations pages, whose change log stores its dates as text."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from exams import services
from exercises.services import variant_get_or_create_for_item
from grading.services import submission_create

from .conftest import START, UNIFORM

CLOCK_TIME = re.compile(r"\b\d{1,2}:\d\d\b(?!:\d)")
LABELLED = re.compile(r"\b\d{1,2}:\d\d (?:CET|CEST)\b")
DURATIONS = {"data-countdown-text", "data-seconds-left"}


class ReadText(HTMLParser):
    """The text a person reads (no scripts, no attribute values, no durations)."""

    def __init__(self):
        super().__init__()
        self.skipping, self.parts = [], []

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        if tag in ("script", "style") or names & DURATIONS:
            self.skipping.append(tag)
        elif self.skipping and tag == self.skipping[-1]:
            self.skipping.append(tag)

    def handle_endtag(self, tag):
        if self.skipping and tag == self.skipping[-1]:
            self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def unlabelled(html: str) -> list[str]:
    reader = ReadText()
    reader.feed(html)
    text = " ".join(reader.parts)
    bad = [f"…{text[max(0, m.start() - 30):m.end() + 8]}…" for m in CLOCK_TIME.finditer(LABELLED.sub("", text))]
    if "UTC" in text:
        bad.append("UTC")
    return bad


@pytest.fixture
def berlin_exam(exam, student, clock, item, django_capture_on_commit_callbacks):
    course = exam.course
    course.time_zone = "Europe/Berlin"
    course.save()
    exam.time_limit_minutes = 30
    exam.due_at = START + timedelta(hours=2)
    exam.closes_at = START + timedelta(hours=3)
    exam.save()
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(variant=variant, student=student, part="weights", raw_answer=UNIFORM)
    return {"exam": exam, "item": item, "submission": submission}


def student_pages(exam, item, submission):
    return [
        reverse("dashboard"),
        reverse("assignment", args=[exam.course.slug, exam.slug]),
        reverse("exercise", args=[item.pk]),
        reverse("submission", args=[submission.pk]),
    ]


def staff_pages(exam, submission):
    course, slug = exam.course.slug, exam.slug
    return [
        reverse("instructor:course", args=[course]),
        reverse("instructor:assignment", args=[course, slug]),
        reverse("exams:release", args=[course, slug]),
        reverse("proctor:view", args=[course, slug]),
        reverse("instructor:submission", args=[course, submission.pk]),
        reverse("instructor:student", args=[course, slug, submission.student_id]),
        reverse("proctor:accommodations", args=[course, slug]),
        reverse("proctor:course_accommodations", args=[course]),
    ]


def test_every_time_on_the_student_pages_is_labelled_in_the_course_zone(berlin_exam, student, clock):
    client = Client()
    client.force_login(student)
    clock.advance(minutes=5)
    for url in student_pages(berlin_exam["exam"], berlin_exam["item"], berlin_exam["submission"]):
        response = client.get(url)
        assert response.status_code == 200, url
        assert unlabelled(response.content.decode()) == [], url
    page = client.get(reverse("assignment", args=[berlin_exam["exam"].course.slug, berlin_exam["exam"].slug]))
    assert "due Mon 2 Mar 2026, 12:00 CET" in page.content.decode()  # 09:00 UTC + 2 h, in Berlin
    services.attempt_finish(assignment=berlin_exam["exam"], student=student)
    ended = client.get(reverse("assignment", args=[berlin_exam["exam"].course.slug, berlin_exam["exam"].slug]))
    assert "Finished at 10:05 CET" in ended.content.decode() and unlabelled(ended.content.decode()) == []


def test_every_time_on_the_staff_pages_of_the_exam_is_labelled(berlin_exam, django_user_model, clock):
    from exams.services_accommodations import course_accommodation_set

    client = Client()
    instructor = django_user_model.objects.get(username="instructor")
    client.force_login(instructor)
    # A course-wide accommodation, so its list and log (with their times) are on the pages.
    course_accommodation_set(
        course=berlin_exam["exam"].course, student=berlin_exam["submission"].student,
        values={"time_factor": 1.5}, actor=instructor,
    )
    for url in staff_pages(berlin_exam["exam"], berlin_exam["submission"]):
        response = client.get(url)
        assert response.status_code == 200, url
        assert unlabelled(response.content.decode()) == [], url


def test_the_check_sees_an_unlabelled_and_a_utc_time():
    assert unlabelled("<p>finished 18:25</p>") == ["…finished 18:25…"]
    assert unlabelled("<p>finished 18:25 UTC</p>") == ["…finished 18:25 UTC…", "UTC"]
    assert unlabelled('<p>18:25 CET, <strong data-countdown-text>14:59</strong></p>') == []
