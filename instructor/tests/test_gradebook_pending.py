"""An answer waiting to be graded (a free-text part waiting for a person) is pending in
every gradebook: the assignment and course pages mark the cell "+ pending" and the total
"provisional" instead of a bare 0.00, the CSV/XLSX exports name it in a "pending" column,
and once it is graded the marks are gone. Item analytics count a part's facility over the
students whose answer to it is graded."""

import csv
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, product_yaml, published_version, submission_add, user_create,
    variant_for,
)
from courses.models import Enrolment, Role
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus
from instructor import selectors, selectors_gradebook, services

EQUAL_KEYS_YAML = """\
slug: equal-keys
title: Equal keys
version: 1
parameters:
  n: {generator: fixed, value: 4}
prompt: |
  All {{n}} keys are equal.
parts:
  - key: weight
    type: numeric
    answer: "1 / n"
    decimals: 2
    solution: |
      Each weight is 1/{{n}}.
  - key: why
    type: free_text
    answer: the scores are equal, so the softmax is uniform
    solution: |
      Equal scores give equal weights.
"""

MANUAL = SubmissionStatus.MANUAL


@pytest.fixture
def waiting(people):
    """Week1: equal-keys (a numeric part and a free-text one, 1 point each; the item 1
    point) and explain-scaling (one free-text part; 1 point).

    sam: equal-keys right and its free text graded 0.5 (0.75); explain-scaling never.
    sue: equal-keys right, its free text waiting (0.50 + pending); explain-scaling waiting.
    tom: equal-keys wrong, its free text waiting (the tester's 0.00); explain-scaling never.
    uma: nothing.
    """
    tom, uma = user_create("tom", last_name="Tran"), user_create("uma", last_name="Ueda")
    for user in (tom, uma):
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
    equal_keys = published_version(source=EQUAL_KEYS_YAML)
    explain = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [equal_keys, explain])
    keys_item, explain_item = assignment.items.order_by("position")
    sam, sue = people.student, people.student2

    def variant(item, user, seed):
        return variant_for(item, user, params={"n": 4} if item == keys_item else {"d": 64}, seed=seed)

    submission_add(variant(keys_item, sam, 1), "weight", "0.25", awarded=1.0)
    submission_add(Variant.objects.get(student=sam), "why", "uniform", awarded=0.5, score=0.5)
    submission_add(variant(keys_item, sue, 2), "weight", "0.25", awarded=1.0)
    submission_add(Variant.objects.get(student=sue, assignment_item=keys_item), "why", "uniform",
                   awarded=None, status=MANUAL)
    submission_add(variant(explain_item, sue, 3), "why", "variance", awarded=None, status=MANUAL)
    submission_add(variant(keys_item, tom, 4), "weight", "0.5", awarded=0.0)
    tom_why = submission_add(Variant.objects.get(student=tom), "why", "no idea", awarded=None, status=MANUAL)
    return {"assignment": assignment, "tom_why": tom_why, "tom": tom, "grader": people.instructor}


def _rows(book):
    return {
        row["student"].username: (
            [(cell.shown, cell.pending) for cell in row["cells"]], row["total"], row["provisional"]
        )
        for row in book["rows"]
    }


def test_the_assignment_gradebook_marks_a_waiting_answer_pending_and_the_total_provisional(people, waiting):
    rows = _rows(selectors.gradebook(assignment=waiting["assignment"]))
    assert rows == {
        "sam": ([("0.75", False), ("—", False)], 0.75, False),
        "sue": ([("0.50", True), ("0.00", True)], 0.5, True),
        "tom": ([("0.00", True), ("—", False)], 0.0, True),
        "uma": ([("—", False), ("—", False)], 0.0, False),
    }


def _page_row(html: str, username: str) -> list[str]:
    row = re.search(rf"<tr><th scope=\"row\"><a [^>]*>{username}</a>.*?</tr>", html, re.S).group(0)
    return re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)


PENDING = '<span class="status aq-pending">+ pending</span>'
PROVISIONAL = '<span class="status aq-provisional">provisional</span>'


def test_the_assignment_gradebook_page_shows_pending_not_a_bare_zero_then_the_grade(client, people, waiting):
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:gradebook", args=["attn", "week1"])
    html = client.get(url).content.decode()
    assert _page_row(html, "tom") == [f"0.00 {PENDING}", "—", f"0.00 {PROVISIONAL}", "0.0"]
    assert _page_row(html, "sue") == [f"0.50 {PENDING}", f"0.00 {PENDING}", f"0.50 {PROVISIONAL}", "25.0"]
    assert _page_row(html, "sam") == ["0.75", "—", "0.75", "37.5"]
    assert 'id="gradebook-pending-legend"' in html

    services.submission_grade_manually(submission=waiting["tom_why"], grader=waiting["grader"], score=1.0)
    html = client.get(url).content.decode()
    assert _page_row(html, "tom") == ["0.50", "—", "0.50", "25.0"]
    # What is left: sue's two cells and her total, and the legend's one of each.
    assert (html.count(PENDING), html.count(PROVISIONAL)) == (3, 2)


def test_the_assignment_exports_name_the_waiting_exercises_in_a_pending_column(client, people, waiting):
    from openpyxl import load_workbook

    client.login(username="ines", password=PASSWORD)
    response = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [
        ["username", "student_id", "email", "first_name", "last_name", "equal-keys (/1)", "explain-scaling (/1)",
         "total (/2)", "percent", "pending"],
        ["sam", "", "", "Sam", "Stone", "0.75", "not attempted", "0.75", "37.5", ""],
        ["sue", "", "", "Sue", "Shaw", "0.5", "0", "0.5", "25", "equal-keys; explain-scaling"],
        ["tom", "", "", "", "Tran", "0", "not attempted", "0", "0", "equal-keys"],
        ["uma", "", "", "", "Ueda", "not attempted", "not attempted", "not attempted", "", ""],
    ]
    workbook = client.get(reverse("instructor:gradebook_xlsx", args=["attn", "week1"]))
    sheet = load_workbook(io.BytesIO(workbook.content), read_only=True)["week1"]
    values = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert values[3] == ["tom", None, None, None, "Tran", 0, "not attempted", 0, 0, "equal-keys"]

    services.submission_grade_manually(submission=waiting["tom_why"], grader=waiting["grader"], score=1.0)
    rows = list(selectors.gradebook_csv_rows(assignment=waiting["assignment"]))
    assert rows[3] == ["tom", "", "", "", "Tran", 0.5, "not attempted", 0.5, 25.0, ""]


def test_a_waiting_answer_that_cannot_raise_the_best_is_not_pending(people, waiting):
    """sam's weight already has full marks: a second answer still queued changes nothing.
    tom's weight is 0: a queued answer may raise it, so it is pending. An answer the grader
    could not grade is not waiting for anyone."""
    sam_variant = Variant.objects.get(student=people.student)
    submission_add(sam_variant, "weight", "0.25", awarded=None, status=SubmissionStatus.QUEUED)
    submission_add(Variant.objects.get(student=waiting["tom"]), "weight", "0.25", awarded=None,
                   status=SubmissionStatus.QUEUED)
    submission_add(sam_variant, "why", "again", awarded=None, status=SubmissionStatus.COULD_NOT_GRADE)
    scores = selectors.part_best_scores(submissions=selectors.assignment_submissions(assignment=waiting["assignment"]))
    keys_item = waiting["assignment"].items.get(position=0).pk
    sam, sue, tom = people.student.pk, people.student2.pk, waiting["tom"].pk
    assert scores.best[(sam, keys_item, "weight")] == 1.0
    assert scores.best[(sam, keys_item, "why")] == 0.5
    assert sorted(key for key in scores.pending if key[1] == keys_item) == sorted(
        [(sue, keys_item, "why"), (tom, keys_item, "weight"), (tom, keys_item, "why")]
    )


def test_the_course_gradebook_marks_pending_cells_and_provisional_totals(client, people, waiting):
    book = selectors_gradebook.course_gradebook(course=people.course)
    rows = {row.student.username: row for row in book.rows}
    assert [(cell.earned, cell.pending) for cell in rows["sue"].cells] == [(0.5, True)]
    assert [(cell.earned, cell.pending) for cell in rows["tom"].cells] == [(0.0, True)]
    assert [(cell.earned, cell.pending) for cell in rows["sam"].cells] == [(0.75, False)]
    assert [(cell.earned, cell.pending) for cell in rows["uma"].cells] == [(None, False)]
    assert {name: (row.total, row.provisional) for name, row in rows.items()} == {
        "sam": (37.5, False), "sue": (25.0, True), "tom": (0.0, True), "uma": (None, False),
    }
    table = selectors_gradebook.course_gradebook_table(book=book)
    assert table[0][5:] == ["Week1 (/2)", "total %", "pending"]
    assert {line[0]: line[5:] for line in table[1:]} == {
        "sue": [0.5, 25.0, "Week1"], "sam": [0.75, 37.5, ""], "tom": [0.0, 0.0, "Week1"],
        "uma": ["not attempted", "", ""],
    }

    client.login(username="tariq", password=PASSWORD)
    url = reverse("instructor:course_gradebook", args=[people.course.slug])
    html = client.get(url).content.decode()
    tom_row = re.search(r"<tr><th scope=\"row\">[^<]*<span class=\"muted\">tom</span>.*?</tr>", html, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", tom_row, re.S)
    assert cells == ["", f"0.00 {PENDING}", f"<strong>0.0</strong> {PROVISIONAL}"]
    assert 'id="gradebook-pending-legend"' in html

    services.submission_grade_manually(submission=waiting["tom_why"], grader=waiting["grader"], score=1.0)
    tom = next(row for row in selectors_gradebook.course_gradebook(course=people.course).rows
               if row.student.username == "tom")
    assert ([(cell.earned, cell.pending) for cell in tom.cells], tom.total, tom.provisional) == (
        [(0.5, False)], 25.0, False
    )


@pytest.mark.parametrize("students", [5, 60])
def test_pending_answers_add_no_query_to_the_course_gradebook(people, waiting, students, django_assert_num_queries):
    """Every extra student has a free-text answer waiting: still the book's 8 queries."""
    User = get_user_model()
    users = User.objects.bulk_create([User(username=f"p{index:03d}", password="!") for index in range(students)])
    Enrolment.objects.bulk_create([Enrolment(course=people.course, user=user, role=Role.STUDENT) for user in users])
    item = waiting["assignment"].items.get(position=1)
    variants = Variant.objects.bulk_create(
        [Variant(exercise_version=item.exercise_version, student=user, assignment_item=item,
                 context=f"assignment:{item.pk}", seed=index, params={"d": 64}) for index, user in enumerate(users)]
    )
    Submission.objects.bulk_create(
        [Submission(variant=variant, student_id=variant.student_id, part="why", raw_answer="x", status=MANUAL)
         for variant in variants]
    )
    with django_assert_num_queries(8):
        book = selectors_gradebook.course_gradebook(course=people.course)
        table = selectors_gradebook.course_gradebook_table(book=book)
    assert sum(row.provisional for row in book.rows) == students + 2  # and sue and tom
    assert [line[-1] for line in table[1:]].count("Week1") == students + 2


# ---------------------------------------------------------------------------
# Analytics: facility over the students whose answer to the part is graded
# ---------------------------------------------------------------------------


@pytest.fixture
def one_answer(people):
    """sam, sue and tom answer 'product' (sam 1.0, sue 0.0, tom 1.0); only sam answers
    'total', 90 %; uma answers 'product' but it still awaits grading (queued)."""
    tom, uma = user_create("tom"), user_create("uma")
    for user in (tom, uma):
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    item = assignment.items.get()
    variants = {
        user.username: variant_for(item, user, params={"a": 3, "b": 4}, seed=seed)
        for seed, user in enumerate((people.student, people.student2, tom, uma), start=1)
    }
    submission_add(variants["sam"], "product", "12", awarded=1.0)
    submission_add(variants["sam"], "total", "7", awarded=0.9, score=1.0, correct=True)
    submission_add(variants["sue"], "product", "13", awarded=0.0)
    submission_add(variants["tom"], "product", "12", awarded=1.0)
    submission_add(variants["uma"], "product", "12", awarded=None, status=SubmissionStatus.QUEUED)
    return assignment


def test_facility_is_the_mean_of_the_students_whose_answer_is_graded(people, one_answer):
    report = selectors.assignment_analytics(assignment=one_answer)
    assert report["students"] == 4
    product, total = report["exercises"][0]["parts"]
    # A 1-point exercise of two equal parts: each part is worth 0.5 in the gradebook.
    assert (product["points"], total["points"]) == (0.5, 0.5)
    # 90 % by the only student who answered: facility 0.9, not 0.9 / 4 (or / 3 before uma's is graded).
    assert (total["students"], total["graded"], total["awaiting"]) == (1, 1, 0)
    assert (total["mean_score"], total["facility"]) == (0.45, 0.9)
    # uma's queued answer is not a 0 in the mean: (0.5 + 0 + 0.5) / 3.
    assert (product["students"], product["graded"], product["awaiting"]) == (4, 3, 1)
    assert (product["mean_score"], product["facility"]) == (1 / 3, 2 / 3)
    # Discrimination stays over every answering student, a part never answered counting 0:
    # 'total' points [0.45, 0, 0, 0] against the rest [0.5, 0, 0.5, 0].
    assert total["discrimination"] == pytest.approx(selectors.pearson([0.45, 0, 0, 0], [0.5, 0, 0.5, 0]), abs=1e-12)


def test_the_analytics_page_says_what_facility_is_averaged_over(client, people, one_answer):
    client.login(username="tariq", password=PASSWORD)
    html = client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode()
    assert ("<strong>Mean score</strong> and <strong>facility</strong> (= mean score ÷ maximum) are over the "
            "students whose answer to the part is graded (“Graded”): a student who never answered the part is "
            "not counted as 0, and an answer still waiting to be graded is left out until it is graded.") in html
    total_row = re.search(r'<tr data-part="total">.*?</tr>', html, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", total_row, re.S)
    assert [cell.strip() for cell in cells[:6]] == ["1", "1", "1", "0.450", "0.50", "0.900"]
    product_row = re.search(r'<tr data-part="product">.*?</tr>', html, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", product_row, re.S)
    assert [cell.strip() for cell in cells[:6]] == [
        "4", "4", '3 <span class="status aq-pending">1 pending</span>', "0.333", "0.50", "0.667",
    ]
