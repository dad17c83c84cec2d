"""The course gradebook at 300 and at 3,000 students: the page, its CSV and XLSX and the
API read in the same number of queries at both sizes; the page shows 100 students at a
time, searched and sorted, while the exports hold everyone."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import assignment_create, product_yaml, published_version
from courses.models import Enrolment, Role
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus
from instructor import selectors_gradebook, services_gradebook


@pytest.fixture
def course_term(people):
    """Four assignments of one two-part exercise (10 points each) in two categories:
    homework (hw1, hw2, hw3; 40 %, drop the lowest) and exams (exam1; 60 %)."""
    now = timezone.now()
    version = published_version(source=product_yaml(points=2))
    assignments = []
    for slug, days in (("hw1", -3), ("hw2", -2), ("exam1", -1), ("hw3", 9)):
        assignment = assignment_create(people.course, [version], slug=slug, due_at=now + timedelta(days=days))
        assignment.items.update(points=10)
        assignments.append(assignment)
    homework = services_gradebook.grade_category_create(course=people.course, name="Homework", weight=40, drop_lowest=1)
    exams = services_gradebook.grade_category_create(course=people.course, name="Exams", weight=60)
    for assignment in assignments:
        category = exams if assignment.slug == "exam1" else homework
        services_gradebook.assignment_category_set(assignment=assignment, category=category)
    return assignments


def students_add(course, assignments, *, start: int, stop: int) -> None:
    """Students ``start``..``stop - 1`` (``sNNNNN``, student ID ``ID-NNNNN``, last name
    ``LNNNNN``). Student n answers hw1 both parts right, hw2's product right when n is even
    (wrong otherwise) and exam1's product right when n is a multiple of 3; hw3 never."""
    User = get_user_model()
    users = User.objects.bulk_create(
        [User(username=f"s{n:05d}", password="!", first_name="F", last_name=f"L{n:05d}", email=f"s{n}@example.org")
         for n in range(start, stop)]
    )
    Enrolment.objects.bulk_create(
        [Enrolment(course=course, user=user, role=Role.STUDENT, student_id=f"ID-{n:05d}")
         for n, user in zip(range(start, stop), users)]
    )
    items = {assignment.slug: assignment.items.get() for assignment in assignments}
    variants = Variant.objects.bulk_create(
        [
            Variant(exercise_version=item.exercise_version, student=user, assignment_item=item,
                    context=f"assignment:{item.pk}", seed=n, params={"a": 3, "b": 4})
            for n, user in zip(range(start, stop), users)
            for slug, item in items.items() if slug != "hw3"
        ],
        batch_size=2000,
    )
    answers = []
    for variant in variants:
        n, slug = variant.seed, variant.assignment_item.assignment.slug
        if slug == "hw1":
            answers += [(variant, "product", 1.0), (variant, "total", 1.0)]
        elif slug == "hw2":
            answers.append((variant, "product", 1.0 if n % 2 == 0 else 0.0))
        elif n % 3 == 0:
            answers.append((variant, "product", 1.0))
    Submission.objects.bulk_create(
        [
            Submission(variant=variant, student_id=variant.student_id, part=part, raw_answer="12",
                       status=SubmissionStatus.GRADED, score=awarded, awarded=awarded, correct=awarded == 1.0)
            for variant, part, awarded in answers
        ],
        batch_size=2000,
    )


def _get(client, url: str) -> tuple[int, bytes]:
    response = client.get(url)
    assert response.status_code == 200, url
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def _counted(client, url: str):
    with CaptureQueriesContext(connection) as queries:
        response, body = _get(client, url)
    return len(queries), response, body


def _urls(course_slug: str) -> dict[str, str]:
    page = reverse("instructor:course_gradebook", args=[course_slug])
    return {
        "page": page,
        "page sorted by total, page 2": page + "?sort=total&order=desc&page=2",
        "page searched": page + "?student=L00042",
        "csv": reverse("instructor:course_gradebook_csv", args=[course_slug]),
        "xlsx": reverse("instructor:course_gradebook_xlsx", args=[course_slug]),
        "api": reverse("api:course_gradebook", args=[course_slug]),
        "api csv": reverse("api:course_gradebook_csv", args=[course_slug]),
    }


# The queries of each view, whatever the roster: the 8 of the book (see selectors_gradebook)
# and 4 of the request (the session, the user, the course, the caller's enrolment).
QUERIES = 12


def test_same_queries_at_300_and_3000_students(client, people, course_term):
    client.force_login(people.ta)
    urls = _urls(people.course.slug)
    students_add(people.course, course_term, start=0, stop=300)
    at_300 = {name: _counted(client, url)[0] for name, url in urls.items()}
    students_add(people.course, course_term, start=300, stop=3000)
    at_3000, bodies, seconds = {}, {}, {}
    for name, url in urls.items():
        started = time.perf_counter()
        at_3000[name], _response, bodies[name] = _counted(client, url)
        seconds[name] = round(time.perf_counter() - started, 2)
    print(f"\ncourse gradebook at 3,000 students, seconds: {seconds}")
    assert at_300 == {name: QUERIES for name in urls}
    assert at_3000 == at_300
    # The exports hold everyone (3,000 + sam and sue), the CSV a header too.
    assert len(list(csv.reader(io.StringIO(bodies["csv"].decode())))) == 3003
    assert len(json.loads(bodies["api"])["rows"]) == 3002
    assert bodies["api csv"] == bodies["csv"]
    assert bodies["page"].count(b'<tr><th scope="row">') == 100


def test_the_page_shows_100_students_sorted_and_searched(client, people, course_term):
    students_add(people.course, course_term, start=0, stop=250)
    client.force_login(people.instructor)
    url = reverse("instructor:course_gradebook", args=[people.course.slug])

    first = client.get(url)
    page = first.context["page"]
    assert (page.number, page.pages, page.matching, len(page.rows)) == (1, 3, 252, 100)
    assert [row.student.username for row in page.rows[:2]] == ["s00000", "s00001"]  # L00000, L00001
    assert "Students 1–100 of 252" in first.content.decode()

    last = client.get(url + "?page=3").context["page"]
    # By last name: L00000..L00249, then Shaw (sue) and Stone (sam).
    assert [row.student.username for row in last.rows[-3:]] == ["s00249", "sue", "sam"]
    assert len(last.rows) == 52
    assert client.get(url + "?page=99").context["page"].number == 3
    assert client.get(url + "?page=x").context["page"].number == 1

    by_id = client.get(url + "?sort=student_id&order=desc").context["page"]
    assert [row.enrolment.student_id for row in by_id.rows[:2]] == ["ID-00249", "ID-00248"]

    # Total, highest first: n even and a multiple of 3 -> hw1 10/10, hw2 6.67 (the lowest,
    # dropped), exam1 6.67 -> 40 % x 100 + 60 % x 66.67 = 80.
    by_total = client.get(url + "?sort=total&order=desc").context["page"]
    assert by_total.rows[0].total == pytest.approx(80.0)
    assert [row.total for row in by_total.rows] == sorted((row.total for row in by_total.rows), reverse=True)
    # sam and sue answered nothing that is now over: 0 %, the lowest.
    lowest = client.get(url + "?sort=total").context["page"]
    assert [(row.student.username, row.total) for row in lowest.rows[:2]] in (
        [("sam", 0.0), ("sue", 0.0)], [("sue", 0.0), ("sam", 0.0)]
    )

    # Each header sorts by its column; the current one turns the order round and keeps the search.
    html = client.get(url, {"sort": "total", "student": "L00"}).content.decode()
    assert 'aria-sort="ascending"><a href="?sort=total&amp;order=desc&amp;student=L00">Total %</a>' in html
    assert '<a href="?sort=student_id&amp;order=asc&amp;student=L00">Student ID</a>' in html
    next_link = re.search(r'<a href="\?([^"]*)" rel="next">', html).group(1)
    assert sorted(next_link.split("&amp;")) == ["page=2", "sort=total", "student=L00"]

    searched = client.get(url, {"student": "l0004"}).context["page"]
    assert searched.matching == 10 and [r.student.username for r in searched.rows][:2] == ["s00040", "s00041"]
    assert client.get(url, {"student": "F L00007"}).context["page"].matching == 1
    assert client.get(url, {"student": "ID-0012"}).context["page"].matching == 10
    assert client.get(url, {"student": "nobody"}).context["page"].matching == 0


def test_paging_changes_no_student_totals(people, course_term):
    """Each student's category percents and total are the same on any page, in any order,
    as in the whole book (and in the CSV)."""
    students_add(people.course, course_term, start=0, stop=150)
    whole = {row.student.username: (row.category_percents, row.total)
             for row in selectors_gradebook.course_gradebook(course=people.course).rows}
    seen = {}
    for number in (1, 2):
        page = selectors_gradebook.course_gradebook_page(
            course=people.course, sort="total", descending=True, page=number
        )
        seen.update({row.student.username: (row.category_percents, row.total) for row in page.rows})
    assert seen == whole
    # n = 6: hw1 10, hw2 6.67 (even; dropped), exam1 6.67 (multiple of 3) -> homework 100,
    # exams 66.67, total 80. n = 1: hw1 10, hw2 0 (dropped), exam1 0 (over).
    assert whole["s00006"][0] == [100.0, pytest.approx(200 / 3)]
    assert whole["s00006"][1] == pytest.approx(80.0)
    assert whole["s00001"] == ([100.0, 0.0], pytest.approx(40.0))


@pytest.mark.parametrize(
    "sort, descending, expected",
    [
        ("total", False, ["b", "a", "c", "none"]),
        ("total", True, ["c", "a", "b", "none"]),  # nothing counted yet: last either way
        ("username", False, ["a", "b", "c", "none"]),
        ("username", True, ["none", "c", "b", "a"]),
        ("student_id", False, ["c", "b", "a", "none"]),
        ("name", False, ["none", "a", "b", "c"]),
        ("no such sort", False, ["none", "a", "b", "c"]),  # reads as by name
    ],
)
def test_rows_sorted_table(sort, descending, expected):
    from types import SimpleNamespace as NS

    def row(username, last, student_id, total):
        return NS(student=NS(username=username, last_name=last, first_name=""),
                  enrolment=NS(student_id=student_id), total=total)

    rows = [row("a", "Bo", "3", 50.0), row("b", "Co", "2", 10.0), row("c", "Do", "1", 90.0), row("none", "Ab", "4", None)]
    sorted_rows = selectors_gradebook.gradebook_rows_sorted(rows, sort=sort, descending=descending)
    assert [r.student.username for r in sorted_rows] == expected
