"""The student's assignment page: the attempts each exercise has left, said truthfully
when its parts differ, in a fixed number of queries."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from courses.models import AssignmentItem, ReleaseMoment
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus

WORKED_EXAMPLE = "attention-weights-one-query"  # parts (a) weights, (b) output
EQUAL_KEYS = "equal-keys"  # four parts


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


def item_of(demo, slug: str) -> AssignmentItem:
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)


def answered(item, student, *, part: str, times: int = 1, correct: bool = False) -> None:
    """``times`` graded answers to one part, stored as grading stores them."""
    variant = variant_get_or_create_for_item(item=item, student=student)
    used = Submission.objects.filter(variant=variant, part=part).count()
    for attempt in range(used + 1, used + times + 1):
        Submission.objects.create(
            variant=variant, student=student, part=part, raw_answer="[1, 2]", attempt=attempt,
            status=SubmissionStatus.GRADED, score=float(correct), awarded=float(correct),
            correct=correct,
        )


def attempts_left_cell(client, demo, item) -> str:
    """The text of the "Attempts left" cell of ``item``'s row."""
    html = client.get(reverse("assignment", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    row = re.search(
        r'<a href="%s">.*?</td>\s*<td>.*?</td>\s*<td>.*?</td>\s*<td>(.*?)</td>'
        % re.escape(reverse("exercise", args=[item.pk])),
        html, re.S,
    )
    assert row, html
    return row[1]


def test_parts_with_the_same_attempts_left_read_per_part(client, demo, student):
    item = item_of(demo, WORKED_EXAMPLE)
    client.force_login(student)
    assert attempts_left_cell(client, demo, item) == "5 per part"  # not opened yet
    answered(item, student, part="weights", times=2)
    answered(item, student, part="output", times=2)
    assert attempts_left_cell(client, demo, item) == "3 per part"


def test_parts_with_different_attempts_left_each_say_their_own(client, demo, student):
    worked, equal_keys = item_of(demo, WORKED_EXAMPLE), item_of(demo, EQUAL_KEYS)
    answered(worked, student, part="weights", times=3)
    last_part = equal_keys.exercise_version.spec["parts"][3]["key"]
    answered(equal_keys, student, part=last_part)
    client.force_login(student)
    assert attempts_left_cell(client, demo, worked) == "(a) 2, (b) 5"
    assert attempts_left_cell(client, demo, equal_keys) == "(a) 5, (b) 5, (c) 5, (d) 4"


def test_a_solved_part_is_left_out_while_correctness_shows_and_counted_while_hidden(client, demo, student):
    item = item_of(demo, WORKED_EXAMPLE)
    answered(item, student, part="weights", times=1, correct=True)
    client.force_login(student)
    assert attempts_left_cell(client, demo, item) == "5 per part"  # only (b) is open
    demo.assignment.show_correctness = ReleaseMoment.ON_RELEASE
    demo.assignment.save()
    # Leaving (a) out would tell the student it is solved.
    assert attempts_left_cell(client, demo, item) == "(a) 4, (b) 5"


def test_unlimited_attempts_read_unlimited_and_a_solved_exercise_a_dash(client, demo, student):
    worked, equal_keys = item_of(demo, WORKED_EXAMPLE), item_of(demo, EQUAL_KEYS)
    answered(worked, student, part="weights", times=3)
    for part in equal_keys.exercise_version.spec["parts"]:
        answered(equal_keys, student, part=part["key"], correct=True)
    client.force_login(student)
    assert attempts_left_cell(client, demo, equal_keys) == "—"
    demo.assignment.attempts_per_part = 0
    demo.assignment.save()
    assert attempts_left_cell(client, demo, worked) == "unlimited"


def statements_run(captured) -> list[str]:
    return [
        query["sql"] for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT"))
    ]


@pytest.mark.parametrize("opened", [1, 4])
def test_the_page_reads_the_same_nine_queries_however_many_exercises_were_answered(
        client, demo, student, opened):
    items = list(AssignmentItem.objects.filter(assignment=demo.assignment))
    for index, item in enumerate(items[:opened]):
        answered(item, student, part=item.exercise_version.spec["parts"][0]["key"], times=1 + index % 2)
    client.force_login(student)
    # the course's time zone, the session's user, the course, the role, the assignment, the
    # student's window (the assignment with their accommodations and attempt), the items,
    # the variants, the answers
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("assignment", args=[demo.course.slug, demo.assignment.slug]))
    assert response.status_code == 200
    statements = statements_run(captured)
    assert len(statements) == 9, "\n".join(statements)
    assert "(a) 4, (b) 5" in response.content.decode()


def row_cells(client, demo, item) -> list[str]:
    """The texts of ``item``'s row: exercise, status, parts solved, attempts left, points."""
    html = client.get(reverse("assignment", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    link = '<a href="%s">' % reverse("exercise", args=[item.pk])
    row = re.search(r"<tr>\s*<td>%s.*?</tr>" % re.escape(link), html, re.S)
    assert row, html
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[0], re.S)]


def test_a_closed_assignment_reads_finished_with_no_attempts_left(client, demo, student):
    """After the close date nothing can be answered: "in progress" and "4 attempts left"
    would promise what the page cannot give."""
    worked, equal_keys = item_of(demo, WORKED_EXAMPLE), item_of(demo, EQUAL_KEYS)
    answered(worked, student, part="weights", times=1)
    for part in equal_keys.exercise_version.spec["parts"]:
        answered(equal_keys, student, part=part["key"], correct=True)
    untouched = AssignmentItem.objects.filter(assignment=demo.assignment).exclude(pk__in=[worked.pk, equal_keys.pk])[0]
    client.force_login(student)
    assert row_cells(client, demo, worked)[1:4] == ["in progress", "0 / 2", "(a) 4, (b) 5"]
    past = timezone.now() - timedelta(hours=1)
    demo.assignment.due_at = demo.assignment.closes_at = past
    demo.assignment.save()
    assert row_cells(client, demo, worked)[1:4] == ["finished", "0 / 2", "none"]
    assert row_cells(client, demo, equal_keys)[1:4] == ["solved", "4 / 4", "none"]
    untouched_cells = row_cells(client, demo, untouched)
    assert (untouched_cells[1], untouched_cells[3]) == ("not answered", "none")


def test_an_ended_exam_attempt_reads_finished_with_no_attempts_left(client, demo, student):
    from exams import services as exam_services
    from exams.tests.conftest import exam_policy

    exam = exam_policy(demo.assignment)
    worked = item_of(demo, WORKED_EXAMPLE)
    client.force_login(student)
    client.post(reverse("exams:start", args=[demo.course.slug, exam.slug]))
    answered(worked, student, part="weights", times=1, correct=True)
    # Correctness is hidden until release: "answered", attempts of every part.
    assert row_cells(client, demo, worked)[1:4] == ["answered", "— / 2", "(a) 4, (b) 5"]
    exam_services.attempt_finish(assignment=exam, student=student)
    html = client.get(reverse("assignment", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    assert row_cells(client, demo, worked)[1:4] == ["finished", "— / 2", "none"]
    assert "in progress" not in html and "per part</td>" not in html


def test_statuses_once_over_keep_solved_and_say_finished_or_not_answered():
    from exercises.selectors import statuses_once_over

    def row(state, left):
        return {"item": state, "status": {"state": state, "attempts_left": left, "attempts_left_of_parts": [("(a)", 1)]}}

    rows = [row("in progress", 1), row("answered", 3), row("not started", 5), row("solved", None)]
    assert [
        (r["item"], r["status"]["state"], r["status"]["attempts_left"], r["status"]["attempts_left_of_parts"],
         r["status"]["ended"])
        for r in statuses_once_over(rows)
    ] == [
        ("in progress", "finished", None, None, True),
        ("answered", "finished", None, None, True),
        ("not started", "not answered", None, None, True),
        ("solved", "solved", None, None, True),
    ]
    assert rows[0]["status"]["state"] == "in progress"  # the caller's rows are left as they were
