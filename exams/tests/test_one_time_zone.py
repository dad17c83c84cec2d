"""One time zone: every time a person reads on the student pages and the teaching pages
of a course is in the course's zone and labelled; pages with no course (a person's API
tokens, the sign-in pause, the admin's LMS records) use the site's zone, labelled. Each
page is rendered for a course on Berlin time (the site on Berlin time too) with an exam
under way and a time on every record the page shows; the test fails on a clock time
without its zone's label, on a bare ISO date-time, and on any "UTC". (Durations — a
countdown's 14:59 — are taken out first.)"""

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

CLOCK_TIME = re.compile(r"\b\d{1,2}:\d\d\b(?!:\d)|\d{4}-\d\d-\d\dT\d\d:\d\d")
LABELLED = re.compile(r"\b\d{1,2}:\d\d (?:CET|CEST)\b")
DURATIONS = {"data-countdown-text", "data-seconds-left"}


class ReadText(HTMLParser):
    """The text a person reads (no scripts, no attribute values, no durations, and not the
    names of the zones a course may choose from)."""

    def __init__(self):
        super().__init__()
        self.skipping, self.parts = [], []

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        zone_choice = tag == "select" and ("name", "time_zone") in attrs
        if tag in ("script", "style") or names & DURATIONS or zone_choice:
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
    assert unlabelled("<p>at 18:25:07</p>") == ["…at 18:25:07…"]
    assert unlabelled("<p>sent 2026-03-02T17:25:00+00:00</p>") == [
        "…sent 2026-03-02T17:25:00+00:0…", "…sent 2026-03-02T17:25:00+00:00…",
    ]
    assert unlabelled('<select name="time_zone"><option>UTC</option></select>') == []  # a zone to choose


# --- Every page with a time on it: teaching, authoring, the LMS, the course's settings ---------

AT = START + timedelta(hours=8, minutes=25)  # 17:25 UTC: 18:25 CET


@pytest.fixture
def berlin_site(settings):
    settings.TIME_ZONE = "Europe/Berlin"  # pages without a course show the site's zone


@pytest.fixture
def every_record(berlin_exam, berlin_site, student, django_user_model, clock, django_capture_on_commit_callbacks):
    """A time on every record the pages show: a scheduled release, an accommodation and its
    change log (one entry as the log wrote it before times were labelled), a manual grade
    and a regrade request with its reply, an LMS context synced, a passback sent and one
    due again, an authored exercise with its history, an invitation, an API token."""
    from api.models import TokenScope
    from api.services import api_token_create
    from authoring.services import exercise_create
    from authoring.tests.factories import product_yaml
    from courses.models import Invitation
    from exams.models import Accommodation, AccommodationChange
    from exams.services_accommodations import accommodation_set
    from instructor.models import ManualGrade, RegradeRequest
    from instructor.services_rubrics import regrade_request_reply
    from lti.models import LtiContext, Passback, PassbackStatus, Platform, ResourceLink

    exam, submission = berlin_exam["exam"], berlin_exam["submission"]
    course = exam.course
    instructor = django_user_model.objects.get(username="instructor")
    services.grades_release_schedule(assignment=exam, at=AT, by=instructor)
    other = course.enrolments.get(user__username="student3").user
    accommodation_set(
        assignment=exam, student=other, values={"extra_minutes": 10, "closes_at": AT}, actor=instructor
    )
    AccommodationChange.objects.create(
        assignment=exam, student=other, action="set", detail="closes — → 2026-03-02 18:25", by=instructor
    )
    assert Accommodation.objects.filter(assignment=exam).count() == 1
    submission.refresh_from_db()
    ManualGrade.objects.create(submission=submission, grader=instructor, score=0.5, comment="half")
    # Stored as it is: the exam's grades are not released yet, so the student could not ask.
    request = RegradeRequest.objects.create(submission=submission, student=student, message="Look again")
    regrade_request_reply(request=request, replier=instructor, reply="Looked")

    platform = Platform.objects.create(
        name="Moodle", issuer="https://lms.example", client_id="c", auth_login_url="https://lms.example/a",
        auth_token_url="https://lms.example/t",
    )
    context = LtiContext.objects.create(platform=platform, context_id="ctx", course=course, roster_synced_at=AT)
    link = ResourceLink.objects.create(platform=platform, resource_link_id="r", context=context, assignment=exam)
    Passback.objects.create(link=link, user=student, status=PassbackStatus.SENT, changed_at=AT, sent_at=AT,
                            sent_score={"scoreGiven": 1, "scoreMaximum": 2})
    Passback.objects.create(link=link, user=other, status=PassbackStatus.PENDING, changed_at=AT, attempts=1,
                            next_attempt_at=AT)

    version = exercise_create(course=course, actor=instructor, source=product_yaml(slug="authored"))
    Invitation.objects.create(course=course, user=other, sent_by=instructor, sent_at=AT)
    _, secret = api_token_create(user=student, name="ci", scope=TokenScope.READ, lifetime_days=7)
    from api.models import ApiToken

    ApiToken.objects.filter(user=student).update(last_used_at=AT)
    return {**berlin_exam, "version": version, "instructor": instructor}


def course_pages(record):
    exam, submission, version = record["exam"], record["submission"], record["version"]
    course, slug = exam.course.slug, exam.slug
    return [
        reverse("proctor:accommodations", args=[course, slug]),
        reverse("instructor:regrade_requests", args=[course]) + "?all=1",  # the answered one too
        reverse("instructor:gradebook", args=[course, slug]),
        reverse("instructor:course_gradebook", args=[course]),
        reverse("instructor:manual_queue", args=[course]),
        reverse("lti:course_lms", args=[course]),
        reverse("authoring:list", args=[course]),
        reverse("authoring:exercise", args=[course, version.exercise.slug]),
        reverse("authoring:version", args=[course, version.exercise.slug, version.number]),
        reverse("courses:settings", args=[course]),
        reverse("courses:copy", args=[course]),
        reverse("courses:people", args=[course]),
        reverse("instructor:grading", args=[course]),
        reverse("instructor:manual_grade", args=[course, submission.pk]),
        reverse("instructor:analytics", args=[course, slug]),
        reverse("instructor:regrade_new", args=[course, slug]),
        reverse("mastery:course_grid", args=[course]),
        reverse("review:settings", args=[course]),
    ]


ADMIN_LISTS = ["lti/platform", "lti/deployment", "lti/lticontext", "lti/resourcelink", "lti/ltiidentity",
               "lti/loginstate", "lti/passback", "lti/toolkey", "courses/course", "courses/assignment",
               "courses/enrolment", "exams/assignmentattempt", "exams/accommodation", "exams/graderelease",
               "grading/submission", "exercises/exercise", "exercises/exerciseversion", "exercises/variant"]


def test_every_time_on_the_teaching_pages_is_labelled(every_record, clock):
    client = Client()
    client.force_login(every_record["instructor"])
    pages = staff_pages(every_record["exam"], every_record["submission"]) + course_pages(every_record)
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert unlabelled(response.content.decode()) == [], url
    text = {url: client.get(url).content.decode() for url in pages}
    release = reverse("exams:release", args=[every_record["exam"].course.slug, every_record["exam"].slug])
    assert "Release scheduled for Mon 2 Mar 2026, 18:25 CET" in text[release]
    log = text[reverse("proctor:accommodations", args=[every_record["exam"].course.slug, every_record["exam"].slug])]
    assert log.count("closes — → Mon 2 Mar 2026, 18:25 CET") == 2  # the new entry, and the old one read labelled
    lms = text[reverse("lti:course_lms", args=[every_record["exam"].course.slug])]
    assert "Synced Mon 2 Mar 2026, 18:25 CET" in lms and "1 / 2 at Mon 2 Mar 2026, 18:25 CET" in lms


def test_every_time_on_the_students_own_pages_is_labelled(every_record, student, clock):
    client = Client()
    client.force_login(student)
    for url in [reverse("grades:mine"), reverse("api:tokens"), reverse("profile")]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert unlabelled(response.content.decode()) == [], url
    tokens = client.get(reverse("api:tokens")).content.decode()
    assert "Mon 2 Mar 2026, 18:25 CET" in tokens  # last used, in the site's zone


def test_the_admins_lms_records_show_labelled_times(every_record, django_user_model, clock):
    admin = django_user_model.objects.create_superuser(username="root", password="x", email="root@example.org")
    client = Client()
    client.force_login(admin)
    for name in ADMIN_LISTS:
        response = client.get(f"/admin/{name}/")
        assert response.status_code == 200, name
        assert unlabelled(response.content.decode()) == [], name
    assert "Mon 2 Mar 2026, 18:25 CET" in client.get("/admin/lti/passback/").content.decode()


def test_the_sign_in_pause_says_when_in_the_sites_zone(berlin_site, clock):
    from django.template.loader import render_to_string

    page = render_to_string("registration/locked_out.html", {"minutes": 15, "retry_at": START + timedelta(minutes=15)})
    assert "after 10:15 CET" in page and unlabelled(page) == []
