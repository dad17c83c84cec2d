"""The assignment editor's "position" is the number of the page's "#" column (1 for the
first exercise), as students count; it is stored 0-based and moving an item renumbers the
others, so the number typed is the number shown afterwards."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from courses.models import AssignmentItem


@pytest.fixture
def three(client, people):
    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb", "pc")]
    assignment = assignment_create(people.course, versions)
    client.login(username="ines", password=PASSWORD)
    return assignment, {item.exercise_version.exercise.slug: item for item in assignment.items.all()}


def move(client, item, position: str):
    return client.post(
        reverse("instructor:item_update", args=["attn", "week1", item.pk]),
        {"points": "1", "position": position, "version": item.exercise_version_id},
        follow=True,
    )


def order(assignment) -> list[tuple[str, int]]:
    return list(assignment.items.values_list("exercise_version__exercise__slug", "position"))


def shown_messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_the_position_field_shows_the_number_of_the_hash_column(client, three):
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    for number in (1, 2, 3):
        assert f'<input name="position" type="number" min="1" max="3" value="{number}" size="3">' in page
    assert 'name="position" type="number" min="1" max="3" value="0"' not in page


def test_moving_the_last_exercise_to_position_1(client, three):
    assignment, items = three
    response = move(client, items["pc"], "1")
    assert shown_messages(response) == ["Saved."]
    assert order(assignment) == [("pc", 0), ("pa", 1), ("pb", 2)]
    page = response.content.decode()
    assert page.index("<span class=\"muted\">pc</span>") < page.index("<span class=\"muted\">pa</span>")


def test_moving_the_first_exercise_to_the_last_position(client, three):
    assignment, items = three
    move(client, items["pa"], "3")
    assert order(assignment) == [("pb", 0), ("pc", 1), ("pa", 2)]


def test_saving_points_with_the_shown_position_keeps_the_order(client, three):
    assignment, items = three
    client.post(
        reverse("instructor:item_update", args=["attn", "week1", items["pb"].pk]),
        {"points": "3", "position": "2", "version": items["pb"].exercise_version_id},
    )
    assert order(assignment) == [("pa", 0), ("pb", 1), ("pc", 2)]
    assert AssignmentItem.objects.get(pk=items["pb"].pk).points == 3


@pytest.mark.parametrize("position", ["0", "4"])
def test_a_position_outside_1_to_n_is_refused_in_the_pages_numbers(client, three, position):
    assignment, items = three
    response = move(client, items["pb"], position)
    assert shown_messages(response) == [
        f"There is no position {position}: the exercises of this assignment are numbered 1 to 3."
    ]
    assert order(assignment) == [("pa", 0), ("pb", 1), ("pc", 2)]


def test_gaps_and_ties_left_by_older_edits_are_renumbered(client, three):
    assignment, items = three
    AssignmentItem.objects.filter(pk=items["pa"].pk).update(position=4)
    AssignmentItem.objects.filter(pk=items["pb"].pk).update(position=4)
    AssignmentItem.objects.filter(pk=items["pc"].pk).update(position=9)
    move(client, items["pc"], "2")
    assert order(assignment) == [("pa", 0), ("pc", 1), ("pb", 2)]
