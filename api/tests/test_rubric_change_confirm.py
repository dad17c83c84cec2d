"""A change of a rubric's criteria through the API follows the grading page's rule: when it
changes the scores of answers graded with the rubric, 409 ``confirmation_needed`` with the
question in numbers and a ``confirmation``, nothing changed; the same request with
``confirmed`` set to it scores every graded answer again; a stale, forged or other change's
confirmation asks again."""

from __future__ import annotations

import json

import pytest

from api.tests.conftest import api_client, world_create
from authoring.tests.factories import FREE_TEXT_YAML, assignment_create, published_version, submission_add, variant_for
from grading.models import SubmissionStatus
from instructor import services, services_rubrics
from instructor.models import ManualGrade, RubricItem

C = "/api/v1/courses/attn/"
TAIL = (" Students see the new scores at once. Each new score is kept in the answer's grading history; "
        "answers given a typed score are not changed.")


@pytest.fixture
def graded(db):
    """Rubric A +2, B +1 (out of 3): sam ticked A (2/3), sue ticked B (1/3), and a third
    answer given a typed score of 0.5."""
    world = world_create()
    item = assignment_create(world.people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay").items.get()
    rubric = services_rubrics.rubric_create(course=world.people.course, item=item, part="why", criteria=[("A", 2), ("B", 1)])
    a, b = rubric.items.all()
    answers = []
    for seed, (student, ticked) in enumerate(((world.people.student, a), (world.people.student2, b)), start=1):
        answer = submission_add(variant_for(item, student, params={"d": 64}, seed=seed), "why", "x", awarded=None,
                                status=SubmissionStatus.MANUAL)
        services_rubrics.submission_grade_with_rubric(submission=answer, rubric=rubric, grader=world.people.ta,
                                                      item_ids=[ticked.pk])
        answers.append(answer)
    typed = submission_add(variant_for(item, world.people.instructor, params={"d": 64}, seed=9), "why", "y",
                           awarded=None, status=SubmissionStatus.MANUAL)
    services.submission_grade_manually(submission=typed, grader=world.people.instructor, score=0.5)
    return {"world": world, "item": item, "rubric": rubric, "a": a, "b": b, "answers": answers, "typed": typed,
            "criteria": f"{C}questions/{item.pk}/why/rubric/criteria/"}


def call(graded, method: str, url: str, body=None, role: str = "ta"):
    client = api_client(graded["world"].tokens[role])
    return client.generic(method.upper(), url, json.dumps(body if body is not None else {}),
                          content_type="application/json")


def scores(graded) -> list[float]:
    found = []
    for answer in (*graded["answers"], graded["typed"]):
        answer.refresh_from_db()
        found.append(round(answer.score, 6))
    return found


def asked(response, detail: str) -> str:
    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["type"], body["detail"]) == ("urn:attnquiz:problem:confirmation-needed", detail)
    assert body["stale"] is False and body["expired"] is False
    return body["confirmation"]


def test_adding_a_criterion_asks_then_scores_again(graded):
    grades = ManualGrade.objects.count()
    response = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100})
    token = asked(response, "2 answers were graded with this rubric, out of 3 points; with “TA item” (+100) they are "
                            "scored out of 103: 2 scores change (e.g. 66.7% → 1.9%)." + TAIL)
    assert graded["rubric"].items.count() == 2 and ManualGrade.objects.count() == grades
    assert scores(graded) == [round(2 / 3, 6), round(1 / 3, 6), 0.5]
    done = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100, "confirmed": token})
    assert done.status_code == 201 and done.json()["text"] == "TA item"
    assert scores(graded) == [round(2 / 103, 6), round(1 / 103, 6), 0.5]
    assert ManualGrade.objects.count() == grades + 2


def test_new_points_through_patch_ask_then_score_again(graded):
    url = f"{C}rubric-criteria/{graded['b'].pk}/"
    token = asked(call(graded, "patch", url, {"points": 3}),
                  "2 answers were graded with this rubric, out of 3 points; with “B” worth +3 instead of +1 they are "
                  "scored out of 5: 2 scores change (e.g. 66.7% → 40%)." + TAIL)
    graded["b"].refresh_from_db()
    assert graded["b"].points == 1
    done = call(graded, "patch", url, {"points": 3, "confirmed": token})
    assert done.status_code == 200 and done.json()["points"] == 3
    assert scores(graded) == [0.4, 0.6, 0.5]


def test_removing_through_delete_asks_then_scores_again(graded):
    url = f"{C}rubric-criteria/{graded['b'].pk}/"
    token = asked(call(graded, "delete", url),
                  "2 answers were graded with this rubric, out of 3 points; without “B” (+1) they are scored out of "
                  "2: 2 scores change (e.g. 66.7% → 100%)." + TAIL)
    assert RubricItem.objects.filter(pk=graded["b"].pk).exists()
    done = call(graded, "delete", f"{url}?confirmed={token}")
    assert done.status_code == 204
    assert not RubricItem.objects.filter(pk=graded["b"].pk).exists()
    assert scores(graded) == [1.0, 0.0, 0.5]


def test_a_stale_confirmation_is_asked_again(graded):
    token = asked(call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100}),
                  "2 answers were graded with this rubric, out of 3 points; with “TA item” (+100) they are "
                  "scored out of 103: 2 scores change (e.g. 66.7% → 1.9%)." + TAIL)
    services_rubrics.submission_grade_with_rubric(  # the typed answer is graded with the rubric: 3 answers now
        submission=graded["typed"], rubric=graded["rubric"], grader=graded["world"].people.ta,
        item_ids=[graded["a"].pk, graded["b"].pk],
    )
    response = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100, "confirmed": token})
    assert response.status_code == 409
    body = response.json()
    assert body["stale"] is True
    assert body["detail"].startswith("3 answers were graded with this rubric, out of 3 points; with “TA item” (+100) "
                                     "they are scored out of 103: 3 scores change (e.g. 100% → 2.9%).")
    assert graded["rubric"].items.count() == 2
    assert scores(graded) == [round(2 / 3, 6), round(1 / 3, 6), 1.0]
    done = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100, "confirmed": body["confirmation"]})
    assert done.status_code == 201
    assert scores(graded) == [round(2 / 103, 6), round(1 / 103, 6), round(3 / 103, 6)]


@pytest.mark.parametrize("confirmed, status", [("true", 409), ("forged", 409), ("", 409), (None, 409), (True, 400)])
def test_anything_but_the_questions_confirmation_asks_again(graded, confirmed, status):
    """Through the API a change that changes scores is always asked: ``true`` is no token, and
    null is no confirmation (as if left out)."""
    response = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100, "confirmed": confirmed})
    assert response.status_code == status
    if status == 409:
        assert response.json()["type"] == "urn:attnquiz:problem:confirmation-needed"
    else:
        assert "confirmed" in response.json()["errors"]
    assert graded["rubric"].items.count() == 2


def test_a_confirmation_of_other_points_does_not_confirm(graded):
    token = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100}).json()["confirmation"]
    response = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 50, "confirmed": token})
    assert response.status_code == 409 and response.json()["stale"] is False
    assert "scored out of 53" in response.json()["detail"]
    assert graded["rubric"].items.count() == 2


def test_the_last_criterion_worth_points_cannot_go(graded):
    call(graded, "delete", f"{C}rubric-criteria/{graded['b'].pk}/?confirmed=x")
    token = call(graded, "delete", f"{C}rubric-criteria/{graded['b'].pk}/").json()["confirmation"]
    call(graded, "delete", f"{C}rubric-criteria/{graded['b'].pk}/?confirmed={token}")
    response = call(graded, "delete", f"{C}rubric-criteria/{graded['a'].pk}/")
    assert response.status_code == 409
    assert response.json()["type"] == "urn:attnquiz:problem:conflict"
    assert response.json()["detail"] == "2 answers were graded with this rubric: it keeps at least one item worth points."


def test_a_too_long_confirmation_is_a_400(graded):
    response = call(graded, "post", graded["criteria"], {"text": "TA item", "points": 100, "confirmed": "x" * 201})
    assert response.status_code == 400 and "confirmed" in response.json()["errors"]


def test_a_null_confirmation_is_no_confirmation_and_asks(graded):
    url = f"{C}rubric-criteria/{graded['b'].pk}/"
    for body in ({"points": 3, "confirmed": None}, {"text": "TA item", "points": 100, "confirmed": None}):
        target = url if "text" not in body else graded["criteria"]
        response = call(graded, "patch" if "text" not in body else "post", target, body)
        assert response.status_code == 409, response.content
        assert response.json()["type"] == "urn:attnquiz:problem:confirmation-needed"
    assert scores(graded) == [round(2 / 3, 6), round(1 / 3, 6), 0.5]
