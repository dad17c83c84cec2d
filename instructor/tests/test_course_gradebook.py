"""The course gradebook: weighted categories, drop-lowest, not attempted apart from 0,
accommodations, its CSV/XLSX exports, and a fixed number of queries at any roster size."""

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from courses.models import Enrolment, Role
from exams.models import Accommodation, CourseAccommodation
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus
from instructor import grade_totals, selectors_gradebook, services_gradebook
from instructor.services import InstructorRefused

R = grade_totals.AssignmentResult


@pytest.mark.parametrize(
    "results, drop, percent, dropped",
    [
        ([R(1, 5.0, 10, True), R(2, 10.0, 10, True)], 0, 75.0, ()),
        ([R(1, 5.0, 10, True), R(2, 10.0, 10, True)], 1, 100.0, (1,)),
        # Never drops the last counted result.
        ([R(1, 5.0, 10, True)], 3, 50.0, ()),
        # Not attempted and still open: left out; not attempted and over: 0.
        ([R(1, None, 10, False), R(2, 8.0, 10, True)], 0, 80.0, ()),
        ([R(1, None, 10, True), R(2, 8.0, 10, True)], 0, 40.0, ()),
        ([R(1, None, 10, True), R(2, 8.0, 10, True)], 1, 80.0, (1,)),
        # Points-weighted inside a category; a 0-point assignment counts nothing.
        ([R(1, 1.0, 2, True), R(2, 9.0, 18, True), R(3, None, 0, True)], 0, 50.0, ()),
        ([], 0, None, ()),
        ([R(1, None, 10, False)], 0, None, ()),
    ],
)
def test_category_result_table(results, drop, percent, dropped):
    result = grade_totals.category_result(grade_totals.CategoryRule(7, 40, drop), results)
    assert result.percent == (None if percent is None else pytest.approx(percent))
    assert result.dropped == dropped


def test_weighted_total_rescales_to_the_categories_that_count():
    rules = [grade_totals.CategoryRule(1, 40), grade_totals.CategoryRule(2, 60), grade_totals.CategoryRule(3, 0)]
    C = grade_totals.CategoryResult
    assert grade_totals.weighted_total(rules, [C(1, 100.0, ()), C(2, 50.0, ()), C(3, 10.0, ())]) == 70.0
    assert grade_totals.weighted_total(rules, [C(1, 80.0, ()), C(2, None, ()), C(3, 10.0, ())]) == 80.0
    assert grade_totals.weighted_total(rules, [C(1, None, ()), C(2, None, ()), C(3, 10.0, ())]) is None


@pytest.fixture
def term(people):
    """hw1, hw2 (homework 40 %, drop lowest 1), exam1 (exams 60 %), hw3 still open.
    Each has one exercise worth 10 points: part 'product' 2/3 of it, 'total' 1/3.

    sam: hw1 10/10, hw2 0/10 (answered, wrong), exam1 product only (6.67), hw3 nothing.
    sue: hw1 not attempted, hw2 product only (6.67), exam1 not attempted (accommodated).
    """
    now = timezone.now()
    version = published_version(source=product_yaml(points=2))
    assignments = {}
    dues = {"hw1": -3, "hw2": -2, "exam1": -1, "hw3": 9}
    for slug, days in dues.items():
        due = now + timedelta(days=days)
        assignment = assignment_create(people.course, [version], slug=slug, due_at=due)
        assignment.items.update(points=10)
        assignments[slug] = assignment
    homework = services_gradebook.grade_category_create(course=people.course, name="Homework", weight=40, drop_lowest=1)
    exams = services_gradebook.grade_category_create(course=people.course, name="Exams", weight=60)
    for slug in ("hw1", "hw2", "hw3"):
        services_gradebook.assignment_category_set(assignment=assignments[slug], category=homework)
    services_gradebook.assignment_category_set(assignment=assignments["exam1"], category=exams)

    def answer(slug, user, part, awarded, seed):
        item = assignments[slug].items.get()
        variant = Variant.objects.filter(assignment_item=item, student=user).first() or variant_for(
            item, user, params={"a": 3, "b": 4}, seed=seed
        )
        submission_add(variant, part, "12", awarded=awarded)

    sam, sue = people.student, people.student2
    answer("hw1", sam, "product", 1.0, 1)
    answer("hw1", sam, "total", 1.0, 1)
    answer("hw2", sam, "product", 0.0, 2)
    answer("hw2", sam, "total", 0.0, 2)
    answer("exam1", sam, "product", 1.0, 3)
    answer("hw2", sue, "product", 1.0, 4)
    Accommodation.objects.create(assignment=assignments["exam1"], student=sue, time_factor=1.5)
    Enrolment.objects.filter(user=sam).update(student_id="S-001")
    Enrolment.objects.filter(user=sue).update(student_id="S-002")
    get_user_model().objects.filter(pk=sam.pk).update(email="sam@example.org")
    return assignments


def test_course_gradebook_weighs_categories_and_drops_the_lowest(people, term):
    book = selectors_gradebook.course_gradebook(course=people.course)
    assert [c.assignment.slug for c in book.columns] == ["hw1", "hw2", "exam1", "hw3"]
    assert [c.label for c in book.categories] == ["Homework (40 %)", "Exams (60 %)"]
    rows = {row.student.username: row for row in book.rows}
    assert list(rows) == ["sue", "sam"]  # by last name: Shaw, Stone
    sam, sue = rows["sam"], rows["sue"]
    assert [cell.earned for cell in sam.cells] == [10.0, 0.0, pytest.approx(20 / 3), None]
    assert [cell.dropped for cell in sam.cells] == [False, True, False, False]
    assert sam.category_percents == [100.0, pytest.approx(200 / 3)]
    assert sam.total == pytest.approx(80.0)
    assert [cell.earned for cell in sue.cells] == [None, pytest.approx(20 / 3), None, None]
    assert [cell.shown for cell in sue.cells] == ["not attempted", "6.67", "not attempted", "not attempted"]
    assert [cell.dropped for cell in sue.cells] == [True, False, False, False]
    assert sue.category_percents == [pytest.approx(200 / 3), 0.0]
    assert sue.total == pytest.approx(80 / 3)
    assert [cell.accommodated for cell in sue.cells] == [False, False, True, False]
    assert not sam.accommodated and sue.accommodated


@pytest.mark.parametrize(
    "course_wide, marked",
    [
        ({"time_factor": 1.5}, [False, False, True, False]),  # extra time: only the timed exam
        ({"extra_minutes": 10}, [False, False, True, False]),
        ({"attempts_per_part": 5}, [True, True, True, True]),  # attempts: every assignment
        ({"note": "letter on file"}, [False, False, False, False]),  # changes nothing
    ],
)
def test_a_course_wide_accommodation_marks_the_assignments_it_changes(people, term, course_wide, marked):
    term["exam1"].time_limit_minutes = 30
    term["exam1"].save(update_fields=["time_limit_minutes"])
    CourseAccommodation.objects.create(course=people.course, student=people.student, **course_wide)
    book = selectors_gradebook.course_gradebook(course=people.course)
    sam = next(row for row in book.rows if row.student.username == "sam")
    assert [cell.accommodated for cell in sam.cells] == marked


def test_without_categories_the_total_is_points_over_points(people, term):
    people.course.grade_categories.all().delete()
    book = selectors_gradebook.course_gradebook(course=people.course)
    sam = next(row for row in book.rows if row.student.username == "sam")
    # hw3 is still open and unanswered: out of 30, not 40.
    assert sam.total == pytest.approx(100 * (10 + 0 + 20 / 3) / 30)
    assert selectors_gradebook.course_gradebook_table(book=book)[0][-2:] == ["total %", "pending"]


def test_the_table_has_ids_emails_and_not_attempted(people, term):
    table = selectors_gradebook.course_gradebook_table(book=selectors_gradebook.course_gradebook(course=people.course))
    assert table[0] == [
        "username", "student_id", "email", "first_name", "last_name",
        "Hw1 (/10)", "Hw2 (/10)", "Exam1 (/10)", "Hw3 (/10)", "Homework (40 %) %", "Exams (60 %) %", "total %",
        "pending",
    ]
    by_user = {line[0]: line for line in table[1:]}
    assert by_user["sam"] == ["sam", "S-001", "sam@example.org", "Sam", "Stone", 10.0, 0.0, 6.6667,
                              "not attempted", 100.0, 66.67, 80.0, ""]
    assert by_user["sue"][5:] == ["not attempted", 6.6667, "not attempted", "not attempted", 66.67, 0.0, 26.67, ""]


def test_assignment_titles_and_category_names_in_the_header_cannot_be_formulas(people, term):
    term["hw1"].title = '=HYPERLINK("http://evil.example","Grades")'
    term["hw1"].save(update_fields=["title"])
    people.course.grade_categories.filter(name="Exams").update(name="=cmd|' /C calc'!A0*")
    people.course.grade_categories.filter(name="Homework").update(name="@SUM(1)+cmd")
    header = selectors_gradebook.course_gradebook_table(book=selectors_gradebook.course_gradebook(course=people.course))[0]
    assert header[5:11] == [
        '\'=HYPERLINK("http://evil.example","Grades") (/10)', "Hw2 (/10)", "Exam1 (/10)", "Hw3 (/10)",
        "'@SUM(1)+cmd (40 %) %", "'=cmd|' /C calc'!A0* (60 %) %",
    ]


def test_csv_download_with_and_without_the_excel_mark(client, people, term):
    client.login(username="tariq", password=PASSWORD)  # a TA reads it
    url = reverse("instructor:course_gradebook_csv", args=[people.course.slug])
    plain = b"".join(client.get(url).streaming_content)
    excel = b"".join(client.get(url + "?excel=1").streaming_content)
    assert not plain.startswith(b"\xef\xbb\xbf")
    assert excel == b"\xef\xbb\xbf" + plain
    rows = list(csv.reader(io.StringIO(plain.decode())))
    assert rows[2][:3] == ["sam", "S-001", "sam@example.org"]


def test_xlsx_download(client, people, term):
    from openpyxl import load_workbook

    client.login(username="ines", password=PASSWORD)
    response = client.get(reverse("instructor:course_gradebook_xlsx", args=[people.course.slug]))
    assert response.status_code == 200
    sheet = load_workbook(io.BytesIO(response.content)).active
    values = [[cell.value for cell in row] for row in sheet.iter_rows()]
    assert values[2][:6] == ["sam", "S-001", "sam@example.org", "Sam", "Stone", 10]
    assert values[1][5] == "not attempted"


@pytest.mark.parametrize("role, status", [("student", 403), ("outsider", 404), ("ta", 200), ("instructor", 200)])
def test_course_gradebook_page_access(client, people, term, role, status):
    username = {"student": "sam", "outsider": "otto", "ta": "tariq", "instructor": "ines"}[role]
    client.login(username=username, password=PASSWORD)
    response = client.get(reverse("instructor:course_gradebook", args=[people.course.slug]))
    assert response.status_code == status
    if status == 200:
        html = response.content.decode()
        assert "S-001" in html and "not attempted" in html and "80.0" in html


def test_categories_are_set_by_instructors_only_and_checked(client, people, term):
    url = reverse("instructor:grade_category_add", args=[people.course.slug])
    client.login(username="tariq", password=PASSWORD)
    assert client.post(url, {"name": "Labs", "weight": 10, "drop_lowest": 0}).status_code == 403
    client.login(username="ines", password=PASSWORD)
    client.post(url, {"name": "Labs", "weight": 150, "drop_lowest": 0})
    client.post(url, {"name": "homework", "weight": 10, "drop_lowest": 0})
    assert list(people.course.grade_categories.values_list("name", flat=True)) == ["Homework", "Exams"]
    client.post(url, {"name": "Labs", "weight": 10, "drop_lowest": 0})
    labs = people.course.grade_categories.get(name="Labs")
    response = client.post(
        reverse("instructor:assignment_categories_set", args=[people.course.slug]),
        {f"category-{term['hw3'].pk}": str(labs.pk), f"category-{term['hw1'].pk}": "999999"},
    )
    assert response.status_code == 302
    assert list(term["hw3"].grade_categories.all()) == [labs]
    assert term["hw1"].grade_categories.get().name == "Homework"  # an unknown choice changes nothing
    with pytest.raises(InstructorRefused):
        services_gradebook.assignment_category_set(
            assignment=term["hw1"],
            category=services_gradebook.grade_category_create(course=people.other_course, name="X", weight=1),
        )


def _roster(course, *, students: int, assignment) -> None:
    """``students`` students, each with one graded answer on the assignment's exercise."""
    User = get_user_model()
    users = User.objects.bulk_create(
        [User(username=f"s{index:05d}", password="!", last_name=f"L{index}") for index in range(students)]
    )
    Enrolment.objects.bulk_create(
        [Enrolment(course=course, user=user, role=Role.STUDENT, student_id=f"{index}") for index, user in enumerate(users)]
    )
    item = assignment.items.get()
    variants = Variant.objects.bulk_create(
        [
            Variant(exercise_version=item.exercise_version, student=user, assignment_item=item,
                    context=f"assignment:{item.pk}", seed=index, params={"a": 3, "b": 4})
            for index, user in enumerate(users)
        ]
    )
    Submission.objects.bulk_create(
        [
            Submission(variant=variant, student_id=variant.student_id, part="product", raw_answer="12",
                       status=SubmissionStatus.GRADED, score=1.0, awarded=1.0, correct=True)
            for variant in variants
        ]
    )


@pytest.mark.parametrize("students", [300, 3000])
def test_course_gradebook_reads_in_a_fixed_number_of_queries(people, term, students, django_assert_num_queries):
    _roster(people.course, students=students, assignment=term["hw3"])
    with django_assert_num_queries(8):
        book = selectors_gradebook.course_gradebook(course=people.course)
        table = selectors_gradebook.course_gradebook_table(book=book)
    assert len(table) == students + 3  # header, sam, sue
    assert table[1][:2] == ["s00000", "0"]
    assert table[1][8] == pytest.approx(20 / 3, abs=1e-4)
