"""A student's own limits, on a frozen clock: each limit an accommodation overrides, the
rule for extra time, the deadline (the clock's start for homework and exams, capped by the
close date), the countdown showing the student's own seconds, and every server-side check
(open, close, time up, late, attempts) deciding with the student's values inside the lock
that stores the answer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone
from types import SimpleNamespace
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from attnquiz.testing import CLOCK_START
from courses.models import AssignmentItem, AssignmentKind
from exams.models import Accommodation, AssignmentAttempt
from exams.selectors_accommodations import accommodated_time_limit_seconds, limits_apply
from exercises.selectors import assignment_clock, student_limits
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.models import Submission

START = CLOCK_START
UNIFORM = "[0.25, 0.25, 0.25, 0.25]"


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )


@pytest.fixture
def assignment(item):
    return item.assignment


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student3")


@pytest.fixture
def other_student(demo, django_user_model):
    return django_user_model.objects.get(username="student2")


def accommodate(assignment, student, **fields) -> Accommodation:
    return Accommodation.objects.create(assignment=assignment, student=student, **fields)


def assignment_set(assignment, **fields):
    for name, value in fields.items():
        setattr(assignment, name, value)
    assignment.save()
    return assignment


def submit(item, student, part="weights", answer=UNIFORM):
    variant = variant_get_or_create_for_item(item=item, student=student)
    return services.submission_create(variant=variant, student=student, part=part, raw_answer=answer)


def refusal(item, student, part="weights") -> str:
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(item, student, part)
    return refused.value.code


# ---------------------------------------------------------------------------
# The rule for extra time
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "limit, accommodation, seconds",
    [
        (10, None, 600),
        (None, None, None),
        (10, dict(time_factor=1.5), 900),
        (25, dict(time_factor=1.1), 1650),  # exact: a float product would round up to 1651
        (1, dict(time_factor=1.33), 80),  # 79.8 s rounded up to whole seconds
        (7, dict(time_factor=1.25), 525),
        (10, dict(extra_minutes=15), 1500),
        (10, dict(time_factor=1.5, extra_minutes=5), 1200),  # the factor first, then minutes
        (10, dict(time_limit_minutes=45, time_factor=2.0, extra_minutes=5), 2700),  # absolute
        (None, dict(time_limit_minutes=45), 2700),  # an absolute limit applies on its own
        (None, dict(time_factor=1.5, extra_minutes=5), None),  # extra time of nothing
        (10, dict(time_factor=None, extra_minutes=None, note="no time change"), 600),
    ],
)
def test_time_limit_with_extra_time(limit, accommodation, seconds):
    accommodation = Accommodation(**accommodation) if accommodation is not None else None
    assert accommodated_time_limit_seconds(limit_minutes=limit, accommodation=accommodation) == seconds


def _assignment(**fields):
    values = dict(
        opens_at=None, due_at=None, closes_at=None, time_limit_minutes=None, attempts_per_part=3
    )
    values.update(fields)
    return SimpleNamespace(**values)


def test_every_empty_field_keeps_the_assignment_value():
    assignment = _assignment(
        opens_at=START, due_at=START + timedelta(days=7), closes_at=START + timedelta(days=8),
        time_limit_minutes=30,
    )
    limits = limits_apply(assignment=assignment, accommodation=Accommodation(), started_at=START)
    assert (limits.opens_at, limits.due_at, limits.closes_at) == (
        START, START + timedelta(days=7), START + timedelta(days=8)
    )
    assert (limits.time_limit_seconds, limits.time_limit_minutes, limits.attempts_per_part) == (1800, 30, 3)
    assert (limits.started_at, limits.deadline) == (START, START + timedelta(minutes=30))


def test_each_field_of_an_accommodation_overrides_its_limit():
    assignment = _assignment(
        opens_at=START, due_at=START + timedelta(days=7), closes_at=START + timedelta(days=8),
        time_limit_minutes=30,
    )
    accommodation = Accommodation(
        opens_at=START - timedelta(days=1), due_at=START + timedelta(days=9),
        closes_at=START + timedelta(days=10), time_factor=1.5, attempts_per_part=0,
    )
    limits = limits_apply(assignment=assignment, accommodation=accommodation, started_at=START)
    assert (limits.opens_at, limits.due_at, limits.closes_at) == (
        START - timedelta(days=1), START + timedelta(days=9), START + timedelta(days=10)
    )
    assert (limits.time_limit_seconds, limits.time_limit_minutes) == (2700, 45)
    assert limits.attempts_per_part == 0  # 0 is unlimited, not "keep the assignment's"
    assert limits.accommodation is accommodation


def test_the_deadline_is_capped_by_the_students_close_date():
    assignment = _assignment(time_limit_minutes=60, closes_at=START + timedelta(minutes=40))
    limits = limits_apply(assignment=assignment, accommodation=None, started_at=START)
    assert limits.deadline == START + timedelta(minutes=40)
    later_close = Accommodation(closes_at=START + timedelta(hours=2))
    limits = limits_apply(assignment=assignment, accommodation=later_close, started_at=START)
    assert limits.deadline == START + timedelta(minutes=60)


def test_before_the_clock_starts_the_deadline_counts_from_now():
    assignment = _assignment(time_limit_minutes=10)
    limits = limits_apply(
        assignment=assignment, accommodation=Accommodation(extra_minutes=5), started_at=None,
        now=START + timedelta(hours=1),
    )
    assert (limits.started_at, limits.deadline) == (None, START + timedelta(hours=1, minutes=15))


def test_fractional_minutes_are_kept():
    limits = limits_apply(
        assignment=_assignment(time_limit_minutes=25), accommodation=Accommodation(time_factor=1.5),
        started_at=START,
    )
    assert (limits.time_limit_seconds, limits.time_limit_minutes) == (2250, 37.5)


# ---------------------------------------------------------------------------
# The clock's start: the first exercise opened (homework), the attempt (exam)
# ---------------------------------------------------------------------------


def test_homework_clock_starts_at_the_first_exercise_opened(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=10)
    accommodate(assignment, student, time_factor=1.5)
    clock.advance(minutes=3)
    variant_get_or_create_for_item(item=item, student=student)
    limits = student_limits(assignment=assignment, student=student)
    assert (limits.started_at, limits.deadline) == (
        START + timedelta(minutes=3), START + timedelta(minutes=18)
    )


def test_exam_clock_starts_at_the_attempt_not_the_first_exercise(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=10, kind=AssignmentKind.EXAM)
    accommodate(assignment, student, extra_minutes=20)
    variant_get_or_create_for_item(item=item, student=student)  # opened before the attempt
    assert student_limits(assignment=assignment, student=student).started_at is None
    clock.advance(minutes=5)
    AssignmentAttempt.objects.create(assignment=assignment, student=student, started_at=timezone.now())
    clock.advance(minutes=1)
    limits = student_limits(assignment=assignment, student=student)
    assert (limits.started_at, limits.deadline) == (
        START + timedelta(minutes=5), START + timedelta(minutes=35)
    )


def test_an_accommodation_is_the_students_own(assignment, student, other_student, clock):
    assignment_set(assignment, time_limit_minutes=10, attempts_per_part=3)
    accommodate(assignment, student, time_factor=2.0, attempts_per_part=6)
    mine = student_limits(assignment=assignment, student=student)
    theirs = student_limits(assignment=assignment, student=other_student)
    assert (mine.time_limit_seconds, mine.attempts_per_part) == (1200, 6)
    assert (theirs.time_limit_seconds, theirs.attempts_per_part, theirs.accommodation) == (600, 3, None)


# ---------------------------------------------------------------------------
# The countdown shows the student's own seconds
# ---------------------------------------------------------------------------


def test_countdown_shows_the_students_own_time(item, assignment, student, other_student, clock, client):
    assignment_set(assignment, time_limit_minutes=10)
    accommodate(assignment, student, time_factor=1.5)
    for user, seconds, text, limit_text in (
        (student, 900, "15:00", "15 minutes"), (other_student, 600, "10:00", "10 minutes"),
    ):
        client.force_login(user)
        page = client.get(reverse("exercise", args=[item.pk])).content.decode()
        assert f'data-countdown data-seconds-left="{seconds}"' in page
        assert f"<strong data-countdown-text>{text}</strong>" in page
        assert f"Time limit: {limit_text}." in page
    clock.advance(minutes=11)
    client.force_login(student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'data-countdown data-seconds-left="240"' in page
    assert page.count('class="answer-form"') == 2
    client.force_login(other_student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert "Your time for this assignment is up; answers are no longer accepted." in page
    assert 'class="answer-form"' not in page


def test_countdown_of_a_fractional_limit(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=25)
    accommodate(assignment, student, time_factor=1.5)
    variant_get_or_create_for_item(item=item, student=student)
    clock.advance(seconds=10)
    state = assignment_clock(assignment=assignment, student=student)
    assert (state["limit_minutes"], state["limit_text"], state["seconds_left"], state["minutes_left"]) == (
        37.5, "37 minutes 30 seconds", 2240, 38
    )


def test_overview_shows_the_students_own_limit(assignment, student, clock, client):
    assignment_set(assignment, time_limit_minutes=10)
    accommodate(assignment, student, extra_minutes=5)
    client.force_login(student)
    page = client.get(reverse("assignment", args=[assignment.course.slug, assignment.slug])).content.decode()
    assert "Time limit: 15 minutes." in page


# ---------------------------------------------------------------------------
# Every server-side check uses the student's own values
# ---------------------------------------------------------------------------


def test_earlier_opening_lets_only_that_student_answer(item, assignment, student, other_student, clock):
    assignment_set(assignment, opens_at=START + timedelta(hours=1))
    accommodate(assignment, student, opens_at=START - timedelta(minutes=1))
    assert submit(item, student).attempt == 1
    assert refusal(item, other_student) == "not_open"


def test_later_opening_holds_that_student_back(item, assignment, student, other_student, clock):
    accommodate(assignment, student, opens_at=START + timedelta(hours=1))
    assert refusal(item, student) == "not_open"
    assert submit(item, other_student).attempt == 1
    clock.advance(hours=1, seconds=1)
    assert submit(item, student).attempt == 1


def test_a_later_due_date_is_not_late_for_that_student(item, assignment, student, other_student, clock):
    assignment_set(assignment, due_at=START - timedelta(minutes=1))
    accommodate(assignment, student, due_at=START + timedelta(days=1))
    assert (submit(item, student).is_late, submit(item, other_student).is_late) == (False, True)


def test_an_earlier_due_date_makes_that_student_late(item, assignment, student, other_student, clock):
    assignment_set(assignment, due_at=START + timedelta(days=1))
    accommodate(assignment, student, due_at=START - timedelta(seconds=1))
    assert (submit(item, student).is_late, submit(item, other_student).is_late) == (True, False)


def test_a_later_close_date_keeps_it_open_for_that_student(item, assignment, student, other_student, clock):
    assignment_set(assignment, closes_at=START - timedelta(minutes=1))
    accommodate(assignment, student, closes_at=START + timedelta(minutes=1))
    assert submit(item, student).attempt == 1
    assert refusal(item, other_student) == "closed"
    clock.advance(minutes=1, seconds=1)
    assert refusal(item, student, part="output") == "closed"


@pytest.mark.parametrize(
    "fields, last_accepted_second",
    [
        (dict(time_factor=1.5), 15 * 60 - 1),
        (dict(extra_minutes=3), 13 * 60 - 1),
        (dict(time_limit_minutes=20), 20 * 60 - 1),
        (dict(time_factor=1.25, extra_minutes=1), 13 * 60 + 30 - 1),
    ],
)
def test_time_limit_overrides_move_the_moment_answers_stop(
    item, assignment, student, clock, fields, last_accepted_second
):
    assignment_set(assignment, time_limit_minutes=10)
    accommodate(assignment, student, **fields)
    variant_get_or_create_for_item(item=item, student=student)
    clock.advance(seconds=last_accepted_second)
    assert submit(item, student).attempt == 1
    clock.advance(seconds=1)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(item, student, part="output")
    assert refused.value.code == "time_up"
    assert Submission.objects.filter(student=student).count() == 1


def test_time_up_message_names_the_students_own_limit(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=25)
    accommodate(assignment, student, time_factor=1.5)
    variant_get_or_create_for_item(item=item, student=student)
    clock.advance(minutes=37, seconds=30)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(item, student)
    assert refused.value.message == "Your time on this assignment is up: its limit is 37 minutes 30 seconds."


def test_a_close_date_before_the_time_limit_ends_the_attempt_as_closed(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=60, closes_at=START + timedelta(minutes=30))
    variant_get_or_create_for_item(item=item, student=student)
    clock.advance(minutes=30)
    assert assignment_clock(assignment=assignment, student=student)["is_up"] is True
    assert refusal(item, student) == "closed"


@pytest.mark.parametrize("own_attempts, accepted", [(1, 1), (5, 5), (0, 8)])
def test_attempts_override(item, assignment, student, other_student, clock, own_attempts, accepted):
    assignment_set(assignment, attempts_per_part=3)
    accommodate(assignment, student, attempts_per_part=own_attempts)
    codes = []
    for n in range(8):
        try:  # each answer new: the same one again is refused as unchanged
            submit(item, student, answer=f"[0.25, 0.25, 0.25, {0.25 + n / 10_000:.4f}]")
            codes.append("stored")
        except services.SubmissionRefused as refused:
            codes.append(refused.code)
    assert codes == ["stored"] * accepted + ["no_attempts"] * (8 - accepted)
    assert Submission.objects.filter(student=student).count() == accepted
    assert Submission.objects.filter(student=other_student).count() == 0


def test_attempts_left_on_the_page_are_the_students_own(item, assignment, student, clock, client):
    assignment_set(assignment, attempts_per_part=3)
    accommodate(assignment, student, attempts_per_part=7)
    client.force_login(student)
    submit(item, student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'data-attempts-left>6</span> of 7' in page


# ---------------------------------------------------------------------------
# The deadline is decided inside the lock that stores the answer
# ---------------------------------------------------------------------------


def _clock_moves_at_the_lock(clock, **delta):
    """Move the clock on while submission_create holds the variant's row lock (when it
    counts the part's attempts), as if the answer had waited for the lock that long."""
    count = services._part_attempts

    def waited(**kwargs):
        clock.advance(**delta)
        return count(**kwargs)

    return mock.patch.object(services, "_part_attempts", side_effect=waited)


def test_a_time_limit_running_out_while_waiting_for_the_lock_refuses(item, assignment, student, clock):
    assignment_set(assignment, time_limit_minutes=10)
    accommodate(assignment, student, extra_minutes=2)
    variant_get_or_create_for_item(item=item, student=student)
    clock.advance(minutes=11, seconds=59)  # before the lock: one second left
    with _clock_moves_at_the_lock(clock, seconds=1):
        with pytest.raises(services.SubmissionRefused) as refused:
            submit(item, student)
    assert refused.value.code == "time_up"
    assert Submission.objects.count() == 0


def test_a_close_date_passing_while_waiting_for_the_lock_refuses(item, assignment, student, clock):
    accommodate(assignment, student, closes_at=START + timedelta(seconds=1))
    with _clock_moves_at_the_lock(clock, seconds=2):
        with pytest.raises(services.SubmissionRefused) as refused:
            submit(item, student)
    assert refused.value.code == "closed"
    assert Submission.objects.count() == 0


def test_lateness_is_decided_at_the_lock(item, assignment, student, clock):
    accommodate(assignment, student, due_at=START + timedelta(seconds=1))
    with _clock_moves_at_the_lock(clock, seconds=2):
        submission = submit(item, student)
    assert (submission.is_late, submission.queued_at) == (True, START + timedelta(seconds=2))


# ---------------------------------------------------------------------------
# The overview, the dashboard, the API and the result fragment show the student's own
# ---------------------------------------------------------------------------


def test_overview_and_dashboard_show_the_students_own_dates_and_attempts(
    assignment, student, other_student, clock, client
):
    assignment_set(
        assignment, due_at=datetime(2026, 3, 9, 9, 0, tzinfo=dt_timezone.utc), attempts_per_part=3
    )
    accommodate(
        assignment, student, due_at=datetime(2026, 3, 11, 17, 30, tzinfo=dt_timezone.utc),
        attempts_per_part=6,
    )
    overview_url = reverse("assignment", args=[assignment.course.slug, assignment.slug])
    client.force_login(student)
    overview = client.get(overview_url).content.decode()
    assert "due Wed 11 Mar 2026, 17:30 UTC · 6 attempts per part" in overview  # labelled with its zone
    assert "These are your own dates, time and attempts for this assignment" in overview
    assert "6 per part" in overview  # each exercise's attempts left
    assert "Wed 11 Mar 2026, 17:30" in client.get(reverse("dashboard")).content.decode()
    client.force_login(other_student)
    overview = client.get(overview_url).content.decode()
    assert "due Mon 9 Mar 2026, 09:00 UTC · 3 attempts per part" in overview
    assert "These are your own dates" not in overview
    assert "Mon 9 Mar 2026, 09:00" in client.get(reverse("dashboard")).content.decode()


def test_api_shows_the_students_own_limits(assignment, student, other_student, clock, client):
    from api.services import api_token_create
    from api.models import TokenScope

    assignment_set(assignment, time_limit_minutes=25, closes_at=START + timedelta(days=3))
    accommodate(assignment, student, time_factor=1.5, closes_at=START + timedelta(days=4), attempts_per_part=9)
    url = f"/api/v1/courses/{assignment.course.slug}/assignments/{assignment.slug}/"
    rows = {}
    for user in (student, other_student):
        secret = api_token_create(user=user, name="t", scope=TokenScope.READ, lifetime_days=7)[1]
        body = client.get(url, HTTP_AUTHORIZATION=f"Bearer {secret}").json()
        rows[user.username] = {
            key: body[key] for key in ("closes_at", "attempts_per_part", "time_limit_minutes", "time_limit_seconds")
        }
        listed = client.get(
            f"/api/v1/courses/{assignment.course.slug}/assignments/", HTTP_AUTHORIZATION=f"Bearer {secret}"
        ).json()
        assert [row["time_limit_seconds"] for row in listed if row["slug"] == assignment.slug] == [
            body["time_limit_seconds"]
        ]
    assert rows == {
        student.username: {
            "closes_at": "2026-03-06T09:00:00Z", "attempts_per_part": 9,
            "time_limit_minutes": 38, "time_limit_seconds": 2250,
        },
        other_student.username: {
            "closes_at": "2026-03-05T09:00:00Z", "attempts_per_part": 5,
            "time_limit_minutes": 25, "time_limit_seconds": 1500,
        },
    }


def test_result_fragment_counts_the_students_own_attempts(
    item, assignment, student, clock, client, django_capture_on_commit_callbacks
):
    assignment_set(assignment, attempts_per_part=2)
    accommodate(assignment, student, attempts_per_part=4)
    with django_capture_on_commit_callbacks(execute=True):
        submission = submit(item, student)
    client.force_login(student)
    fragment = client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "attempt 1; 3 attempts left" in fragment


def test_solutions_after_the_due_date_wait_for_the_students_own(
    item, assignment, student, other_student, clock, client
):
    from courses.models import SolutionPolicy

    assignment_set(assignment, due_at=START - timedelta(hours=1), solution_policy=SolutionPolicy.AFTER_DUE)
    accommodate(assignment, student, due_at=START + timedelta(days=2))
    pages = {}
    for user in (student, other_student):
        client.force_login(user)
        pages[user.username] = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert pages[other_student.username].count("<summary>Worked solution</summary>") == 2
    assert "Worked solution" not in pages[student.username]
    clock.advance(days=2, seconds=1)
    client.force_login(student)
    assert client.get(reverse("exercise", args=[item.pk])).content.decode().count(
        "<summary>Worked solution</summary>"
    ) == 2
