"""One rounding rule for every score shown (half up on the decimal value): the student's
assignment page, the assignment and course gradebooks and their CSV/XLSX exports agree.

The scene: sam's exercise "third" is worth 0.125 point (Python's round and format gave
"0.12", Django's floatformat "0.13") and the assignment's total is 2.425 (which read 2.42 in
the course gradebook and 2.43 elsewhere)."""

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from grading.core.score_rounding import percent_text, score_decimal, score_number, score_text
from grading.templatetags.scores import score


@pytest.mark.parametrize(
    "value, places, text",
    [
        (0.125, 2, "0.13"),  # binary 0.125 is exact: half up, not half to even ("0.12")
        (2.425, 2, "2.43"),  # the float is 2.42499999999999982…: its decimal value is 2.425
        (1.8 + 0.625, 2, "2.43"),  # the same total reached by a sum of floats
        (0.1 + 0.2, 1, "0.3"),  # float noise past 10 decimals is cleared
        (2.675, 2, "2.68"),
        (0.005, 2, "0.01"),
        (0.0049999, 2, "0.00"),
        (3, 2, "3.00"),
        (-0.125, 2, "-0.13"),  # half away from zero
        (-0.001, 2, "0.00"),  # no "-0.00"
        (80.45, 1, "80.5"),
        (Decimal("0.125"), 2, "0.13"),
    ],
)
def test_score_text_rounds_half_up_on_the_decimal_value(value, places, text):
    assert score_text(value, places) == text


@pytest.mark.parametrize(
    "value, places, number",
    [(0.125, 2, 0.13), (2.425, 4, 2.425), (1 / 3, 4, 0.3333), (0.00005, 4, 0.0001), (2, 4, 2.0), (80.125, 2, 80.13)],
)
def test_score_number_is_the_same_rule_as_a_number(value, places, number):
    result = score_number(value, places)
    assert result == number and type(result) is float


@pytest.mark.parametrize(
    "fraction, text",
    [(1, "100%"), (0.9, "90%"), (0.125, "12.5%"), (0.0125, "1.3%"), (0.00125, "0.1%"), (0, "0%"), (0.66666, "66.7%")],
)
def test_percent_text(fraction, text):
    assert percent_text(fraction) == text


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc"])
def test_what_is_not_a_number_is_refused_and_the_filter_prints_nothing(value):
    with pytest.raises(ValueError):
        score_decimal(value, 2)
    assert score(value) == ""


def test_the_filter_takes_the_places_and_prints_nothing_for_none():
    assert (score(0.125), score(80.45, 1), score(None), score("")) == ("0.13", "80.5", "", "")


@pytest.fixture
def scene(people):
    """sam: "first" (2 points) product 1, total 0.675 -> 1.675; "second" (1 point) product
    1, total 0.25 -> 0.625; "third" (1 point) product 0.25, total unanswered -> 0.125.
    Total 2.425 of 4 points: 60.625 %."""
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("first", "second", "third")]
    assignment = assignment_create(people.course, versions)
    items = list(assignment.items.order_by("position"))
    items[0].points = 2
    items[0].save()
    scores = [{"product": 1.0, "total": 0.675}, {"product": 1.0, "total": 0.25}, {"product": 0.25}]
    for seed, (item, parts) in enumerate(zip(items, scores), start=1):
        variant = variant_for(item, people.student, params={"a": 3, "b": 4}, seed=seed)
        for part, awarded in parts.items():
            submission_add(variant, part, "0", awarded=awarded)
    return assignment


def test_every_page_and_export_shows_the_same_rounded_scores(client, people, scene):
    client.login(username="sam", password=PASSWORD)
    mine = client.get(reverse("assignment", args=["attn", "week1"])).content.decode()
    assert '<td id="points-total">2.43 of 4 points</td>' in mine
    assert "0.13 of 1 point" in mine and "1.68 of 2 points" in mine and "0.63 of 1 point" in mine

    client.login(username="ines", password=PASSWORD)
    book = client.get(reverse("instructor:gradebook", args=["attn", "week1"])).content.decode()
    sam_row = book.split(">sam</a>")[1].split("</tr>")[0]
    cells = [cell.split("<")[0] for cell in sam_row.split('<td class="num">')[1:]]
    assert cells == ["1.68", "0.63", "0.13", "2.43", "60.6"]

    course = client.get(reverse("instructor:course_gradebook", args=["attn"])).content.decode()
    course_row = course.split("Stone")[1].split("</tr>")[0]
    assert ">2.43<" in course_row and "2.42" not in course_row and ">60.6<" in course_row

    wide = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(wide.streaming_content).decode())))
    sam = next(row for row in rows if row[0] == "sam")
    assert sam[5:10] == ["1.675", "0.625", "0.125", "2.425", "60.63"]

    whole = client.get(reverse("instructor:course_gradebook_csv", args=["attn"]))
    rows = list(csv.reader(io.StringIO(b"".join(whole.streaming_content).decode())))
    sam = next(row for row in rows if row[0] == "sam")
    assert sam[5:7] == ["2.425", "60.63"]

    from openpyxl import load_workbook

    xlsx = client.get(reverse("instructor:gradebook_xlsx", args=["attn", "week1"]))
    sheet = load_workbook(io.BytesIO(xlsx.content)).active
    sam = next(row for row in sheet.iter_rows(values_only=True) if row[0] == "sam")
    assert sam[5:10] == (1.675, 0.625, 0.125, 2.425, 60.63)


def test_the_assignments_percent_on_my_courses_page_is_rounded_half_up(client, people):
    """2.5 of 4 points is 62.5 %: shown 63 % (Python's round gave 62)."""
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("first", "second", "third")]
    assignment = assignment_create(people.course, versions)
    items = list(assignment.items.order_by("position"))
    items[0].points = 2
    items[0].save()
    scores = [{"product": 1.0, "total": 0.25}, {"product": 1.0, "total": 1.0}, {"product": 0.5}]
    for seed, (item, parts) in enumerate(zip(items, scores), start=1):
        variant = variant_for(item, people.student, params={"a": 3, "b": 4}, seed=seed)
        for part, awarded in parts.items():
            submission_add(variant, part, "0", awarded=awarded)
    client.login(username="sam", password=PASSWORD)
    assert client.get("/api/v1/courses/attn/assignments/").json()[0]["score_percent"] == 63
    assert "<td>63%</td>" in client.get(reverse("dashboard")).content.decode()
