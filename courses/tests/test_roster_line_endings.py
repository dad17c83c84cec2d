"""Roster files end their lines as Windows (CR LF), Unix (LF) or old Mac OS (a lone CR)
programs write them: each line is one row, in the dry run and in the import alike."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD
from courses.models import Enrolment, Role
from courses.services import roster_rows_from_csv

LINES = ["username,email,role", "sam,,", "", ",ada@example.org,ta", "sue,,"]
ROWS = [
    {"line": 2, "username": "sam", "email": "", "role": ""},
    {"line": 4, "username": "", "email": "ada@example.org", "role": "ta"},
    {"line": 5, "username": "sue", "email": "", "role": ""},
]
ENDINGS = {"LF": "\n", "CR LF": "\r\n", "lone CR": "\r"}


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
@pytest.mark.parametrize("last_line_ended", [True, False], ids=["ended", "unended"])
def test_every_line_ending_separates_rows(ending, last_line_ended):
    text = ending.join(LINES) + (ending if last_line_ended else "")
    assert roster_rows_from_csv(text) == ROWS


def test_a_file_mixing_line_endings_keeps_its_line_numbers():
    text = "username,email,role\rsam,,\r\n\n,ada@example.org,ta\rsue,,\n"
    assert roster_rows_from_csv(text) == ROWS


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_a_line_break_inside_quotes_stays_in_its_field(ending):
    """The row is numbered by the line it ends on, as csv.reader counts."""
    rows = roster_rows_from_csv(ending.join(["username,name", '"sam","Sam' + ending + 'Stone"', "sue,Sue", ""]))
    assert rows == [
        {"line": 3, "username": "sam", "name": f"Sam{ending}Stone"}, {"line": 4, "username": "sue", "name": "Sue"},
    ]


def _report(page) -> list[tuple[int, str, str]]:
    return [(line.line, line.who, line.action) for line in page.context["report"].lines]


EXPECTED_REPORT = [(2, "sam", "skip"), (4, "ada@example.org", "create"), (5, "sue", "skip")]


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_the_dry_run_and_the_import_read_the_same_rows(client, people, ending):
    text = ending.join(LINES) + ending
    client.login(username="ines", password=PASSWORD)
    url = reverse("courses:roster", args=["attn"])
    dry = client.post(url, {"text": text})
    assert dry.status_code == 200
    assert _report(dry) == EXPECTED_REPORT
    assert not Enrolment.objects.filter(course=people.course, user__email="ada@example.org").exists()
    applied = client.post(url, {"text": text, "apply": "1"})
    assert applied.status_code == 200 and applied.context["report"].dry_run is False
    assert _report(applied) == EXPECTED_REPORT
    assert Enrolment.objects.get(course=people.course, user__email="ada@example.org").role == Role.TEACHING_ASSISTANT


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_an_uploaded_file_is_read_as_the_pasted_text(client, people, ending):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("roster.csv", ("\ufeff" + ending.join(LINES) + ending).encode("utf-8"), "text/csv")
    client.login(username="ines", password=PASSWORD)
    dry = client.post(reverse("courses:roster", args=["attn"]), {"file": upload})
    assert dry.status_code == 200
    assert _report(dry) == EXPECTED_REPORT
