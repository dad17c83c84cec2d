"""The gradebook exports write the same value in the same cell: the CSV's text reads as the
XLSX's cell (a whole number without ".0", a fraction as its decimal, a blank as an empty
cell, "not attempted" as that text), read back with csv and openpyxl."""

import csv
import io

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for
from instructor.csv_response import csv_cell


@pytest.fixture
def scored(people):
    """Three exercises of 2 points (part 'product' 1 point): sam earned 0, 0.25 and 1 of
    them; sue answered nothing."""
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("zero", "quarter", "whole")]
    assignment = assignment_create(people.course, versions)
    items = list(assignment.items.order_by("position"))
    for item, awarded in zip(items, (0.0, 0.25, 1.0)):
        item.points = 2
        item.save()
        submission_add(variant_for(item, people.student, params={"a": 3, "b": 4}), "product", "12", awarded=awarded)
    return assignment


def csv_rows(client, url) -> list[list[str]]:
    return list(csv.reader(io.StringIO(b"".join(client.get(url).streaming_content).decode())))


def xlsx_rows(client, url) -> list[list]:
    sheet = load_workbook(io.BytesIO(client.get(url).content)).active
    return [[cell.value for cell in row] for row in sheet.iter_rows()]


def as_csv_reads(value) -> str:
    """What a CSV cell says for an XLSX cell: an empty cell is a blank."""
    return "" if value is None else str(value)


def test_the_assignment_gradebook_writes_the_same_values_as_csv_and_xlsx(client, people, scored):
    client.login(username="ines", password=PASSWORD)
    from_csv = csv_rows(client, reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    from_xlsx = xlsx_rows(client, reverse("instructor:gradebook_xlsx", args=["attn", "week1"]))
    assert from_csv[1:] == [
        ["sam", "", "", "Sam", "Stone", "0", "0.25", "1", "1.25", "20.83", ""],
        ["sue", "", "", "Sue", "Shaw", "not attempted", "not attempted", "not attempted", "not attempted", "", ""],
    ]
    assert from_xlsx[1:] == [
        ["sam", None, None, "Sam", "Stone", 0, 0.25, 1, 1.25, 20.83, None],
        ["sue", None, None, "Sue", "Shaw", "not attempted", "not attempted", "not attempted", "not attempted",
         None, None],
    ]
    assert [[as_csv_reads(value) for value in row] for row in from_xlsx] == from_csv


def test_the_course_gradebook_writes_the_same_values_as_csv_and_xlsx(client, people, scored):
    client.login(username="ines", password=PASSWORD)
    from_csv = csv_rows(client, reverse("instructor:course_gradebook_csv", args=["attn"]))
    from_xlsx = xlsx_rows(client, reverse("instructor:course_gradebook_xlsx", args=["attn"]))
    assert {row[0]: row[5:] for row in from_csv[1:]} == {
        "sam": ["1.25", "20.83", ""], "sue": ["not attempted", "", ""],
    }
    assert [[as_csv_reads(value) for value in row] for row in from_xlsx] == from_csv


@pytest.mark.parametrize(
    "value, written",
    [(0.0, "0"), (-0.0, "0"), (1.0, "1"), (3.0, "3"), (0.25, "0.25"), (33.33, "33.33"), (0.1235, "0.1235"),
     (7, "7"), ("", ""), ("not attempted", "not attempted"), ("'=1+2", "'=1+2")],
)
def test_acsv_cell_is_written_as_the_spreadsheet_shows_it(value, written):
    line = io.StringIO()
    csv.writer(line).writerow([csv_cell(value), "next"])
    assert line.getvalue() == written + ",next\r\n"
