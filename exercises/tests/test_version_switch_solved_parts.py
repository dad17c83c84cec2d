"""A part the student solved on the copy of an exercise its instructor has switched to
another version since (docs/exams.md, "Changing an exam or homework students have
started") counts as solved on the new copy: the page shows it solved with no form, the
API says so, and an answer to it is refused under the answer's lock without an attempt.
A part answered only partly right there, or one the old version did not have, stays open."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from authoring.tests.factories import (
    PASSWORD, assignment_create, people_create, product_yaml, published_version, submission_add, variant_for,
)
from exercises import selectors
from exercises.models import Variant
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission
from grading.services import SOLVED_ON_EARLIER_VERSION, SubmissionRefused, submission_create
from instructor import services as instructor_services

# v2 keeps v1's parts "product" and "total" and adds "difference", which v1 did not have.
V2_YAML = product_yaml(slug="mult", answer="a * b + 1") + """\
  - key: difference
    type: numeric
    answer: "a - b"
    decimals: 0
    solution: |
      The difference is {{a - b}}.
"""

SOLVED_LINE = (
    '<p class="attempts solved-earlier" id="solved-earlier-product"><strong>Solved</strong> on the earlier '
    "version of this exercise: 1.00 of 1 point counts.</p>"
)


@pytest.fixture
def scene(db):
    """Homework of one exercise worth 3 points, 2 attempts per part. Sam opened it under v1
    (parts "product" and "total") and saved product right (1.0) and total partly right
    (0.5); then the instructor switched it to v2 (parts "product", "total", "difference",
    1 point each)."""
    people = people_create()
    v1 = published_version(source=product_yaml(slug="mult"))
    homework = assignment_create(people.course, [v1], slug="hw", attempts_per_part=2)
    item = homework.items.get()
    item.points = 3.0
    item.save()
    old = variant_for(item, people.student, params={"a": 3, "b": 4})
    submission_add(old, "product", "12", awarded=1.0)
    submission_add(old, "total", "8", awarded=0.5, correct=False)
    v2 = published_version(source=V2_YAML, number=2, exercise=v1.exercise)
    instructor_services.assignment_item_update(item=item, points=3.0, position=0, version=v2, confirmed=True)
    item.refresh_from_db()
    return {"people": people, "homework": homework, "item": item, "old": old, "v2": v2}


def _login(client, user):
    client.login(username=user.username, password=PASSWORD)


def _new_copy(scene) -> Variant:
    new = variant_get_or_create_for_item(item=scene["item"], student=scene["people"].student)
    assert new.exercise_version_id == scene["v2"].pk and new.pk != scene["old"].pk
    return new


def _api_parts(scene, scope=TokenScope.READ) -> dict[str, dict]:
    token = api_token_create(user=scene["people"].student, name="t", scope=scope, lifetime_days=7)[1]
    response = api_client(token).get(f"/api/v1/exercises/{scene['item'].pk}/")
    assert response.status_code == 200
    return {part["key"]: part for part in response.json()["parts"]}


def _part_state(part: dict) -> tuple:
    return (
        part["solved"], part["solved_on_earlier_version"], part["finished"],
        part["attempts_used"], part["attempts_left"],
    )


# --- 1. Solved on the old copy: solved on the new one -----------------------------------


def test_the_new_copy_shows_the_part_solved_on_the_old_copy_as_solved_without_a_form(client, scene):
    _login(client, scene["people"].student)
    for visit in ("first", "again"):  # the first visit makes the new copy; the second reads it
        page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
        assert SOLVED_LINE in page, visit
        assert page.count("Solved</strong> on the earlier version") == 1, visit
        assert 'id="form-product"' not in page, visit
        assert 'id="attempts-left-product"' not in page, visit
        # Partly right on the old copy, and a part the old version did not have: open.
        assert 'id="form-total"' in page and 'id="form-difference"' in page, visit
        assert 'Attempts left: <span id="attempts-left-total" data-attempts-left>2</span> of 2</p>' in page, visit
        assert 'Attempts left: <span id="attempts-left-difference" data-attempts-left>2</span> of 2</p>' in page, visit
    assert Submission.objects.filter(variant__exercise_version=scene["v2"]).count() == 0


def test_the_api_says_the_part_is_solved_on_the_earlier_version_with_no_attempt_used(scene):
    parts = _api_parts(scene)
    assert _part_state(parts["product"]) == (True, True, True, 0, 2)
    assert _part_state(parts["total"]) == (False, False, False, 0, 2)
    assert _part_state(parts["difference"]) == (False, False, False, 0, 2)


def test_an_answer_to_it_on_the_new_copy_is_refused_without_an_attempt(scene):
    new, student = _new_copy(scene), scene["people"].student
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(variant=new, student=student, part="product", raw_answer="13")
    assert (refused.value.code, refused.value.message) == ("solved_earlier", SOLVED_ON_EARLIER_VERSION)
    assert SOLVED_ON_EARLIER_VERSION == (
        "You already solved this part on the earlier version of this exercise, and that answer still counts; "
        "nothing was stored."
    )
    assert Submission.objects.filter(variant=new).count() == 0
    assert selectors.part_progress(variant=new, part="product")["attempts_used"] == 0


def test_the_page_and_the_api_refuse_an_answer_to_it(client, scene):
    new, student = _new_copy(scene), scene["people"].student
    _login(client, student)
    url = reverse("submit", args=[new.pk, "product"])
    response = client.post(url, {"answer": "13"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-result="refused"' in page
    assert "You already solved this part on the earlier version of this exercise" in page
    assert "This did not use an attempt." in page
    plain = client.post(url, {"answer": "13"})
    assert plain.status_code == 302
    assert plain["Location"] == reverse("exercise", args=[scene["item"].pk]) + "#part-product"
    # Without the page's script the refusal is shown beside the part, on the page it opens.
    assert [str(m) for m in get_messages(plain.wsgi_request)] == []
    assert SOLVED_ON_EARLIER_VERSION in client.get(plain["Location"]).content.decode().replace("&#x27;", "'")

    token = api_token_create(user=student, name="w", scope=TokenScope.WRITE, lifetime_days=7)[1]
    api = api_client(token).post(
        f"/api/v1/exercises/{scene['item'].pk}/parts/product/submissions/", {"answer": "13"},
        content_type="application/json",
    )
    assert (api.status_code, api.json()["type"], api.json()["detail"]) == (
        409, "urn:attnquiz:problem:solved-earlier", SOLVED_ON_EARLIER_VERSION,
    )
    assert Submission.objects.filter(variant=new).count() == 0
    assert _part_state(_api_parts(scene)["product"]) == (True, True, True, 0, 2)


# --- 2. Partly right on the old copy, or new in this version: answerable ----------------


@pytest.mark.parametrize("part, answer", [("total", "7"), ("difference", "-1")])
def test_a_part_partly_right_on_the_old_copy_or_not_in_it_takes_answers_on_the_new_copy(scene, part, answer):
    new, student = _new_copy(scene), scene["people"].student
    submission = submission_create(variant=new, student=student, part=part, raw_answer=answer)
    assert (submission.variant_id, submission.part, submission.attempt) == (new.pk, part, 1)


def test_a_part_solved_only_on_the_new_copy_reads_as_solved_there_not_on_the_earlier_version(client, scene):
    new = _new_copy(scene)
    submission_add(new, "total", "8", awarded=1.0)
    parts = _api_parts(scene)
    assert _part_state(parts["total"]) == (True, False, True, 1, 1)
    _login(client, scene["people"].student)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert 'id="form-total"' not in page and 'id="solved-earlier-total"' not in page
    assert "of 2 · <strong>Solved</strong></p>" in page


# --- 3. What the review policy hides ----------------------------------------------------


def test_while_scores_are_hidden_the_part_reads_solved_without_points(client, scene):
    homework = scene["homework"]
    homework.show_score = "on_release"
    homework.save()
    _login(client, scene["people"].student)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert (
        '<p class="attempts solved-earlier" id="solved-earlier-product"><strong>Solved</strong> on the earlier '
        "version of this exercise.</p>"
    ) in page
    assert 'id="form-product"' not in page


def test_while_correctness_is_hidden_the_part_stays_open_as_a_solved_part_of_this_copy_would(client, scene):
    homework = scene["homework"]
    homework.show_correctness = homework.show_score = "on_release"
    homework.save()
    _login(client, scene["people"].student)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert "solved-earlier" not in page and 'id="form-product"' in page
    parts = _api_parts(scene)
    assert (parts["product"]["solved"], parts["product"]["solved_on_earlier_version"]) == (None, False)
    new = Variant.objects.get(student=scene["people"].student, exercise_version=scene["v2"])
    submission = submission_create(variant=new, student=scene["people"].student, part="product", raw_answer="13")
    assert (submission.variant_id, submission.attempt) == (new.pk, 1)
