"""An exam's attempt: Start, answers only inside it, Finish (with its summary), and the
periodic closer at the time limit or close date — on a frozen clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from exams import services, tasks
from exams.models import AssignmentAttempt, AttemptCloseReason
from exercises.services import variant_get_or_create_for_item
from grading import services as grading_services
from grading.models import Submission
from lti.selectors import assignment_score

from .conftest import START, UNIFORM, correct


def submit(variant, student, part="weights", answer=UNIFORM):
    return grading_services.submission_create(
        variant=variant, student=student, part=part, raw_answer=answer
    )


def refusal(variant, student, part="weights"):
    with pytest.raises(grading_services.SubmissionRefused) as refused:
        submit(variant, student, part)
    return refused.value.code, refused.value.message


def test_start_is_once_and_starts_the_clock_now(exam, student, clock):
    attempt = services.attempt_start(assignment=exam, student=student)
    assert (attempt.started_at, attempt.finished_at, attempt.close_reason) == (START, None, "")
    clock.advance(minutes=5)
    again = services.attempt_start(assignment=exam, student=student)
    assert (again.pk, again.started_at) == (attempt.pk, START)
    assert AssignmentAttempt.objects.count() == 1


@pytest.mark.parametrize(
    "change, code, message",
    [
        ({"kind": "homework"}, "not_exam", "This assignment has no attempt to start."),
        ({"opens_at": START + timedelta(seconds=1)}, "not_open", "This exam is not open yet."),
        ({"closes_at": START}, "closed", "This exam is closed."),
    ],
)
def test_start_is_refused_outside_the_exam(exam, student, clock, change, code, message):
    for field, value in change.items():
        setattr(exam, field, value)
    exam.save()
    with pytest.raises(services.ExamRefused) as refused:
        services.attempt_start(assignment=exam, student=student)
    assert (refused.value.code, refused.value.message) == (code, message)
    assert not AssignmentAttempt.objects.exists()


def test_answers_only_inside_the_open_attempt(exam, item, student, clock, django_capture_on_commit_callbacks):
    variant = variant_get_or_create_for_item(item=item, student=student)
    assert refusal(variant, student) == (
        "not_started", "Start the exam on its assignment page before answering."
    )
    services.attempt_start(assignment=exam, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        assert submit(variant, student).attempt == 1
    services.attempt_finish(assignment=exam, student=student)
    assert refusal(variant, student, part="output") == (
        "attempt_finished",
        "Your attempt is finished: it takes no more answers. The answers you saved count.",
    )
    assert list(variant.submissions.values_list("part", "attempt")) == [("weights", 1)]


def test_a_solved_part_takes_another_answer_while_correctness_is_hidden(
    exam, item, student, clock, django_capture_on_commit_callbacks
):
    """"Already solved" would give the verdict away; the best answer still counts."""
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submit(variant, student, answer=correct(variant, "weights"))
        assert submit(variant, student).attempt == 2
    assert sorted(variant.submissions.values_list("attempt", "correct")) == [(1, True), (2, False)]
    exam.grades_released_at = clock.now
    exam.save()
    item.assignment.refresh_from_db()  # as the next request reads it
    # A release does not reach the running attempt: "solved" would still tell.
    assert submit(variant, student, answer="[0.25, 0.25, 0.25, 0.2501]").attempt == 3


def test_finish_twice_is_one_finish_and_a_closed_attempt_is_not_finished_again(exam, student, clock):
    services.attempt_start(assignment=exam, student=student)
    clock.advance(minutes=3)
    first = services.attempt_finish(assignment=exam, student=student)
    clock.advance(minutes=1)
    second = services.attempt_finish(assignment=exam, student=student)
    assert (second.finished_at, second.close_reason) == (START + timedelta(minutes=3), "finished")
    AssignmentAttempt.objects.filter(pk=first.pk).update(close_reason=AttemptCloseReason.TIME_UP)
    with pytest.raises(services.ExamRefused) as refused:
        services.attempt_finish(assignment=exam, student=student)
    assert refused.value.message == (
        "This attempt was already closed (closed when the time limit ran out)."
    )


def test_the_closer_ends_attempts_at_their_time_limit_and_their_answers_count(
    exam, item, student, other_student, clock, django_capture_on_commit_callbacks
):
    exam.time_limit_minutes = 10
    exam.save()
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submit(variant, student, answer=correct(variant, "weights"))
    clock.advance(minutes=4)
    services.attempt_start(assignment=exam, student=other_student)
    variant_get_or_create_for_item(item=item, student=other_student)
    clock.advance(minutes=5, seconds=59)  # 9:59 after the first start
    # Neither attempt is over, and neither is even read: both started less than 10 minutes ago.
    assert tasks.close_expired_attempts() == {"checked": 0, "time_up": 0, "closed": 0}
    clock.advance(seconds=1)
    # Only the first attempt's 10 minutes are up: the other is not read.
    assert tasks.close_expired_attempts() == {"checked": 1, "time_up": 1, "closed": 0}
    closed = AssignmentAttempt.objects.get(student=student)
    assert (closed.finished_at, closed.close_reason) == (START + timedelta(minutes=10), "time_up")
    assert AssignmentAttempt.objects.get(student=other_student).finished_at is None
    # Idempotent: a second run (or a duplicate delivery) changes nothing.
    assert tasks.close_expired_attempts() == {"checked": 0, "time_up": 0, "closed": 0}
    clock.advance(minutes=4)  # the other attempt's 10 minutes
    assert tasks.close_expired_attempts() == {"checked": 1, "time_up": 1, "closed": 0}
    assert AssignmentAttempt.objects.get(student=other_student).finished_at == START + timedelta(minutes=14)
    # Refused (the time check and the closed attempt both say no; which speaks first is
    # the order of the checks), and nothing stored.
    assert refusal(variant, student, part="output")[0] in ("time_up", "attempt_finished")
    assert variant.submissions.count() == 1
    # The answer stored before the end counts: half the exercise's parts, solved.
    assert Submission.objects.get(student=student).awarded == 1.0
    assert assignment_score(assignment=exam, student=student).earned == pytest.approx(
        item.points * 0.5
    )


def test_the_closer_ends_attempts_at_the_close_date(exam, student, clock):
    exam.time_limit_minutes = 60
    exam.closes_at = START + timedelta(minutes=30)
    exam.save()
    services.attempt_start(assignment=exam, student=student)
    clock.advance(minutes=45)
    assert tasks.close_expired_attempts() == {"checked": 1, "time_up": 0, "closed": 1}
    attempt = AssignmentAttempt.objects.get(student=student)
    assert (attempt.finished_at, attempt.close_reason) == (exam.closes_at, "closed")


def test_the_closer_works_in_bounded_batches(exam, demo, clock, django_user_model):
    exam.time_limit_minutes = 1
    exam.save()
    for username in ("student1", "student2", "student3"):
        services.attempt_start(assignment=exam, student=django_user_model.objects.get(username=username))
    clock.advance(minutes=2)
    assert services.attempts_close_expired(batch_size=2, max_batches=1) == {
        "checked": 2, "time_up": 2, "closed": 0,
    }
    assert services.attempts_close_expired(batch_size=2, max_batches=1) == {
        "checked": 1, "time_up": 1, "closed": 0,
    }


def test_the_finish_page_lists_unanswered_parts_then_finishes(
    client, exam, item, student, clock, django_capture_on_commit_callbacks
):
    client.force_login(student)
    url = reverse("exams:finish", args=[exam.course.slug, exam.slug])
    assert client.get(url).status_code == 302  # not started: back to the assignment page
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submit(variant, student)
    page = client.get(url).content.decode()
    total = sum(
        len(i.exercise_version.spec["parts"]) for i in exam.items.select_related("exercise_version")
    )
    assert f"{total - 1} of {total} parts not answered yet" in page
    assert f">{item.exercise_version.title}</a>: part (b)</li>" in page  # the output, named as people see it
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"] == reverse("assignment", args=[exam.course.slug, exam.slug])
    attempt = AssignmentAttempt.objects.get(student=student)
    assert (attempt.finished_at, attempt.close_reason) == (START, "finished")
    assert "Your attempt is finished" in client.get(reverse("exercise", args=[item.pk])).content.decode()


def test_the_exercise_page_of_an_exam_opens_after_start(client, exam, item, student, clock):
    client.force_login(student)
    assignment_url = reverse("assignment", args=[exam.course.slug, exam.slug])
    response = client.get(reverse("exercise", args=[item.pk]))
    assert (response.status_code, response["Location"]) == (302, assignment_url)
    page = client.get(assignment_url).content.decode()
    assert "Start the exam" in page and f'href="{reverse("exercise", args=[item.pk])}"' not in page
    response = client.post(reverse("exams:start", args=[exam.course.slug, exam.slug]))
    assert (response.status_code, response["Location"]) == (302, assignment_url)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'id="form-weights"' in page and "finish your attempt" in page
    assert "practice_start" not in page and "Practise with new numbers" not in page


def test_finishing_after_the_time_ran_out_records_the_clock_not_the_click(exam, student, clock):
    exam.time_limit_minutes = 10
    exam.save()
    services.attempt_start(assignment=exam, student=student)
    clock.advance(minutes=12)  # the closer has not come by yet
    with pytest.raises(services.ExamRefused) as refused:
        services.attempt_finish(assignment=exam, student=student)
    assert refused.value.code == "attempt_finished"
    attempt = AssignmentAttempt.objects.get(student=student)
    assert (attempt.finished_at, attempt.close_reason) == (START + timedelta(minutes=10), "time_up")


def test_the_closer_reads_each_students_own_limit_with_its_batch(
    exam, demo, clock, django_user_model, django_assert_num_queries
):
    from exams.models import Accommodation

    exam.time_limit_minutes = 10
    exam.save()
    students = [django_user_model.objects.get(username=name) for name in ("student1", "student2", "student3")]
    for student in students:
        services.attempt_start(assignment=exam, student=student)
    Accommodation.objects.create(assignment=exam, student=students[1], time_factor=1.5)
    Accommodation.objects.create(assignment=exam, student=students[2], extra_minutes=3)
    clock.advance(minutes=12)
    # The exams with open attempts, the batch (accommodations joined in), one close, the empty batch.
    with django_assert_num_queries(4):
        assert services.attempts_close_expired() == {"checked": 3, "time_up": 1, "closed": 0}
    clock.advance(minutes=1)  # 13 minutes: student3's 10 + 3 are up, student2's 15 are not
    assert services.attempts_close_expired() == {"checked": 2, "time_up": 1, "closed": 0}
    ends = dict(AssignmentAttempt.objects.values_list("student__username", "finished_at"))
    assert ends == {
        "student1": START + timedelta(minutes=10),
        "student2": None,
        "student3": START + timedelta(minutes=13),
    }


def test_the_staff_preview_an_exams_exercise_without_an_attempt(client, exam, item, demo, django_user_model, clock):
    client.force_login(django_user_model.objects.get(username="ta"))
    page = client.get(reverse("exercise", args=[item.pk]))
    assert page.status_code == 200
    assert not AssignmentAttempt.objects.exists()  # looking starts no clock


def test_the_closer_reads_only_attempts_that_can_end_by_themselves(exam, demo, clock, django_user_model):
    """Without a time limit or close date an attempt runs until Finish: the closer never
    reads it, so attempts left open on such exams cost its sweep nothing."""
    from exams.models import Accommodation, CourseAccommodation

    exam.time_limit_minutes, exam.closes_at = None, None
    exam.save()
    students = [django_user_model.objects.get(username=name) for name in ("student1", "student2", "student3")]
    for student in students:
        services.attempt_start(assignment=exam, student=student)
    CourseAccommodation.objects.create(course=exam.course, student=students[1], time_factor=1.5, extra_minutes=5)
    Accommodation.objects.create(assignment=exam, student=students[2], time_limit_minutes=5)
    clock.advance(minutes=6)
    assert services.attempts_close_expired() == {"checked": 1, "time_up": 1, "closed": 0}
    assert services.attempts_close_expired() == {"checked": 0, "time_up": 0, "closed": 0}
    exam.closes_at = START + timedelta(minutes=7)
    exam.save()
    clock.advance(minutes=2)
    assert services.attempts_close_expired() == {"checked": 2, "time_up": 0, "closed": 2}
    ends = dict(AssignmentAttempt.objects.values_list("student__username", "close_reason"))
    assert ends == {"student1": "closed", "student2": "closed", "student3": "time_up"}


def test_an_own_close_date_alone_makes_the_closer_read_the_attempt(exam, demo, clock, django_user_model):
    from exams.models import Accommodation

    exam.time_limit_minutes, exam.closes_at = None, None
    exam.save()
    student = django_user_model.objects.get(username="student1")
    services.attempt_start(assignment=exam, student=student)
    Accommodation.objects.create(assignment=exam, student=student, closes_at=START + timedelta(minutes=3))
    clock.advance(minutes=4)
    assert services.attempts_close_expired() == {"checked": 1, "time_up": 0, "closed": 1}


def test_the_closer_reads_only_attempts_that_may_be_over(exam, demo, clock, django_user_model):
    """In the exam hour the sweep reads the attempts whose exam limit has run out and the
    accommodated ones (a shorter own limit ends early), not every attempt still running."""
    from exams.models import Accommodation, CourseAccommodation

    exam.time_limit_minutes = 10
    exam.save()
    students = [django_user_model.objects.get(username=name) for name in ("student1", "student2", "student3")]
    for student in students:
        services.attempt_start(assignment=exam, student=student)
    Accommodation.objects.create(assignment=exam, student=students[1], time_limit_minutes=5)
    CourseAccommodation.objects.create(course=exam.course, student=students[2], extra_minutes=5)
    clock.advance(minutes=6)
    assert services.attempts_close_expired() == {"checked": 2, "time_up": 1, "closed": 0}
    clock.advance(minutes=4)  # 10 minutes: student1's limit; student3 has 15
    assert services.attempts_close_expired() == {"checked": 2, "time_up": 1, "closed": 0}
    ends = dict(AssignmentAttempt.objects.values_list("student__username", "finished_at"))
    assert ends == {
        "student1": START + timedelta(minutes=10),
        "student2": START + timedelta(minutes=5),
        "student3": None,
    }


def test_an_open_exam_page_links_to_no_exploration_and_an_ended_one_counts_no_attempts_left(
    client, exam, item, student, clock, django_capture_on_commit_callbacks
):
    """The explorations compute what the exam asks (a calculator one click away), and an
    ended attempt has no attempts "left" to use."""
    client.force_login(student)
    client.post(reverse("exams:start", args=[exam.course.slug, exam.slug]))
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submit(variant, student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert reverse("explorations:scaling") not in page and "See it move" not in page
    assert "attempt 1; 4 attempts left" in page
    services.attempt_finish(assignment=exam, student=student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert reverse("explorations:scaling") in page
    assert "<strong>Answer saved</strong> — attempt 1. Your results show when" in page
    assert "attempts left" not in page and "attempt left" not in page
