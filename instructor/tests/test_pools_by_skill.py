"""Assignment editor: "add a pool of N exercises for skill S" from the bank, with titles and
a preview, added as one pool of interchangeable exercises; refusals change nothing."""

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create
from courses.models import AssignmentItem
from exercises.services_bank import bank_load
from instructor import selectors_pools, services_pools
from instructor.services import InstructorRefused

SOFTMAX_POOL = ["causal-mask-weights", "heatmap-reading", "softmax-weights-from-scores"]


@pytest.fixture
def empty_assignment(people):
    bank_load()
    return assignment_create(people.course, [])


def url():
    return reverse("instructor:pool_by_skill", args=["attn", "week1"])


def test_the_bank_offers_its_interchangeable_softmax_exercises(empty_assignment):
    candidates = selectors_pools.skill_pool_candidates(assignment=empty_assignment, skill="softmax", count=5)
    assert [c.profile.slug for c in candidates] == SOFTMAX_POOL
    assert {(c.profile.points, c.profile.parts) for c in candidates} == {(3.0, 3)}
    assert selectors_pools.skill_pool_sizes(assignment=empty_assignment)["projections"] == 4


def test_the_preview_shows_titles_and_prompts(client, people, empty_assignment):
    client.login(username="ines", password=PASSWORD)
    page = client.get(url(), {"skill": "softmax", "count": "3"}).content.decode()
    assert "3 interchangeable exercises" in page
    for title in ("Weights of a causally masked row", "Reading an attention heatmap", "Softmax weights and their ratios"):
        assert title in page
    assert page.count('class="aq-pool-preview"') == 3
    assert page.count('name="version"') == 3
    assert AssignmentItem.objects.count() == 0  # a preview adds nothing


def test_adding_the_previewed_pool(client, people, empty_assignment):
    client.login(username="ines", password=PASSWORD)
    versions = [c.version.pk for c in selectors_pools.skill_pool_candidates(
        assignment=empty_assignment, skill="softmax", count=3)]
    response = client.post(url(), {"skill": "softmax", "count": "3", "pool": "softmax-pool", "points": "2",
                                   "version": versions})
    assert response.status_code == 302
    items = empty_assignment.items.order_by("position")
    assert [(i.exercise_version.exercise.slug, i.pool, i.points) for i in items] == [
        (slug, "softmax-pool", 2.0) for slug in SOFTMAX_POOL
    ]
    # the same request again: those exercises are in the assignment now, so the offer changed
    again = client.post(url(), {"skill": "softmax", "count": "3", "version": versions})
    assert again.status_code == 422
    assert "suggestion changed" in again.content.decode()
    assert empty_assignment.items.count() == 3


def test_the_assignment_page_links_to_the_pool_picker(client, people, empty_assignment):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:assignment", args=["attn", "week1"])).content.decode()
    assert f'href="{url()}"' in page


@pytest.mark.parametrize(
    ("params", "message"),
    [({"skill": "made-up", "count": "3"}, "Select a valid choice"), ({"skill": "softmax", "count": "50"}, "Select a valid choice"),
     ({"skill": "softmax", "count": "3", "pool": "no spaces"}, "Enter a valid")],
)
def test_bad_input_is_a_422_that_adds_nothing(client, people, empty_assignment, params, message):
    client.login(username="ines", password=PASSWORD)
    response = client.post(url(), params)
    assert response.status_code == 422 and message in response.content.decode()
    assert AssignmentItem.objects.count() == 0


@pytest.mark.parametrize(("username", "code"), [("tariq", 403), ("sam", 403), ("otto", 404)])
def test_only_the_course_instructor_may_use_it(client, people, empty_assignment, username, code):
    client.login(username=username, password=PASSWORD)
    assert client.get(url(), {"skill": "softmax", "count": "3"}).status_code == code


def test_the_service_refuses_a_taken_name_and_a_pool_of_one(empty_assignment):
    candidates = selectors_pools.skill_pool_candidates(assignment=empty_assignment, skill="scaling", count=3)
    versions = [c.version for c in candidates]
    services_pools.assignment_pool_add(assignment=empty_assignment, versions=versions[:2], pool="p", points=1)
    with pytest.raises(InstructorRefused, match="already has a pool called 'p'"):
        services_pools.assignment_pool_add(assignment=empty_assignment, versions=versions[2:], pool="p", points=1)
    with pytest.raises(InstructorRefused, match="at least 2 exercises"):
        services_pools.assignment_pool_add(assignment=empty_assignment, versions=versions[2:], pool="q", points=1)
    assert empty_assignment.items.count() == 2
