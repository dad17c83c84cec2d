"""A matrix part's grid on a reloaded exercise page: the entries of the last answer are back
in their cells, marked wrong only where its grade said so and the review policy shows it."""

import re

import numpy as np
import pytest
from django.urls import reverse

from courses.models import AssignmentItem, ReleaseMoment
from exercises import engine
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus

WORKED_EXAMPLE = "attention-weights-one-query"  # part (b) "output": a 1 × 4 grid
CELL = '<input name="cell-0-{c}" aria-label="{label} entry of part (b)" inputmode="text" autocomplete="off" autocapitalize="off" autocorrect="off" spellcheck="false" size="7"'
LABELS = ["first", "second", "third", "fourth"]


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)


@pytest.fixture
def variant(client, item):
    assert client.login(username="student1", password="attention-demo")
    client.get(reverse("exercise", args=[item.pk]))
    return Variant.objects.get(student__username="student1", assignment_item=item)


def output_with_the_last_entry_wrong(variant) -> list[str]:
    spec = engine.spec_from_json(variant.exercise_version.spec)
    output = np.asarray(engine.reference_answers(spec, variant.params)["output"], dtype=float).ravel()
    return [f"{value:.4f}" for value in output[:3]] + [f"{output[3] + 1:.4f}"]


def submit_cells(client, variant, entries, capture):
    with capture(execute=True):
        client.post(reverse("submit", args=[variant.pk, "output"]),
                    {f"cell-0-{c}": entry for c, entry in enumerate(entries)})


def grid_inputs(client, item) -> list[str]:
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    grid = re.search(r'<div class="matrix-grid" id="grid-output".*?</div>\s*</div>', html, re.S)
    assert grid, html
    return re.findall(r"<input [^>]*>", grid[0])


def cell(c: int, value: str | None = None, wrong: bool = False) -> str:
    html = CELL.format(c=c, label=LABELS[c])
    if value is not None:
        html += f' value="{value}"'
    if wrong:
        html += ' class="is-wrong-cell" aria-invalid="true"'
    return html + ">"


def test_without_an_answer_the_cells_are_empty_and_unmarked(client, item, variant):
    assert grid_inputs(client, item) == [cell(c) for c in range(4)]


def test_after_a_wrong_answer_the_cells_hold_its_entries_and_only_the_wrong_one_is_marked(
        client, item, variant, django_capture_on_commit_callbacks):
    entries = output_with_the_last_entry_wrong(variant)
    submit_cells(client, variant, entries, django_capture_on_commit_callbacks)
    assert Submission.objects.get(variant=variant, part="output").feedback["details"]["entry_correct"] == [
        True, True, True, False,
    ]
    assert grid_inputs(client, item) == [
        cell(0, entries[0]), cell(1, entries[1]), cell(2, entries[2]), cell(3, entries[3], wrong=True),
    ]


def test_the_last_answer_is_the_one_shown_and_its_marks_with_it(client, item, variant, django_capture_on_commit_callbacks):
    entries = output_with_the_last_entry_wrong(variant)
    submit_cells(client, variant, entries, django_capture_on_commit_callbacks)
    second = ["1/2"] + entries[1:3] + ["9"]  # kept as typed, a fraction too
    submit_cells(client, variant, second, django_capture_on_commit_callbacks)
    assert grid_inputs(client, item) == [
        cell(0, "1/2", wrong=True), cell(1, entries[1]), cell(2, entries[2]), cell(3, "9", wrong=True),
    ]


def test_an_answer_sent_as_text_fills_the_cells_with_the_numbers_read(
        client, item, variant, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "output"]), {"answer": "[0.1, 0.2, 0.3, 0.4]"})
    assert Submission.objects.get(variant=variant, part="output").feedback["details"]["entry_correct"] == [
        False, False, False, False,
    ]
    assert grid_inputs(client, item) == [
        cell(0, "0.1", wrong=True), cell(1, "0.2", wrong=True), cell(2, "0.3", wrong=True),
        cell(3, "0.4", wrong=True),
    ]


def test_while_the_review_policy_hides_correctness_the_entries_come_back_without_marks(
        client, item, variant, django_capture_on_commit_callbacks):
    assignment = item.assignment
    assignment.show_correctness = ReleaseMoment.ON_RELEASE
    assignment.save()
    entries = output_with_the_last_entry_wrong(variant)
    submit_cells(client, variant, entries, django_capture_on_commit_callbacks)
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert "data-entry-correct" not in html and "is-wrong-cell" not in html
    assert grid_inputs(client, item) == [cell(c, entries[c]) for c in range(4)]


def test_an_answer_not_graded_yet_comes_back_without_marks(client, item, variant):
    Submission.objects.create(
        variant=variant, student=variant.student, part="output", raw_answer=[["1", "2", "3", "4"]],
        status=SubmissionStatus.QUEUED,
    )
    assert grid_inputs(client, item) == [cell(c, str(c + 1)) for c in range(4)]


def test_an_answer_that_does_not_fit_the_grid_leaves_it_empty_and_unmarked(client, item, variant):
    Submission.objects.create(
        variant=variant, student=variant.student, part="output", raw_answer=[["1", "2"], ["3", "4"]],
        status=SubmissionStatus.GRADED, score=0.0, correct=False,
        feedback={"details": {"entry_correct": [[True, False], [True, True]]}},
    )
    assert grid_inputs(client, item) == [cell(c) for c in range(4)]
