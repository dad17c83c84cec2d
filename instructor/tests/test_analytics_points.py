"""Item analytics count a part out of the points the gradebook gives it, and draw no bar
for a part nobody answered."""

import re

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from grading.models import SubmissionStatus
from instructor import selectors

# Two parts of equal weight 2: the exercise's own weights, not its points in an assignment.
TWO_BY_TWO_YAML = product_yaml(points=2).replace(
    '    answer: "a + b"\n    decimals: 0\n', '    answer: "a + b"\n    decimals: 0\n    points: 2\n'
)


@pytest.fixture
def two_point(people):
    """A 2-point exercise whose parts weigh 2 + 2: sam product 1.0 and total 0.5; sue
    product 0.0 and never answers total."""
    assert "    points: 2\n    solution: |\n      The sum" in TWO_BY_TWO_YAML
    assignment = assignment_create(people.course, [published_version(source=TWO_BY_TWO_YAML)])
    item = assignment.items.get()
    item.points = 2
    item.save()
    sam = variant_for(item, people.student, params={"a": 3, "b": 4}, seed=1)
    sue = variant_for(item, people.student2, params={"a": 3, "b": 4}, seed=2)
    submission_add(sam, "product", "12", awarded=1.0)
    submission_add(sam, "total", "6", awarded=0.5, correct=False)
    submission_add(sue, "product", "13", awarded=0.0)
    return assignment


def test_a_parts_maximum_is_its_share_of_the_exercises_gradebook_points(people, two_point):
    product, total = selectors.assignment_analytics(assignment=two_point)["exercises"][0]["parts"]
    # 2 points over weights 2 + 2: 1 point a part (not 2, the weight).
    assert (product["points"], total["points"]) == (1.0, 1.0)
    assert (product["graded"], product["mean_score"], product["facility"]) == (2, 0.5, 0.5)
    assert (total["graded"], total["mean_score"], total["facility"]) == (1, 0.5, 0.5)


def test_a_students_part_scores_add_up_to_their_gradebook_points(people, two_point):
    book = selectors.gradebook(assignment=two_point)
    assert [(row["student"].username, row["scores"]) for row in book["rows"]] == [("sam", [1.5]), ("sue", [0.0])]
    shares = selectors.gradebook_part_points(book["columns"][0])
    assert shares == {"product": 1.0, "total": 1.0}
    # sam's best scores (product 1.0, total 0.5) x those points: his gradebook cell.
    assert shares["product"] * 1.0 + shares["total"] * 0.5 == book["rows"][0]["scores"][0]


def test_a_one_point_exercise_gives_each_of_two_equal_parts_half_a_point(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())], slug="one")
    variant = variant_for(assignment.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", "12", awarded=1.0)
    product, total = selectors.assignment_analytics(assignment=assignment)["exercises"][0]["parts"]
    assert (product["points"], product["mean_score"], product["facility"]) == (0.5, 0.5, 1.0)
    assert (total["points"], total["graded"], total["mean_score"], total["facility"]) == (0.5, 0, None, None)
    assert selectors.gradebook(assignment=assignment)["rows"][0]["scores"] == [0.5]


def _row_cells(html: str, part: str) -> list[str]:
    row = re.search(rf'<tr data-part="{part}">.*?</tr>', html, re.S).group(0)
    return [cell.strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def test_the_page_shows_the_gradebook_maximum_and_no_bar_for_a_part_nobody_answered(client, people):
    assignment = assignment_create(people.course, [published_version(source=TWO_BY_TWO_YAML)])
    item = assignment.items.get()
    item.points = 2
    item.save()
    submission_add(variant_for(item, people.student, params={"a": 3, "b": 4}), "product", "12", awarded=1.0)
    client.login(username="tariq", password=PASSWORD)
    html = client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode()
    # Attempts, students, graded, mean score, Max, facility.
    assert _row_cells(html, "product")[:6] == ["1", "1", "1", "1.000", "1", "1.000"]
    assert _row_cells(html, "total")[:6] == ["0", "0", "0", "—", "1", "—"]
    chart = re.search(r'<svg class="bar-chart" role="img" aria-label="Facility per part".*?</svg>', html, re.S).group(0)
    assert chart.count("<rect ") == 1  # product's bar only
    assert re.findall(r"<text [^>]*>([^<]*)</text>", chart) == ["part (a)", "100 %", "part (b)", "no answers"]
    assert ">0 %<" not in chart


def test_a_part_whose_only_answer_awaits_grading_says_so_in_place_of_a_bar(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    variant = variant_for(assignment.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", "12", awarded=None, status=SubmissionStatus.QUEUED)
    parts = selectors.assignment_analytics(assignment=assignment)["exercises"][0]["parts"]
    chart = selectors.facility_chart(parts)
    assert [(bar["note"], bar["value"], bar["length"]) for bar in chart["bars"]] == [
        (selectors.NONE_GRADED_YET, None, 0.0), (selectors.NO_ANSWERS, None, 0.0),
    ]
    assert (selectors.NONE_GRADED_YET, selectors.NO_ANSWERS) == ("none graded yet", "no answers")


def test_a_bar_chart_draws_numbers_and_writes_text_values():
    chart = selectors.bar_chart([("a", 0.5), ("b", "no answers"), ("c", 1.0)], maximum=1.0)
    assert [(bar["label"], bar["value"], bar["note"], bar["length"]) for bar in chart["bars"]] == [
        ("a", 0.5, "", 105.0), ("b", None, "no answers", 0.0), ("c", 1.0, "", 210.0),
    ]
