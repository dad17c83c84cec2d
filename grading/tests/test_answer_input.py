"""How a stored answer reads on one line for a person (staff pages, a result's history)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, people_create, product_yaml, published_version, submission_add, variant_for,
)
from grading.answer_input import answer_line, answer_text


@pytest.mark.parametrize("raw, line", [
    ("0.5", "0.5"),
    ("sqrt(d_k)", "sqrt(d_k)"),
    ([["0", "0", "1.9464", "0.4009"]], "[0, 0, 1.9464, 0.4009]"),
    ([["1", "2"], ["3", "4"]], "[1, 2; 3, 4]"),
    ([["", "2"], ["3", ""]], "[, 2; 3, ]"),
    (["a", "b"], "[a, b]"),
    ([1, 2.5], "[1, 2.5]"),
    ([], "[]"),
    ({"x": 1}, '{"x": 1}'),
    ([["1"], "2"], '[["1"],"2"]'),  # not a grid: shown as stored
])
def test_a_stored_answer_reads_on_one_line(raw, line):
    assert answer_line(raw) == line


def test_exports_keep_the_stored_form():
    assert answer_text([["1", "2"], ["3", "4"]]) == '[["1","2"],["3","4"]]'


@pytest.mark.django_db
def test_a_students_answers_page_shows_a_matrix_answer_as_rows_not_as_a_python_list(client):
    people = people_create()
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    variant = variant_for(assignment.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", [["0", "0", "1.9464", "0.4009"]], awarded=0.0)
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:student", args=["attn", "week1", people.student.pk])).content.decode()
    assert "<code>[0, 0, 1.9464, 0.4009]</code>" in page
    assert "[[&#x27;0&#x27;" not in page
