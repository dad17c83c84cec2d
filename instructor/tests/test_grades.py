"""Gradebook, CSV exports, manual grading and analytics on a course whose answers are known."""

import csv
import io
import math

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, product_yaml, published_version, submission_add, user_create,
    variant_for,
)
from courses.models import Enrolment, Role
from grading.models import Submission, SubmissionStatus
from instructor import selectors
from instructor.models import ManualGrade


@pytest.fixture
def known(people):
    """Four students; part 'product' is worth 2 points, 'total' 1; the item 3 points.

    sam:  product 13 (wrong, no_scaling) then 12 (right, 1.0); total right (1.0)
    sue:  product 13 (wrong, no_scaling);                      total right (1.0)
    tom:  product 14 (wrong, divided_by_d_k);                  total 7 (wrong)
    uma:  product right but penalised (0.5);                   total never answered
    """
    tom, uma = user_create("tom"), user_create("uma")
    for user in (tom, uma):
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
    version = published_version(source=product_yaml(points=2))
    assignment = assignment_create(people.course, [version])
    item = assignment.items.get()
    item.points = 3
    item.save()
    variants = {}
    for seed, user in enumerate((people.student, people.student2, tom, uma), start=1):
        variants[user.username] = variant_for(item, user, params={"a": 3, "b": 4}, seed=seed)
    submission_add(variants["sam"], "product", "13", awarded=0.0, misconception="no_scaling")
    submission_add(variants["sam"], "product", "12", awarded=1.0)
    submission_add(variants["sam"], "total", "7", awarded=1.0)
    submission_add(variants["sue"], "product", "13", awarded=0.0, misconception="no_scaling")
    submission_add(variants["sue"], "total", "7", awarded=1.0)
    submission_add(variants["tom"], "product", "14", awarded=0.0, misconception="divided_by_d_k")
    submission_add(variants["tom"], "total", "-8", awarded=0.0)
    submission_add(variants["uma"], "product", "12", awarded=0.5, correct=True, score=1.0)
    return {"assignment": assignment, "item": item, "variants": variants}


def test_gradebook_sums_best_part_scores_weighted_by_points(people, known):
    book = selectors.gradebook(assignment=known["assignment"])
    assert [info.label() for info in book["columns"]] == ["product (/3)"]
    assert [(row["student"].username, row["scores"], row["total"]) for row in book["rows"]] == [
        ("sam", [3.0], 3.0), ("sue", [1.0], 1.0), ("tom", [0.0], 0.0), ("uma", [1.0], 1.0),
    ]
    filtered = selectors.gradebook(assignment=known["assignment"], student_filter="STONE")
    assert [row["student"].username for row in filtered["rows"]] == ["sam"]
    assert selectors.gradebook(assignment=known["assignment"], item_filter=-1)["columns"] == []


def test_gradebook_page_filters_and_links_to_each_students_answers(client, people, known):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(reverse("instructor:gradebook", args=["attn", "week1"]), {"student": "su"}).content.decode()
    assert ">sue</a>" in page and ">sam</a>" not in page
    student = client.get(reverse("instructor:student", args=["attn", "week1", people.student.pk])).content.decode()
    assert student.count("<code>13</code>") == 1 and student.count("<code>12</code>") == 1
    assert "[no_scaling]" in student


def test_wide_csv_columns_and_a_row(client, people, known):
    client.login(username="ines", password=PASSWORD)
    response = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="attn-week1-scores.csv"'
    assert response.streaming
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [
        "username", "student_id", "email", "first_name", "last_name", "product (/3)", "total (/3)", "percent",
        "pending",
    ]
    assert rows[1] == ["sam", "", "", "Sam", "Stone", "3", "3", "100", ""]
    assert rows[4] == ["uma", "", "", "", "", "1", "1", "33.33", ""]
    assert len(rows) == 5


def test_the_assignment_gradebook_as_xlsx_holds_the_csvs_rows_with_numbers_as_numbers(client, people, known):
    from openpyxl import load_workbook

    people.student.first_name = "=HYPERLINK(1)"  # a name is text, never a formula
    people.student.save()
    client.login(username="tariq", password=PASSWORD)
    response = client.get(reverse("instructor:gradebook_xlsx", args=["attn", "week1"]))
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert response["Content-Disposition"] == 'attachment; filename="attn-week1-scores.xlsx"'
    sheet = load_workbook(io.BytesIO(response.content), read_only=True)["week1"]
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert rows[0] == [
        "username", "student_id", "email", "first_name", "last_name", "product (/3)", "total (/3)", "percent",
        "pending",
    ]
    # A text cell as typed, no apostrophe; never a formula (instructor/tests/test_export_formulas.py).
    assert rows[1] == ["sam", None, None, "=HYPERLINK(1)", "Stone", 3, 3, 100, None]
    assert rows[4] == ["uma", None, None, None, None, 1, 1, 33.33, None]
    assert len(rows) == 5
    page = client.get(reverse("instructor:gradebook", args=["attn", "week1"])).content.decode()
    assert f'href="{reverse("instructor:gradebook_xlsx", args=["attn", "week1"])}"' in page


def test_wide_csv_has_student_ids_emails_an_excel_mark_and_not_attempted(client, people, known):
    """A student who never answered is "not attempted", not a 0 like tom's real zero."""
    Enrolment.objects.filter(user=people.student).update(student_id="S-17")
    people.student.email = "sam@example.org"
    people.student.save()
    Enrolment.objects.create(course=people.course, user=user_create("vic"), role=Role.STUDENT, student_id="S-99")
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:gradebook_csv", args=["attn", "week1"])
    excel = b"".join(client.get(url, {"excel": "1"}).streaming_content)
    assert excel.startswith("\ufeffusername,".encode())
    rows = list(csv.reader(io.StringIO(excel.decode("utf-8-sig"))))
    assert rows[1] == ["sam", "S-17", "sam@example.org", "Sam", "Stone", "3", "3", "100", ""]
    assert rows[3] == ["tom", "", "", "", "", "0", "0", "0", ""]
    assert rows[5] == ["vic", "S-99", "", "", "", "not attempted", "not attempted", "", ""]
    page = client.get(reverse("instructor:gradebook", args=["attn", "week1"])).content.decode()
    assert page.count("not attempted</td>") == 1


@pytest.mark.parametrize("per_query", [1, 3, 200])
def test_wide_csv_rows_are_the_same_whatever_the_batch_of_students(people, known, monkeypatch, per_query):
    """Batches of 1 and 3 cut the four students (and a dropped one) at every boundary."""
    dropped = user_create("aaron")
    Enrolment.objects.create(course=people.course, user=dropped, role=Role.STUDENT, status="dropped")
    submission_add(variant_for(known["item"], dropped, params={"a": 3, "b": 4}, seed=9), "product", "12", awarded=1.0)
    monkeypatch.setattr(selectors, "GRADEBOOK_STUDENTS_PER_QUERY", per_query)
    rows = list(selectors.gradebook_csv_rows(assignment=known["assignment"]))
    assert rows[1:] == [
        ["sam", "", "", "Sam", "Stone", 3.0, 3.0, 100.0, ""],
        ["sue", "", "", "Sue", "Shaw", 1.0, 1.0, 33.33, ""],
        ["tom", "", "", "", "", 0.0, 0.0, 0.0, ""],
        ["uma", "", "", "", "", 1.0, 1.0, 33.33, ""],
    ]


def test_long_csv_has_every_submission_with_its_raw_answer(client, people, known):
    client.login(username="ines", password=PASSWORD)
    response = client.get(reverse("instructor:submissions_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == selectors.LONG_COLUMNS == [
        "submission_id", "username", "assignment", "exercise", "version", "part", "attempt", "status",
        "raw_answer", "score", "awarded", "correct", "is_late", "misconception", "created_at", "graded_at",
        "graded_by",
    ]
    assert len(rows) == 1 + 8
    first = Submission.objects.order_by("created_at", "id").first()
    assert rows[1] == [
        str(first.pk), "sam", "week1", "product", "1", "product", "1", "graded", "13", "0", "0", "false",
        "false", "no_scaling", first.created_at.isoformat(), "", "",
    ]
    tom_total = next(row for row in rows if row[1] == "tom" and row[5] == "total")
    assert tom_total[8] == "-8"  # a negative number is not mistaken for a formula


def test_csv_neutralises_formulas():
    assert selectors.csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert selectors.csv_safe("+1+2") == "'+1+2"
    assert selectors.csv_safe("-0.25") == "-0.25"
    assert selectors.csv_safe("@x") == "'@x"


def test_analytics_numbers_on_known_answers(people, known):
    report = selectors.assignment_analytics(assignment=known["assignment"])
    assert report["students"] == 4
    product, total = report["exercises"][0]["parts"]
    assert (product["attempts"], product["students"], product["graded"], product["awaiting"]) == (5, 4, 4, 0)
    assert (product["mean_score"], product["facility"]) == (0.75, 0.375)
    # uma never answered 'total': she is not a 0 in its mean (sam 1, sue 1, tom 0).
    assert (total["attempts"], total["students"], total["graded"], total["awaiting"]) == (3, 3, 3, 0)
    assert (total["mean_score"], total["facility"]) == (2 / 3, 2 / 3)
    # part points [2, 0, 0, 1] against rest-of-test [1, 1, 0, 0]: r = 0.5 / sqrt(2.75)
    assert product["discrimination"] == pytest.approx(0.5 / math.sqrt(2.75), abs=1e-12)
    assert total["discrimination"] == pytest.approx(0.5 / math.sqrt(2.75), abs=1e-12)
    assert product["common_wrong"] == [("13", 2), ("14", 1)]
    assert total["common_wrong"] == [("-8", 1)]
    assert product["misconceptions"] == [("no_scaling", 2), ("divided_by_d_k", 1)]
    assert total["misconceptions"] == []
    assert [(v["seed"], v["attempts"], v["best"], v["solved"]) for v in product["variants"]] == [
        (2, 1, 0.0, False), (3, 1, 0.0, False), (4, 1, 0.5, True), (1, 2, 1.0, True),
    ]


def test_analytics_page_draws_bar_charts(client, people, known):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode()
    assert page.count('<svg class="bar-chart"') == 2  # facility, and misconceptions of 'product'
    assert '<td class="num">0.375</td>' in page and '<td class="num">0.302</td>' in page
    assert ("Only 4 students answered: with fewer than 20, facility and above all discrimination change a lot "
            "with each student. Read them as a hint, not as a measure.") in page


def test_analytics_at_the_threshold_carry_no_small_sample_note(people, known, monkeypatch):
    monkeypatch.setattr(selectors, "DISCRIMINATION_MIN_STUDENTS", 4)
    report = selectors.assignment_analytics(assignment=known["assignment"])
    assert (report["students"], report["small_sample"]) == (4, False)


def test_pearson_without_spread_is_undefined():
    assert selectors.pearson([1, 1, 1], [0, 1, 2]) is None
    assert selectors.pearson([1], [1]) is None
    assert selectors.pearson([0, 1], [0, 1]) == pytest.approx(1.0)


@pytest.fixture
def essay(people):
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay", late_penalty=0.2)
    variant = variant_for(assignment.items.get(), people.student, params={"d": 64})
    submission = submission_add(variant, "why", "The variance grows with d.", awarded=None,
                                status=SubmissionStatus.MANUAL)
    Submission.objects.filter(pk=submission.pk).update(is_late=True)
    return submission


def test_manual_grading_with_the_rubric_sets_the_grade_and_records_the_grader(client, people, essay):
    client.login(username="tariq", password=PASSWORD)
    url = reverse("instructor:manual_grade", args=["attn", essay.pk])
    page = client.get(url).content.decode()
    assert "mentions that the dot product&#x27;s variance grows with d_k (2 pts)" in page
    queue = client.get(reverse("instructor:manual_queue", args=["attn"])).content.decode()
    assert f"Grade {essay.pk}" in queue
    response = client.post(url, {"criteria": ["0"], "comment": "Good, but say why saturation hurts."})
    assert response.status_code == 302
    essay.refresh_from_db()
    assert (essay.status, essay.score, essay.correct) == (SubmissionStatus.GRADED, 2 / 3, False)
    assert essay.awarded == pytest.approx(2 / 3 * 0.8)
    assert essay.feedback["message"] == "Good, but say why saturation hurts."
    grade = ManualGrade.objects.get()
    assert (grade.grader, grade.criteria_met, grade.score) == (people.ta, [0], 2 / 3)
    assert f"Grade {essay.pk}" not in client.get(reverse("instructor:manual_queue", args=["attn"])).content.decode()


def test_manual_grading_refuses_bad_scores_and_non_free_text(client, people, essay, known):
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:manual_grade", args=["attn", essay.pk])
    assert client.post(url, {"score": "1.5"}).status_code == 422
    assert client.post(url, {"criteria": ["7"]}).status_code == 422
    full = client.post(url, {"score": "1"})
    assert full.status_code == 302
    essay.refresh_from_db()
    assert (essay.score, essay.correct) == (1.0, True)
    numeric = Submission.objects.filter(part="product").first()
    refused = client.post(reverse("instructor:manual_grade", args=["attn", numeric.pk]), {"score": "1"})
    assert refused.status_code == 422 and "Only free-text answers" in refused.content.decode()


def test_a_manual_grade_announces_the_new_score(client, people, essay):
    from grading.events import grade_changed as submission_scored

    received = []

    def receiver(sender, submission, **kwargs):
        received.append((submission.pk, submission.score))

    submission_scored.connect(receiver)
    try:
        client.login(username="ines", password=PASSWORD)
        client.post(reverse("instructor:manual_grade", args=["attn", essay.pk]), {"score": "0.5"})
    finally:
        submission_scored.disconnect(receiver)
    assert received == [(essay.pk, 0.5)]
