"""Extending a student's time after their attempt ended: reopened at once when the review
has shown them nothing that tells answers; asked first, in numbers, when it has shown them
worked solutions, verdicts or scores (nothing saved until confirmed, a confirmation of other
numbers asks again); an extension too short to reopen says so and the least that does; an
accommodation edit or a longer limit never reopens an attempt the closer had not recorded
yet."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from attnquiz.confirmations import ConfirmationNeeded
from attnquiz.testing import CLOCK_START
from authoring.tests.factories import (
    assignment_create, people_create, product_yaml, published_version, submission_add, variant_for,
)
from courses.models import AssignmentKind, ReleaseMoment, SolutionPolicy
from exams import services as exam_services
from exams import services_accommodations as services
from exams.models import Accommodation, AccommodationChange, AssignmentAttempt, AttemptCloseReason
from exams.selectors import student_window
from exams.selectors_reopen import review_seen_phrases
from exams.window import POLICY_FIELDS
from grading.models import SubmissionStatus
from instructor import services as instructor_services

START = CLOCK_START  # 09:00 UTC
SEEN = (
    "sam's attempt ended at 09:01 UTC and since then the review policy has shown them the worked "
    "solutions and their verdicts and scores on 1 answer; reopening lets them answer with what they saw."
)


@pytest.fixture
def people(db):
    return people_create()


def exam_with(people, *, moment=ReleaseMoment.AFTER_FINISH, solutions=SolutionPolicy.ALWAYS, minutes=1, **fields):
    """A ``minutes``-minute exam whose review fields all say ``moment``."""
    policy = {name: moment for _, name in POLICY_FIELDS}
    return assignment_create(
        people.course, [published_version(source=product_yaml())], kind=AssignmentKind.EXAM,
        time_limit_minutes=minutes, solution_policy=solutions, **{**policy, **fields},
    )


def sit(exam, student, clock, *, answers=1):
    """Start at 09:00, answer part "product" ``answers`` times (graded), let the clock run
    out and the closer come by (the attempt ends at 09:01)."""
    attempt = AssignmentAttempt.objects.create(assignment=exam, student=student, started_at=clock.now)
    variant = variant_for(exam.items.get(), student, params={"a": 3, "b": 4})
    clock.advance(seconds=30)
    for _ in range(answers):
        submission_add(variant, "product", "12", awarded=1.0)
    clock.advance(minutes=3)
    exam_services.attempts_close_expired()
    attempt.refresh_from_db()
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=1), AttemptCloseReason.TIME_UP)
    return attempt, variant


def extend(exam, people, minutes=15, confirmed=False):
    return services.accommodation_extend(
        assignment=exam, student=people.student, minutes=minutes, actor=people.instructor, confirmed=confirmed
    )


def test_an_attempt_whose_review_showed_nothing_reopens_at_once(people, clock):
    exam = exam_with(people, moment=ReleaseMoment.ON_RELEASE)  # not released: nothing shown yet
    attempt, _ = sit(exam, people.student, clock)
    extension = extend(exam, people)
    attempt.refresh_from_db()
    assert (extension.reopened, extension.deadline) == (True, START + timedelta(minutes=16))
    assert (attempt.finished_at, attempt.close_reason) == (None, "")
    assert AccommodationChange.objects.get().detail == "15 minutes more; the attempt closed by the clock is open again"
    assert student_window(assignment=exam, student=people.student).takes_answers


def test_an_attempt_whose_review_showed_solutions_asks_and_saves_nothing(people, clock):
    exam = exam_with(people)
    attempt, _ = sit(exam, people.student, clock)
    with pytest.raises(ConfirmationNeeded) as asked:
        extend(exam, people)
    assert (asked.value.message, asked.value.stale) == (SEEN, False)
    attempt.refresh_from_db()
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=1), AttemptCloseReason.TIME_UP)
    assert not Accommodation.objects.exists()
    assert not AccommodationChange.objects.exists()
    assert student_window(assignment=exam, student=people.student).refusal[0] == "attempt_finished"


def test_a_confirmed_reopening_reopens_and_logs_what_they_had_seen(people, clock):
    exam = exam_with(people)
    attempt, _ = sit(exam, people.student, clock)
    with pytest.raises(ConfirmationNeeded) as asked:
        extend(exam, people)
    extension = extend(exam, people, confirmed=asked.value.token)
    attempt.refresh_from_db()
    assert (extension.reopened, attempt.finished_at, Accommodation.objects.get().extra_minutes) == (True, None, 15)
    assert AccommodationChange.objects.get().detail == (
        f"15 minutes more; the attempt closed by the clock is open again (confirmed: {SEEN})"
    )


def test_a_confirmation_of_other_numbers_asks_again(people, clock):
    exam = exam_with(people)
    attempt, variant = sit(exam, people.student, clock)
    pending = submission_add(variant, "total", "7", awarded=None, status=SubmissionStatus.QUEUED)
    with pytest.raises(ConfirmationNeeded) as asked:
        extend(exam, people)
    assert "their verdicts and scores on 1 answer;" in asked.value.message
    # The answer sent before the end is graded meanwhile: they have seen one verdict more.
    pending.status, pending.awarded, pending.score, pending.correct = SubmissionStatus.GRADED, 1.0, 1.0, True
    pending.save()
    with pytest.raises(ConfirmationNeeded) as again:
        extend(exam, people, confirmed=asked.value.token)
    assert again.value.stale is True
    assert "their verdicts and scores on 2 answers;" in again.value.message
    # Nor does a confirmation of 15 minutes confirm 600 (another change: asked plainly, the
    # numbers of the 600 minutes were never shown), nor a token we never signed.
    with pytest.raises(ConfirmationNeeded) as other_minutes:
        extend(exam, people, minutes=600, confirmed=again.value.token)
    assert other_minutes.value.stale is False
    with pytest.raises(ConfirmationNeeded) as forged:
        extend(exam, people, confirmed="made-up:token")
    assert forged.value.stale is False
    attempt.refresh_from_db()
    assert attempt.close_reason == AttemptCloseReason.TIME_UP
    assert not Accommodation.objects.exists() and not AccommodationChange.objects.exists()
    extend(exam, people, confirmed=again.value.token)
    attempt.refresh_from_db()
    assert attempt.finished_at is None


def test_an_attempt_the_closer_had_not_recorded_yet_asks_too(people, clock):
    exam = exam_with(people)
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=clock.now)
    variant = variant_for(exam.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", "12", awarded=1.0)
    clock.advance(minutes=3)  # past the deadline, before the closer came by
    with pytest.raises(ConfirmationNeeded) as asked:
        extend(exam, people)
    assert asked.value.message == SEEN
    assert extend(exam, people, confirmed=asked.value.token).reopened is True


@pytest.mark.parametrize("moment, policy, expected", [
    # Shown while the attempt runs: reopening tells them nothing new.
    (ReleaseMoment.DURING, SolutionPolicy.ALWAYS, []),
    (ReleaseMoment.NEVER, SolutionPolicy.ALWAYS, []),
    (ReleaseMoment.AFTER_FINISH, SolutionPolicy.NEVER, ["their verdicts and scores on 3 answers"]),
    (ReleaseMoment.AFTER_FINISH, SolutionPolicy.AFTER_SOLVED,
     ["the worked solutions of 1 part", "their verdicts and scores on 3 answers"]),
    # "Later" begins 2 minutes after the end (09:03): at 09:02 nothing yet.
    (ReleaseMoment.LATER, SolutionPolicy.ALWAYS, []),
])
def test_what_the_review_has_shown_in_numbers(people, clock, moment, policy, expected):
    exam = exam_with(people, moment=moment, solutions=policy)
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=clock.now)
    variant = variant_for(exam.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", "11", awarded=0.0)
    submission_add(variant, "product", "12", awarded=1.0)  # solved: its solution shows
    submission_add(variant, "total", "8", awarded=0.0)
    submission_add(variant, "total", "9", awarded=None, status=SubmissionStatus.COULD_NOT_GRADE)  # no verdict
    AssignmentAttempt.objects.filter(student=people.student).update(
        finished_at=START + timedelta(minutes=1), close_reason=AttemptCloseReason.TIME_UP
    )
    clock.advance(minutes=2)
    window = student_window(assignment=exam, student=people.student)
    assert review_seen_phrases(assignment=exam, student=people.student, window=window) == expected


# ---------------------------------------------------------------------------
# An extension too short to reopen (issue: it said "2 minutes more" and did nothing)
# ---------------------------------------------------------------------------


@pytest.fixture
def timed_out(people, clock):
    """A 10-minute exam whose attempt ended by the clock at 09:10; now 09:19."""
    exam = exam_with(people, moment=ReleaseMoment.ON_RELEASE, minutes=10)
    attempt = AssignmentAttempt.objects.create(
        assignment=exam, student=people.student, started_at=START,
        finished_at=START + timedelta(minutes=10), close_reason=AttemptCloseReason.TIME_UP,
    )
    clock.advance(minutes=19)
    return exam, attempt


def test_too_little_time_says_so_and_the_least_that_reopens(client, people, timed_out):
    exam, attempt = timed_out
    client.force_login(people.instructor)
    response = client.post(
        reverse("proctor:extend", args=["attn", exam.slug]), {"student": people.student.pk, "minutes": "2"},
        follow=True,
    )
    assert (
        "With 2 minutes more, sam&#x27;s time would end at 09:12 UTC, which has passed: their attempt stays "
        "finished and nothing was changed. Give at least 10 minutes to reopen it."
    ) in response.content.decode()
    assert "has 2 minutes more" not in response.content.decode()
    attempt.refresh_from_db()
    assert attempt.close_reason == AttemptCloseReason.TIME_UP
    assert not Accommodation.objects.exists() and not AccommodationChange.objects.exists()


def test_the_least_named_is_exactly_what_reopens(people, timed_out):
    exam, attempt = timed_out
    with pytest.raises(services.AccommodationRefused) as refused:
        extend(exam, people, minutes=9)  # 09:19 exactly: over
    assert refused.value.message.endswith("would end at 09:19 UTC, which has passed: their attempt stays "
                                          "finished and nothing was changed. Give at least 10 minutes to reopen it.")
    extension = extend(exam, people, minutes=10)
    assert (extension.reopened, extension.deadline) == (True, START + timedelta(minutes=20))


def test_more_than_one_extension_can_give_is_said(people, timed_out, clock):
    exam, _ = timed_out
    clock.advance(hours=11)  # 20:19: 670 minutes past the end
    with pytest.raises(services.AccommodationRefused) as refused:
        extend(exam, people, minutes=600)
    assert refused.value.message.endswith(
        "Reopening it takes at least 670 minutes, more than one extension gives (600)."
    )


@pytest.mark.parametrize("reason, message", [
    (AttemptCloseReason.FINISHED,
     "sam finished their attempt at 09:03 UTC: more time does not reopen it, so nothing was changed."),
    (AttemptCloseReason.INSTRUCTOR,
     "An instructor closed sam's attempt at 09:03 UTC: more time does not reopen it, so nothing was changed."),
])
def test_an_attempt_the_student_or_an_instructor_ended_is_not_extended(people, clock, reason, message):
    exam = exam_with(people, minutes=10)
    AssignmentAttempt.objects.create(
        assignment=exam, student=people.student, started_at=START, finished_at=START + timedelta(minutes=3),
        close_reason=reason,
    )
    clock.advance(minutes=4)
    with pytest.raises(services.AccommodationRefused) as refused:
        extend(exam, people, minutes=30)
    assert refused.value.message == message
    assert not Accommodation.objects.exists()


def test_the_messages_of_an_extension_done(client, people, clock):
    exam = exam_with(people, moment=ReleaseMoment.ON_RELEASE, minutes=10)
    client.force_login(people.instructor)
    url = reverse("proctor:extend", args=["attn", exam.slug])
    response = client.post(url, {"student": people.student2.pk, "minutes": "5"}, follow=True)
    assert "sue has 5 minutes more.</" in response.content.decode()  # not started: no end yet
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=START)
    clock.advance(minutes=4)
    response = client.post(url, {"student": people.student.pk, "minutes": "5"}, follow=True)
    assert "sam has 5 minutes more. Their time now ends at 09:15 UTC." in response.content.decode()
    clock.advance(minutes=12)  # 09:16: over, not recorded yet
    response = client.post(url, {"student": people.student.pk, "minutes": "5"}, follow=True)
    assert "sam has 5 minutes more. Their attempt is open again until 09:20 UTC." in response.content.decode()


# ---------------------------------------------------------------------------
# The proctor page asks, and its button confirms
# ---------------------------------------------------------------------------


def test_the_proctor_page_asks_then_reopens_on_confirm(client, people, clock):
    exam = exam_with(people)
    attempt, _ = sit(exam, people.student, clock)
    client.force_login(people.instructor)
    url = reverse("proctor:extend", args=["attn", exam.slug])
    response = client.post(url, {"student": people.student.pk, "minutes": "15"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Nothing is changed yet.</strong> " + SEEN.replace("'", "&#x27;") in page
    assert f'<input type="hidden" name="student" value="{people.student.pk}">' in page
    assert '<input type="hidden" name="minutes" value="15">' in page
    assert '<button type="submit" name="confirm" value="yes">Extend and reopen anyway</button>' in page
    assert "open again" not in page
    attempt.refresh_from_db()
    assert attempt.finished_at is not None and not Accommodation.objects.exists()
    token = page.split('name="impact" value="')[1].split('"')[0]
    response = client.post(url, {"student": people.student.pk, "minutes": "15", "confirm": "yes", "impact": token},
                           follow=True)
    assert "sam has 15 minutes more. Their attempt is open again until 09:16 UTC." in response.content.decode()
    attempt.refresh_from_db()
    assert attempt.finished_at is None


# ---------------------------------------------------------------------------
# Other ways more time reaches an ended attempt: they never reopen it
# ---------------------------------------------------------------------------


def _over_not_recorded(people, clock):
    exam = exam_with(people, minutes=10)
    attempt = AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=START)
    clock.advance(minutes=12)  # over at 09:10; the closer has not come by
    return exam, attempt


def test_an_accommodation_edit_ends_an_attempt_that_is_over_and_says_it_stays_finished(people, clock):
    exam, attempt = _over_not_recorded(people, clock)
    values = dict.fromkeys(services.FIELDS)
    values["extra_minutes"] = 30
    outcome, detail = services.accommodation_set(
        assignment=exam, student=people.student, values=values, actor=people.instructor
    )
    attempt.refresh_from_db()
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=10), AttemptCloseReason.TIME_UP)
    assert (outcome, detail) == (
        "add", "extra minutes — → 30; their attempt ended at 09:10 UTC and stays finished "
        "(extend their time on the proctor page to reopen it)",
    )
    assert not student_window(assignment=exam, student=people.student).takes_answers


def test_a_course_wide_accommodation_ends_an_attempt_that_is_over(people, clock):
    exam, attempt = _over_not_recorded(people, clock)
    services.course_accommodation_set(
        course=people.course, student=people.student, values={"time_factor": 2.0}, actor=people.instructor
    )
    attempt.refresh_from_db()
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=10), AttemptCloseReason.TIME_UP)


def test_a_longer_time_limit_does_not_reopen_an_attempt_that_is_over(people, clock):
    exam, attempt = _over_not_recorded(people, clock)
    running = AssignmentAttempt.objects.create(
        assignment=exam, student=people.student2, started_at=START + timedelta(minutes=5)
    )
    instructor_services.assignment_update(assignment=exam, time_limit_minutes=30)
    attempt.refresh_from_db()
    running.refresh_from_db()
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=10), AttemptCloseReason.TIME_UP)
    assert running.finished_at is None  # still within its time: it gets the longer limit
    assert student_window(assignment=exam, student=people.student2).limits.deadline == START + timedelta(minutes=35)


def test_diagnoses_and_correct_weights_are_counted_on_the_parts_that_show_them(exam, item, student, clock):
    """The demo exam (conftest): its worked example's weights and output parts draw the
    correct weights beside a graded answer's heatmap."""
    from courses.models import ReleaseMoment as Moment
    from exams.tests.conftest import exam_policy
    from exercises.services import variant_create_for_item

    exam_policy(
        exam, show_correctness=Moment.DURING, show_score=Moment.DURING,
        show_misconception=Moment.AFTER_FINISH, show_heatmap=Moment.AFTER_FINISH,
    )
    AssignmentAttempt.objects.create(assignment=exam, student=student, started_at=clock.now)
    variant = variant_create_for_item(item=item, student=student)
    submission_add(variant, "weights", "[0.25, 0.25, 0.25, 0.25]", awarded=0.0, misconception="no_scaling")
    submission_add(variant, "weights", "[0.3, 0.2, 0.25, 0.25]", awarded=0.0)
    submission_add(variant, "output", "[1, 2]", awarded=0.0, misconception="no_scaling")
    AssignmentAttempt.objects.filter(student=student).update(
        finished_at=clock.now + timedelta(minutes=5), close_reason=AttemptCloseReason.TIME_UP
    )
    clock.advance(minutes=6)
    window = student_window(assignment=exam, student=student)
    # Verdicts and scores showed while the attempt ran: reopening shows them nothing new.
    assert review_seen_phrases(assignment=exam, student=student, window=window) == [
        "the diagnoses of 2 mistakes", "the correct attention weights of 2 parts",
    ]
