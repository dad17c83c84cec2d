"""Assignment set-up: the slug made from the title, the preset values on the form for the
static script, and a summary that says kind, attempts and solutions correctly."""

import json

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create
from courses.models import Assignment
from instructor import selectors
from instructor.forms import REVIEW_PRESETS, AssignmentForm

REQUIRED = {"attempts_per_part": "1", "penalty_per_extra_attempt": "0", "late_penalty": "0", "solution_policy": "never"}


def test_a_new_assignment_without_a_slug_gets_one_from_its_title(client, people):
    client.login(username="ines", password=PASSWORD)
    response = client.post(
        reverse("instructor:assignment_new", args=["attn"]),
        {"title": "Week 3: Multi-head attention!", "slug": "", **REQUIRED},
    )
    assert response.status_code == 302
    assert Assignment.objects.get(course=people.course).slug == "week-3-multi-head-attention"
    again = client.post(
        reverse("instructor:assignment_new", args=["attn"]),
        {"title": "Week 3: multi-head attention", "slug": "", **REQUIRED},
    )
    assert again.status_code == 422 and "already has an assignment called" in again.content.decode()


def test_editing_with_an_empty_slug_keeps_the_old_one(people):
    assignment = assignment_create(people.course, [], slug="week1")
    form = AssignmentForm({"title": "Renamed", "slug": "", **REQUIRED}, instance=assignment)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["slug"] == "week1"


def test_the_preset_select_carries_its_values_for_the_script(client, people):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:assignment_new", args=["attn"])).content.decode()
    assert "attnquiz/assignment_form.js" in page and "<script>" not in page
    assert json.loads(AssignmentForm().fields["review_preset"].widget.attrs["data-presets"]) == REVIEW_PRESETS


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"solution_policy": "never"}, "solutions never shown"),
        ({"solution_policy": "after_solved", "show_solutions": "never"}, "solutions never shown"),
        ({"solution_policy": "after_solved"}, "solutions: once the part is solved or attempts are used up"),
        ({"solution_policy": "always", "show_solutions": "on_release"},
         "solutions: always, and only when released (to attempts that have ended)"),
    ],
)
def test_solutions_in_words(people, fields, words):
    assignment = assignment_create(people.course, [], slug="s", **fields)
    assert selectors.solutions_in_words(assignment=assignment) == words


def test_the_summary_counts_attempts_and_names_the_kind(client, people):
    assignment_create(people.course, [], slug="quiz", kind="exam", attempts_per_part=1, solution_policy="never")
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:assignment", args=["attn", "quiz"])).content.decode()
    summary = page.split('id="assignment-summary">')[1].split("</p>")[0]
    assert summary.startswith("Quiz or exam · opens")
    assert "1 attempt per part" in summary and "1 attempts" not in summary
    assert "solutions never shown" in summary and "once the part is solved" not in summary
