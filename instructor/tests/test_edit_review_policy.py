"""Editing the review policy or the address of an assignment students have started: a
policy that shows any of them more now (verdicts, scores, feedback, hints, heatmaps,
worked solutions) asks first and says whom it reaches, in numbers; showing less saves at
once. A new address asks first too: the old one is not kept, so open pages stop working."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import PASSWORD, variant_for
from courses.models import Assignment, ReleaseMoment, SolutionPolicy
from exams.models import AssignmentAttempt
from exams.selectors import student_window
from grading.models import Submission, SubmissionStatus
from instructor import selectors_edit_impact, services
from instructor.tests.test_edit_running_exam import _confirmation, _login, _settings, _token, exam  # noqa: F401
from instructor.tests.test_edit_started_work import HW_WHO, _student, homework  # noqa: F401

WHO = "3 students are working on this exam now and 2 have finished."
HIDDEN = {
    "show_correctness": ReleaseMoment.AFTER_FINISH, "show_score": ReleaseMoment.ON_RELEASE,
    "show_misconception": ReleaseMoment.ON_RELEASE, "show_hints": ReleaseMoment.NEVER,
    "show_heatmap": ReleaseMoment.ON_RELEASE, "show_solutions": ReleaseMoment.NEVER,
    "solution_policy": SolutionPolicy.NEVER,
}


def _policy(assignment, **fields) -> Assignment:
    Assignment.objects.filter(pk=assignment.pk).update(**fields)
    assignment.refresh_from_db()
    return assignment


def _stored(assignment, *names) -> tuple:
    return Assignment.objects.filter(pk=assignment.pk).values_list(*names).get()


def _edit_url(assignment) -> str:
    return reverse("instructor:assignment_edit", args=["attn", assignment.slug])


def _question(response) -> str:
    """The confirmation's first paragraph as the instructor reads it."""
    assert response.status_code == 200
    return re.sub(r"<[^>]+>", "", _confirmation(response)).split(">", 1)[1]


def _working_student(username: str = "r1"):
    return AssignmentAttempt.objects.get(student__username=username).student


# --- Showing more asks first --------------------------------------------------------------


def test_verdicts_during_and_solutions_always_mid_exam_ask_first_then_show(client, exam):
    """Right or wrong showed once an attempt ended (the 2 finished see it already) and
    solutions never: now right or wrong during the attempt and solutions always."""
    _policy(exam, **HIDDEN)
    r1 = _working_student()
    assert not student_window(assignment=exam, student=r1).visibility.correctness
    _login(client)
    data = _settings(exam, show_correctness="during", show_solutions="during", solution_policy="always")
    asked = client.post(_edit_url(exam), data)
    assert asked.status_code == 200
    assert _question(asked) == (
        f"Nothing is saved yet. {WHO} Showing right or wrong during the attempt shows it to the 3 still working "
        "now; showing worked solutions always shows them to all 5 now."
    )
    assert "Saved the assignment." not in asked.content.decode()
    assert _stored(exam, "show_correctness", "show_solutions", "solution_policy") == ("after_finish", "never", "never")
    assert not student_window(assignment=exam, student=r1).visibility.correctness

    confirmed = client.post(_edit_url(exam), {**data, "confirm": "yes", "impact": _token(asked)})
    assert confirmed.status_code == 302
    assert _stored(exam, "show_correctness", "show_solutions", "solution_policy") == ("during", "during", "always")
    shown = student_window(assignment=exam, student=r1).visibility
    assert (shown.correctness, shown.solutions, shown.score) == (True, True, False)


def test_showing_less_saves_at_once_while_students_work(client, exam):
    """Everything during (the defaults) to the exam preset: nothing shows more."""
    _login(client)
    response = client.post(_edit_url(exam), _settings(exam, review_preset="exam", solution_policy="never"))
    assert response.status_code == 302
    assert _stored(exam, "show_correctness", "show_solutions", "solution_policy") == ("on_release", "never", "never")


def test_only_the_kinds_that_show_more_are_named(client, exam):
    """The score moves to during (more, for the 3 still working); hints to never (less)."""
    _policy(exam, show_score=ReleaseMoment.AFTER_FINISH)
    _login(client)
    asked = client.post(_edit_url(exam), _settings(exam, show_score="during", show_hints="never"))
    assert _question(asked) == (
        f"Nothing is saved yet. {WHO} Showing the score during the attempt shows it to the 3 still working now."
    )
    assert _stored(exam, "show_score", "show_hints") == ("after_finish", "during")


@pytest.mark.parametrize("moment, expected", [
    ("after_finish", "Showing misconception feedback as soon as the attempt ends shows it to the 2 who have "
                     "finished now."),
    ("later", "Showing misconception feedback from 2 minutes after the attempt ends shows it to the 2 who have "
              "finished now."),
])
def test_a_moment_after_the_attempt_reaches_those_who_finished(client, exam, moment, expected):
    _policy(exam, show_misconception=ReleaseMoment.NEVER)
    _login(client)
    asked = client.post(_edit_url(exam), _settings(exam, show_misconception=moment))
    assert _question(asked) == f"Nothing is saved yet. {WHO} {expected}"


def test_a_finish_under_two_minutes_ago_is_not_reached_by_later_yet(exam):
    """sam finished a minute ago: "later" reaches only sue (finished 20 minutes ago)."""
    _policy(exam, show_heatmap=ReleaseMoment.NEVER)
    AssignmentAttempt.objects.filter(student__username="sam").update(finished_at=timezone.now() - timedelta(minutes=1))
    with pytest.raises(services.ConfirmationNeeded) as asked:
        services.assignment_update(assignment=exam, confirmed=False, show_heatmap=ReleaseMoment.LATER)
    assert asked.value.message == (
        f"{WHO} Showing their heatmap from 2 minutes after the attempt ends shows it to 1 of the 2 who have "
        "finished now."
    )


def test_on_release_asks_once_the_grades_are_released_and_not_before(client, exam):
    _policy(exam, show_score=ReleaseMoment.NEVER)
    _login(client)
    unreleased = client.post(_edit_url(exam), _settings(exam, show_score="on_release"))
    assert unreleased.status_code == 302  # nobody sees it before a release: nothing to ask

    _policy(exam, show_score=ReleaseMoment.NEVER, grades_released_at=timezone.now() - timedelta(hours=1))
    asked = client.post(_edit_url(exam), _settings(exam, show_score="on_release"))
    assert _question(asked) == (
        f"Nothing is saved yet. {WHO} Showing the score once the grades are released (they are) shows it to the 2 "
        "who have finished now."
    )
    assert _stored(exam, "show_score") == ("never",)


def test_after_close_before_the_close_date_saves_at_once(client, exam):
    _policy(exam, show_score=ReleaseMoment.NEVER, closes_at=timezone.now() + timedelta(days=1))
    _login(client)
    response = client.post(_edit_url(exam), _settings(exam, show_score="after_close"))
    assert response.status_code == 302
    assert _stored(exam, "show_score") == ("after_close",)


def test_solutions_after_a_solve_count_the_parts_each_student_finished(client, exam):
    """Right or wrong was hidden, so a solved part showed no solution (only used-up ones
    did). r1 solved 'product'; sam used all 3 attempts on it (its solution showed before);
    r2 answered once, wrongly. Showing right or wrong shows it to all 5, and with it the
    solution of r1's solved part: 1 student more."""
    _policy(exam, show_correctness=ReleaseMoment.NEVER, show_solutions=ReleaseMoment.DURING,
            solution_policy=SolutionPolicy.AFTER_SOLVED, attempts_per_part=3)
    item = exam.items.get(position=0)
    answers = {"r1": [(True, SubmissionStatus.GRADED)], "sam": [(False, SubmissionStatus.GRADED)] * 3,
               "r2": [(False, SubmissionStatus.GRADED), (None, SubmissionStatus.COULD_NOT_GRADE)]}
    for seed, (username, given) in enumerate(answers.items(), start=1):
        variant = variant_for(item, AssignmentAttempt.objects.get(student__username=username).student,
                              params={"a": 3, "b": 4}, seed=seed)
        for attempt, (correct, status) in enumerate(given, start=1):
            Submission.objects.create(variant=variant, student=variant.student, part="product", raw_answer="12",
                                      attempt=attempt, status=status, correct=correct, score=float(bool(correct)))
    _login(client)
    asked = client.post(_edit_url(exam), _settings(exam, show_correctness="during"))
    assert _question(asked) == (
        f"Nothing is saved yet. {WHO} Showing right or wrong during the attempt shows it to all 5 now; showing "
        "worked solutions once a part is solved or its attempts are used up shows them to 1 of the 3 still "
        "working now."
    )


def test_a_solution_policy_bounded_by_a_later_moment_names_both(exam):
    _policy(exam, show_solutions=ReleaseMoment.AFTER_FINISH, solution_policy=SolutionPolicy.NEVER)
    with pytest.raises(services.ConfirmationNeeded) as asked:
        services.assignment_update(assignment=exam, confirmed=False, solution_policy=SolutionPolicy.AFTER_DUE,
                                   due_at=timezone.now() - timedelta(minutes=1))
    assert asked.value.message == (
        f"{WHO} Showing worked solutions after the due date, as soon as the attempt ends shows them to the 2 who "
        "have finished now."
    )


def test_homework_hints_ask_with_homework_wording(client, homework):
    _policy(homework, show_hints=ReleaseMoment.NEVER)
    _login(client)
    asked = client.post(_edit_url(homework), _settings(homework, show_hints="during"))
    assert _question(asked) == (
        f"Nothing is saved yet. {HW_WHO} Showing hints during the attempt shows them to all 3 now."
    )
    data = {**_settings(homework, show_hints="during"), "confirm": "yes", "impact": _token(asked)}
    confirmed = client.post(_edit_url(homework), data)
    assert confirmed.status_code == 302
    assert _stored(homework, "show_hints") == ("during",)


def test_without_anyone_started_showing_more_saves_at_once(client, exam):
    _policy(exam, **HIDDEN)
    AssignmentAttempt.objects.all().delete()
    _login(client)
    response = client.post(_edit_url(exam), _settings(exam, review_preset="homework", solution_policy="always"))
    assert response.status_code == 302
    assert _stored(exam, "show_correctness", "solution_policy") == ("during", "always")


def test_the_gains_are_read_with_one_query_only_for_solutions_after_a_solve(exam):
    started = selectors_edit_impact.students_started(assignment=exam)
    stored = selectors_edit_impact.review_fields_of(_policy(exam, **HIDDEN))
    with CaptureQueriesContext(connection) as queries:
        gains = selectors_edit_impact.review_gains(
            assignment=exam, started=started, stored=stored, new={"show_score": "during", "show_hints": "after_finish"},
        )
    assert len(queries) == 0
    assert gains == [selectors_edit_impact.ReviewGain("score", 3, 2), selectors_edit_impact.ReviewGain("hints", 0, 2)]
    with CaptureQueriesContext(connection) as queries:
        gains = selectors_edit_impact.review_gains(
            assignment=exam, started=started, stored=stored,
            new={"show_solutions": "during", "solution_policy": "after_solved"},
        )
    assert len(queries) == 1
    assert gains == []  # nobody has solved or used up a part


# --- A new address -------------------------------------------------------------------------


ADDRESS = (
    "Changing its address from 'week1' to 'week1-b' makes the old address answer 'not found': the 3 still working "
    "lose the page they have open (their saved answers stay; they open the exam again from the course page), and "
    "links to the old address stop working."
)


def test_a_new_address_mid_exam_asks_first_then_moves_the_pages(client, exam):
    _login(client)
    data = _settings(exam, slug="week1-b")
    asked = client.post(_edit_url(exam), data)
    assert _question(asked) == f"Nothing is saved yet. {WHO} {ADDRESS}"
    assert _stored(exam, "slug") == ("week1",)
    confirmed = client.post(_edit_url(exam), {**data, "confirm": "yes", "impact": _token(asked)})
    assert confirmed.status_code == 302
    assert confirmed["Location"] == reverse("instructor:assignment", args=["attn", "week1-b"])
    client.login(username="r1", password=PASSWORD)
    assert client.get(reverse("assignment", args=["attn", "week1"])).status_code == 404
    assert client.get(reverse("assignment", args=["attn", "week1-b"])).status_code == 200


def test_a_new_address_names_an_lms_link_and_with_only_finished_students_their_links(exam):
    AssignmentAttempt.objects.filter(finished_at__isnull=True).delete()
    Assignment.objects.filter(pk=exam.pk).update(has_lti_link=True)
    with pytest.raises(services.ConfirmationNeeded) as asked:
        services.assignment_update(assignment=exam, confirmed=False, slug="final")
    assert asked.value.message == (
        "2 students have finished this exam. Changing its address from 'week1' to 'final' makes the old address "
        "answer 'not found': links to it stop working. An LMS link that names it 'week1' stops opening it until "
        "it names 'final'."
    )


def test_a_new_address_with_a_review_change_says_both_once(exam):
    _policy(exam, show_score=ReleaseMoment.NEVER)
    with pytest.raises(services.ConfirmationNeeded) as asked:
        services.assignment_update(assignment=exam, confirmed=False, slug="week1-b", show_score="after_finish")
    assert asked.value.message == (
        f"{WHO} Showing the score as soon as the attempt ends shows it to the 2 who have finished now. {ADDRESS}"
    )


def test_a_taken_address_is_refused_before_anything_is_asked(client, exam, people):
    Assignment.objects.create(course=people.course, slug="taken", title="Taken")
    _login(client)
    response = client.post(_edit_url(exam), _settings(exam, slug="taken"))
    assert response.status_code == 422
    assert 'id="edit-confirmation"' not in response.content.decode()
    assert "This course already has an assignment called &#x27;taken&#x27;." in response.content.decode()


def test_a_new_address_without_anyone_started_saves_at_once(client, exam):
    AssignmentAttempt.objects.all().delete()
    _login(client)
    response = client.post(_edit_url(exam), _settings(exam, slug="week1-b"))
    assert response.status_code == 302
    assert _stored(exam, "slug") == ("week1-b",)
