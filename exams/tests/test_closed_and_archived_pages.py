"""What a student's pages say of an exam they cannot start (closed, not open yet) and of a
course archived during an exam: the reason, with its date in the course's zone, and no
Start, no forms, no clock; the refused answer of a page opened before the archiving says
plainly why (a fragment the page shows as it is); the dashboard's line of an exam never
taken says "closed on …" or "opens on …"."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from attnquiz.testing import CLOCK_START
from authoring.tests.factories import assignment_create, people_create, product_yaml, published_version, variant_for
from courses import services as course_services
from courses.models import AssignmentKind
from exams import services
from exams.models import AssignmentAttempt
from exercises.models import Variant

START = CLOCK_START  # Mon 2 Mar 2026, 09:00 UTC: 10:00 in Berlin


@pytest.fixture
def people(db):
    people = people_create()
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    return people


@pytest.fixture
def exam(people, clock):
    return assignment_create(
        people.course, [published_version(source=product_yaml())], kind=AssignmentKind.EXAM,
        time_limit_minutes=30, is_published=True,
    )


def page_of(client, exam):
    return client.get(reverse("assignment", args=["attn", exam.slug])).content.decode()


def test_a_closed_exam_says_when_it_closed_and_offers_no_start(client, people, exam, clock):
    exam.closes_at = START - timedelta(hours=1)
    exam.save()
    client.force_login(people.student)
    page = page_of(client, exam)
    assert (
        '<p id="attempt-closed"><strong>This exam closed on Mon 2 Mar 2026, 09:00 CET.</strong> '
        "You did not start it, so it can no longer be taken.</p>"
    ) in page
    assert "Start the exam" not in page
    assert reverse("exams:start", args=["attn", exam.slug]) not in page
    # Its exercises lead back here without "Start the exam first."
    response = client.get(reverse("exercise", args=[exam.items.get().pk]), follow=True)
    assert "Start the exam first." not in response.content.decode()


def test_an_exam_not_open_yet_says_when_it_opens(client, people, exam, clock):
    exam.opens_at = START + timedelta(days=1, hours=2)
    exam.save()
    client.force_login(people.student)
    page = page_of(client, exam)
    assert (
        '<p id="attempt-not-open"><strong>This exam opens on Tue 3 Mar 2026, 12:00 CET.</strong> '
        "Its Start button appears here then; you will have 30 minutes from when you press it.</p>"
    ) in page
    assert "Start the exam" not in page


def test_a_students_own_later_close_date_still_offers_start(client, people, exam, clock):
    from exams.models import Accommodation

    exam.closes_at = START - timedelta(hours=1)
    exam.save()
    Accommodation.objects.create(assignment=exam, student=people.student, closes_at=START + timedelta(hours=1))
    client.force_login(people.student)
    page = page_of(client, exam)
    assert "Start the exam" in page and "attempt-closed" not in page


def test_the_dashboard_says_closed_or_opens_for_an_exam_never_taken(client, people, exam, clock):
    later = assignment_create(
        people.course, [published_version(source=product_yaml(slug="product-2"))], slug="week2",
        kind=AssignmentKind.EXAM, is_published=True, opens_at=START + timedelta(days=1),
    )
    exam.closes_at = START - timedelta(hours=1)
    exam.save()
    client.force_login(people.student)
    page = client.get(reverse("dashboard")).content.decode()
    row = page.split(f'href="/courses/attn/assignments/{exam.slug}/"')[1].split("</tr>")[0]
    assert "<td>closed on Mon 2 Mar 2026, 09:00 CET</td>" in row
    assert "solved" not in row and "answered" not in row
    row = page.split(f'href="/courses/attn/assignments/{later.slug}/"')[1].split("</tr>")[0]
    assert "<td>opens on Tue 3 Mar 2026, 10:00 CET</td>" in row
    # Once started, an exam's line counts the progress again, closed or not.
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=START - timedelta(hours=2))
    row = client.get(reverse("dashboard")).content.decode().split(f'href="/courses/attn/assignments/{exam.slug}/"')[1]
    assert "closed on" not in row.split("</tr>")[0]


# ---------------------------------------------------------------------------
# A course archived during an exam
# ---------------------------------------------------------------------------


@pytest.fixture
def archived_mid_exam(people, exam, clock):
    services.attempt_start(assignment=exam, student=people.student)
    variant_for(exam.items.get(), people.student, params={"a": 3, "b": 4})  # its page is open
    clock.advance(minutes=5)
    course_services.course_archive(course=people.course, confirmed=True)
    return exam


def test_the_exercise_page_of_an_archived_course_is_read_only(client, people, archived_mid_exam):
    exam = archived_mid_exam
    client.force_login(people.student)
    page = client.get(reverse("exercise", args=[exam.items.get().pk])).content.decode()
    assert (
        '<p class="aq-attempt is-closed card" id="archived-notice" role="status"><strong>This course was archived '
        "by its instructors; it takes no more answers.</strong> What you saved stays as it was.</p>"
    ) in page
    assert "Exam in progress" not in page
    assert 'class="answer-form"' not in page and "<form" not in page.split("<main")[1]
    assert 'id="clock"' not in page and "data-countdown" not in page
    assert "Attempts left" not in page


def test_the_assignment_page_of_an_archived_course_offers_no_finish_nor_start(client, people, archived_mid_exam):
    exam = archived_mid_exam
    client.force_login(people.student)
    page = page_of(client, exam)
    assert (
        '<p id="attempt-archived"><strong>This course was archived by its instructors; it takes no more '
        "answers.</strong> The answers you saved count.</p>"
    ) in page
    assert "Finish attempt" not in page and 'id="clock"' not in page
    assert "<td>none</td>" in page and "per part</td>" not in page  # no attempts left in the table
    client.force_login(people.student2)  # never started
    page = page_of(client, exam)
    assert "The exam can no longer be started." in page and "Start the exam" not in page


def test_homework_of_an_archived_course_shows_the_notice_and_no_forms(client, people, clock):
    homework = assignment_create(
        people.course, [published_version(source=product_yaml(slug="product-hw"))], slug="hw", is_published=True,
    )
    course_services.course_archive(course=people.course)
    client.force_login(people.student)
    page = client.get(reverse("exercise", args=[homework.items.get().pk])).content.decode()
    assert 'id="archived-notice"' in page
    assert "Practise with new numbers" not in page and 'class="answer-form"' not in page


def test_an_answer_sent_from_a_page_opened_before_the_archiving_is_refused_plainly(client, people, archived_mid_exam):
    exam = archived_mid_exam
    client.force_login(people.student)
    variant = Variant.objects.get(assignment_item=exam.items.get(), student=people.student)
    url = reverse("submit", args=[variant.pk, "product"])
    response = client.post(url, {"answer": "12"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert response.content.decode() == (
        '<p class="invalid" role="alert" data-result="refused" data-archived>This course was archived by its '
        "instructors; it takes no more answers. Your answer was not stored.</p>"
    )
    without_script = client.post(url, {"answer": "12"})
    assert without_script.status_code == 409 and "<html" in without_script.content.decode()
