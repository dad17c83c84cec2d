"""One points model on every page: an item's points, split over its parts by their
weights, as the gradebook counts them; staff dashboards without student columns."""

import pytest
from django.urls import reverse

from exercises.engine import draw_variant, part_points, points_text, render_prompt
from exercises.specs import version_spec

from .test_selectors import item  # noqa: F401  (the worked example: parts weighted 2 and 2)


def test_points_are_split_by_part_weight_and_printed_to_two_places(item):
    spec = version_spec(item.exercise_version)
    assert part_points(spec, 1.0) == {"weights": 0.5, "output": 0.5}
    assert part_points(spec, 3.0) == {"weights": 1.5, "output": 1.5}
    assert [points_text(value) for value in (1, 0.5, 2, 0.25, 0.15)] == [
        "1 point", "0.5 points", "2 points", "0.25 points", "0.15 points"]
    params = draw_variant(spec, 7).params
    assert "point" not in render_prompt(spec, params)  # weights alone are not points
    labelled = render_prompt(spec, params, part_points={"weights": 1.5, "output": 1.5})
    assert labelled.count("*(1.5 points)*") == 2


@pytest.mark.parametrize(("points", "text"), [
    (1 / 3, "1/3 point"), (1 / 6, "1/6 point"), (2 / 3, "2/3 point"), (5 / 12, "5/12 point"),
    (4 / 3, "4/3 points"), (7 / 6, "7/6 points"), (1 / 7, "1/7 point"), (1 / 13, "0.08 points"), (0.1 / 3, "0.03 points"),
    (0, "0 points"), (0.5 / 3 + 0.5 / 3, "1/3 point"),
])
def test_a_share_two_decimals_cannot_hold_is_printed_as_its_fraction(points, text):
    assert points_text(points) == text


def test_six_equal_parts_of_one_point_are_each_a_sixth(item):
    spec = version_spec(item.exercise_version)
    labelled = render_prompt(spec, draw_variant(spec, 7).params, part_points={"weights": 1 / 6, "output": 1 / 6})
    assert labelled.count("*(1/6 point)*") == 2 and "0.17" not in labelled


def test_exercise_assignment_and_gradebook_pages_agree_on_points(client, demo, item):
    item.points = 3
    item.save()
    client.login(username="student1", password="attention-demo")
    exercise = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert exercise.count("(1.5 points)") == 2  # (a) and (b) in the prompt
    assert "(2 points)" not in exercise
    assert "This exercise is worth 3 points in the assignment" in exercise
    overview = client.get(reverse("assignment", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    assert '<td data-points="3">0.00 of 3 points</td>' in overview
    total = sum(i.points for i in demo.assignment.items.all())
    assert f'<td id="points-total">0.00 of {points_text(total)}</td>' in overview
    client.login(username="instructor", password="attention-demo")
    book = client.get(reverse("instructor:gradebook", args=[demo.course.slug, demo.assignment.slug])).content.decode()
    assert f'{item.exercise_version.exercise.slug} <span class="muted">/3</span>' in book


def test_staff_dashboards_have_no_score_of_their_own(client, demo):
    client.login(username="instructor", password="attention-demo")
    staff = client.get(reverse("dashboard")).content.decode()
    assert "My score" not in staff and "solved</td>" not in staff
    assert reverse("instructor:gradebook", args=[demo.course.slug, demo.assignment.slug]) in staff
    client.login(username="student1", password="attention-demo")
    student = client.get(reverse("dashboard")).content.decode()
    assert "My score" in student and "0%" in student
