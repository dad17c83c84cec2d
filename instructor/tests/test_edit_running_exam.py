"""Editing an assignment students have started: a change to its exercises, or a time
limit or close date that would end or cut short a running attempt, is shown with who it
reaches and saved only when the instructor confirms; with no attempts it saves at once."""

import html
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, user_create
from courses.models import AssignmentItem, Enrolment, Role
from exams.models import Accommodation, AssignmentAttempt, AttemptCloseReason
from instructor import selectors_edit_impact
from instructor.forms import AssignmentForm

TITLE = "Product of two numbers"


@pytest.fixture
def exam(people):
    """A 15-minute exam of two exercises with three running attempts (6:20, 12 and 2 minutes
    left) and two finished ones."""
    first = published_version(source=product_yaml(slug="first"))
    second = published_version(source=product_yaml(slug="second"))
    exam = assignment_create(people.course, [first, second], kind="exam", time_limit_minutes=15)
    now = timezone.now()
    left = {"r1": timedelta(minutes=6, seconds=20), "r2": timedelta(minutes=12), "r3": timedelta(minutes=2)}
    for username, remaining in left.items():
        student = user_create(username)
        Enrolment.objects.create(course=people.course, user=student, role=Role.STUDENT)
        AssignmentAttempt.objects.create(
            assignment=exam, student=student, started_at=now - timedelta(minutes=15) + remaining
        )
    for student in (people.student, people.student2):
        AssignmentAttempt.objects.create(
            assignment=exam, student=student, started_at=now - timedelta(minutes=30),
            finished_at=now - timedelta(minutes=20), close_reason=AttemptCloseReason.FINISHED,
        )
    return exam


def _login(client):
    client.login(username="ines", password=PASSWORD)


def _settings(exam, **changes) -> dict:
    """The settings form as the edit page fills it in, with ``changes``."""
    data = {}
    for name, value in AssignmentForm(instance=exam).initial.items():
        if value is True:
            data[name] = "on"
        elif value is not None and value is not False:
            data[name] = str(value)
    data.update(changes)
    return data


def _confirmation(response) -> str:
    page = response.content.decode()
    start = page.index('id="edit-confirmation"')
    return html.unescape(page[start:page.index("</p>", start)])


def _token(response) -> str:
    """The impact token the confirmation's button sends back."""
    found = re.findall(r'<input type="hidden" name="impact" value="([0-9a-f]{16}:[0-9a-f]{16}:[\w-]+:[\w-]+)">', response.content.decode())
    assert len(found) == 1
    return found[0]


# --- The selector ----------------------------------------------------------------------


def test_the_selector_counts_working_and_finished_and_the_cut_in_one_query(exam):
    with CaptureQueriesContext(connection) as queries:
        reached = selectors_edit_impact.attempts_reached(assignment=exam, new_limits={"time_limit_minutes": 10})
    assert len(queries) == 1
    # 6:20 left -> 1:20 left (shortened), 12 -> 7 (shortened), 2 left -> ended 3 minutes ago.
    assert reached == selectors_edit_impact.AttemptsReached(working=3, finished=2, ended_now=1, shortened=2)


def test_an_attempt_whose_clock_ran_out_counts_as_finished_and_accommodated_time_is_kept(exam, people):
    runner = AssignmentAttempt.objects.get(student__username="r3")
    runner.started_at = timezone.now() - timedelta(minutes=16)
    runner.save()
    # r1 has 30 minutes of their own: a limit of 10 for the others does not touch them.
    Accommodation.objects.create(
        assignment=exam, student=AssignmentAttempt.objects.get(student__username="r1").student, time_limit_minutes=30
    )
    reached = selectors_edit_impact.attempts_reached(assignment=exam, new_limits={"time_limit_minutes": 10})
    assert reached == selectors_edit_impact.AttemptsReached(working=2, finished=3, ended_now=0, shortened=1)


# --- Exercises -------------------------------------------------------------------------


def test_new_points_without_confirm_save_nothing_and_say_who_it_reaches(client, exam):
    item = exam.items.get(position=0)
    _login(client)
    url = reverse("instructor:item_update", args=["attn", exam.slug, item.pk])
    response = client.post(url, {"points": "2", "position": "1", "version": item.exercise_version_id})
    assert response.status_code == 200
    assert _confirmation(response).endswith(
        "3 students are working on this exam now and 2 have finished. "
        f"Changing '{TITLE}' from 1 point to 2 points changes their totals."
    )
    assert AssignmentItem.objects.get(pk=item.pk).points == 1
    page = response.content.decode()
    assert f'<input type="hidden" name="points" value="2">' in page
    assert 'name="confirm" value="yes">Change the points anyway' in page

    confirmed = client.post(
        url, {"points": "2", "position": "1", "version": item.exercise_version_id, "confirm": "yes", "impact": _token(response)}
    )
    assert confirmed.status_code == 302
    assert AssignmentItem.objects.get(pk=item.pk).points == 2


def test_moving_an_exercise_without_new_points_needs_no_confirmation(client, exam):
    item = exam.items.get(position=0)
    _login(client)
    response = client.post(
        reverse("instructor:item_update", args=["attn", exam.slug, item.pk]),
        {"points": "1", "position": "2", "version": item.exercise_version_id},
    )
    assert response.status_code == 302
    assert list(exam.items.values_list("exercise_version__exercise__slug", "position")) == [("second", 0), ("first", 1)]


def test_removing_an_exercise_asks_first_and_removes_it_on_confirm(client, exam):
    item = exam.items.get(position=1)
    _login(client)
    url = reverse("instructor:item_remove", args=["attn", exam.slug, item.pk])
    response = client.post(url)
    assert response.status_code == 200
    assert _confirmation(response).endswith(
        "3 students are working on this exam now and 2 have finished. "
        f"Removing '{TITLE}' takes its points out of their totals."
    )
    assert exam.items.count() == 2
    assert client.post(url, {"confirm": "yes", "impact": _token(response)}).status_code == 302
    assert list(exam.items.values_list("pk", flat=True)) == [exam.items.get(position=0).pk]


def test_adding_an_exercise_asks_first_and_adds_it_on_confirm(client, exam):
    third = published_version(source=product_yaml(slug="third"))
    AssignmentAttempt.objects.filter(finished_at__isnull=True).exclude(student__username="r1").delete()
    _login(client)
    url = reverse("instructor:item_add", args=["attn", exam.slug])
    response = client.post(url, {"version": third.pk, "points": "1"})
    assert response.status_code == 200
    assert _confirmation(response).endswith(
        "1 student is working on this exam now and 2 have finished. "
        f"Adding '{TITLE}' adds 1 point to their totals. Those who have finished cannot answer it and score 0 on it."
    )
    assert exam.items.count() == 2
    assert client.post(url, {"version": third.pk, "points": "1", "confirm": "yes", "impact": _token(response)}).status_code == 302
    assert exam.items.filter(exercise_version=third).count() == 1


def test_adding_from_the_picker_asks_first_and_reposts_every_ticked_exercise(client, exam):
    third = published_version(source=product_yaml(slug="third"))
    fourth = published_version(source=product_yaml(slug="fourth"))
    AssignmentAttempt.objects.filter(finished_at__isnull=True).delete()
    _login(client)
    url = reverse("instructor:exercise_picker", args=["attn", exam.slug])
    response = client.post(url, {"version": [third.pk, fourth.pk], "points": "2"})
    assert response.status_code == 200
    assert _confirmation(response).endswith(
        f"2 students have finished this exam. Adding '{TITLE}', '{TITLE}' adds 2 points each to their totals. "
        "Those who have finished cannot answer it and score 0 on it."
    )
    page = response.content.decode()
    assert f'name="version" value="{third.pk}"' in page and f'name="version" value="{fourth.pk}"' in page
    assert exam.items.count() == 2
    confirmed = client.post(url, {"version": [third.pk, fourth.pk], "points": "2", "confirm": "yes", "impact": _token(response)})
    assert confirmed.status_code == 302
    assert exam.items.count() == 4


def test_without_attempts_exercise_changes_save_at_once_as_before(client, exam):
    AssignmentAttempt.objects.all().delete()
    item = exam.items.get(position=0)
    third = published_version(source=product_yaml(slug="third"))
    _login(client)
    assert client.post(
        reverse("instructor:item_update", args=["attn", exam.slug, item.pk]),
        {"points": "2", "position": "1", "version": item.exercise_version_id},
    ).status_code == 302
    assert client.post(reverse("instructor:item_add", args=["attn", exam.slug]), {"version": third.pk, "points": "1"}).status_code == 302
    assert client.post(reverse("instructor:item_remove", args=["attn", exam.slug, item.pk])).status_code == 302
    assert sorted(exam.items.values_list("exercise_version__exercise__slug", "points")) == [("second", 1.0), ("third", 1.0)]


# --- Time limit and close date -----------------------------------------------------------


def test_a_shorter_time_limit_asks_first_naming_the_attempts_it_ends_and_shortens(client, exam):
    _login(client)
    url = reverse("instructor:assignment_edit", args=["attn", exam.slug])
    response = client.post(url, _settings(exam, time_limit_minutes="10"))
    assert response.status_code == 200
    assert _confirmation(response).endswith(
        "Shortening the time limit to 10 min ends 1 running attempt now and shortens 2 others."
    )
    exam.refresh_from_db()
    assert exam.time_limit_minutes == 15
    assert 'name="confirm" value="yes">Save anyway' in response.content.decode()

    assert client.post(url, _settings(exam, time_limit_minutes="10", confirm="yes", impact=_token(response))).status_code == 302
    exam.refresh_from_db()
    assert exam.time_limit_minutes == 10


def test_an_earlier_close_date_that_cuts_attempts_asks_first(client, exam):
    _login(client)
    closes = timezone.localtime(timezone.now() + timedelta(minutes=5)).replace(second=0, microsecond=0)
    url = reverse("instructor:assignment_edit", args=["attn", exam.slug])
    response = client.post(url, _settings(exam, closes_at=closes.strftime("%Y-%m-%dT%H:%M")))
    assert response.status_code == 200
    # r1 (6:20 left) and r2 (12 left) end earlier; r3 (2 left) ends before the close anyway.
    assert _confirmation(response).endswith(
        f"Moving the close date to {closes:%a} {closes.day} {closes:%b %Y}, {closes:%H:%M} {closes:%Z} "
        "shortens 2 running attempts."
    )
    exam.refresh_from_db()
    assert exam.closes_at is None


def test_a_longer_time_limit_or_other_settings_save_at_once_while_attempts_run(client, exam):
    _login(client)
    url = reverse("instructor:assignment_edit", args=["attn", exam.slug])
    assert client.post(url, _settings(exam, time_limit_minutes="20", title="Midterm")).status_code == 302
    exam.refresh_from_db()
    assert (exam.time_limit_minutes, exam.title) == (20, "Midterm")


def test_without_attempts_a_shorter_time_limit_saves_at_once(client, exam):
    AssignmentAttempt.objects.all().delete()
    _login(client)
    response = client.post(reverse("instructor:assignment_edit", args=["attn", exam.slug]), _settings(exam, time_limit_minutes="10"))
    assert response.status_code == 302
    exam.refresh_from_db()
    assert exam.time_limit_minutes == 10


def test_adding_a_pool_asks_first_and_adds_it_on_confirm(exam):
    """The pool-by-skill page added a pool to a started exam without asking."""
    from instructor import services, services_pools

    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb")]
    with pytest.raises(services.ConfirmationNeeded) as needed:
        services_pools.assignment_pool_add(
            assignment=exam, versions=versions, pool="extra", points=2.0, confirmed=False
        )
    assert needed.value.message == (
        "3 students are working on this exam now and 2 have finished. Adding the pool 'extra' (2 exercises, "
        "one given to each student) adds 2 points to their totals. Those who have finished cannot answer it "
        "and score 0 on it."
    )
    assert exam.items.count() == 2
    services_pools.assignment_pool_add(assignment=exam, versions=versions, pool="extra", points=2.0, confirmed=True)
    assert sorted(exam.items.values_list("pool", flat=True)) == ["", "", "extra", "extra"]
