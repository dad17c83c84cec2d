"""No exported cell is a formula: the CSV prefixes a formula-like text with "'", the XLSX
writes it as a text cell (quote prefix, no visible apostrophe), read back with openpyxl."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from openpyxl import load_workbook

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for
from instructor.csv_response import NeutralisedText, formula_safe

LINK = '=HYPERLINK("http://evil.example/","click")'


@pytest.mark.parametrize(
    "value, csv_text, xlsx_text",
    [
        (LINK, "'" + LINK, LINK),
        ("+1+2", "'+1+2", "+1+2"),
        ("@SUM(A1)", "'@SUM(A1)", "@SUM(A1)"),
        ("\tx", "'\tx", "\tx"),
    ],
)
def test_a_formula_like_text_is_neutralised(value, csv_text, xlsx_text):
    safe = formula_safe(value)
    assert isinstance(safe, NeutralisedText)
    assert (str(safe), safe.text) == (csv_text, xlsx_text)


@pytest.mark.parametrize("value, safe", [("-0.25", "-0.25"), (-3, -3), (1.5, 1.5), ("Sam", "Sam"), (None, "")])
def test_numbers_and_plain_texts_are_left_alone(value, safe):
    result = formula_safe(value)
    assert result == safe and not isinstance(result, NeutralisedText)


@pytest.fixture
def sam_links(people):
    get_user_model().objects.filter(pk=people.student.pk).update(first_name=LINK, last_name="-minus")
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    variant = variant_for(assignment.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", LINK, awarded=0.0)
    return assignment


def _xlsx_row(content: bytes, username: str):
    sheet = load_workbook(io.BytesIO(content)).active
    return next(row for row in sheet.iter_rows() if row[0].value == username)


@pytest.mark.parametrize("view, args", [
    ("instructor:gradebook_xlsx", ["attn", "week1"]),
    ("instructor:course_gradebook_xlsx", ["attn"]),
])
def test_the_xlsx_shows_the_text_without_an_apostrophe_and_never_as_a_formula(client, sam_links, view, args):
    client.login(username="ines", password=PASSWORD)
    row = _xlsx_row(client.get(reverse(view, args=args)).content, "sam")
    first, last = row[3], row[4]
    assert (first.value, first.data_type, first.quotePrefix) == (LINK, "s", True)
    assert (last.value, last.data_type, last.quotePrefix) == ("-minus", "s", True)
    assert (row[0].value, row[0].data_type, row[0].quotePrefix) == ("sam", "s", False)
    assert row[5].data_type == "n"  # scores stay numbers


def test_the_xlsx_file_holds_no_formula_at_all(client, sam_links):
    import zipfile

    client.login(username="ines", password=PASSWORD)
    content = client.get(reverse("instructor:gradebook_xlsx", args=["attn", "week1"])).content
    sheet_xml = zipfile.ZipFile(io.BytesIO(content)).read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet_xml and 't="str"' not in sheet_xml
    assert '<c r="D2" s="1" t="inlineStr"><is><t>=HYPERLINK("http://evil.example/","click")</t></is></c>' in sheet_xml


def test_the_csv_keeps_its_apostrophe(client, sam_links):
    client.login(username="ines", password=PASSWORD)
    response = client.get(reverse("instructor:gradebook_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    sam = next(row for row in rows if row[0] == "sam")
    assert sam[3:5] == ["'" + LINK, "'-minus"]
    answers = client.get(reverse("instructor:submissions_csv", args=["attn", "week1"]))
    rows = list(csv.reader(io.StringIO(b"".join(answers.streaming_content).decode())))
    assert rows[1][8] == "'" + LINK
