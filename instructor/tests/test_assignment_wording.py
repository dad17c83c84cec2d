"""The assignment's summary and form say what is set, in words a lecturer reads."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version


@pytest.fixture
def week1(people):
    return assignment_create(people.course, [published_version(source=product_yaml())], attempts_per_part=1)


def _summary(client) -> str:
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    start = page.index('<p id="assignment-summary">')
    return " ".join(page[start:page.index("</p>", start)].split())


def test_the_summary_counts_one_attempt_and_names_no_penalty_as_none(client, people, week1):
    client.login(username="ines", password=PASSWORD)
    summary = _summary(client)
    assert "1 attempt per part" in summary
    assert "no penalty for extra attempts · no late penalty" in summary
    week1.attempts_per_part, week1.penalty_per_extra_attempt, week1.late_penalty = 3, 0.1, 0.25
    week1.save()
    assert "3 attempts per part · −10 % per extra attempt · late −25 %" in _summary(client)


def test_the_new_assignment_form_has_no_code_to_remove_and_labels_the_time_limit(client, people, week1):
    client.login(username="ines", password=PASSWORD)
    new = client.get(reverse("instructor:assignment_new", args=["attn"])).content.decode()
    assert "Remove the access code" not in new
    assert '<label for="id_time_limit_minutes">Time limit (minutes):</label>' in new
    week1.access_code = "secret-code"
    week1.save()
    edit = client.get(reverse("instructor:assignment_edit", args=["attn", "week1"])).content.decode()
    assert "Remove the access code" in edit


def test_the_exercises_are_numbered_from_one_in_their_order(client, people):
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb")]
    assignment_create(people.course, versions)
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    rows = page[page.index('<table class="data" id="items">'):page.index("</table>", page.index('id="items"'))]
    assert [cell.split("</td>")[0] for cell in rows.split("<tr><td>")[1:]] == ["1", "2"]
