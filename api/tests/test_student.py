"""Student endpoints: the same data, format checks and attempt rules as the pages."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from api.tests.conftest import api_client
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus


def submit(client, item_id: int, part: str, answer):
    return client.post(
        f"/api/v1/exercises/{item_id}/parts/{part}/submissions/", {"answer": answer}, content_type="application/json"
    )


@pytest.fixture
def student(world):
    return api_client(world.tokens["student"])


def test_my_courses_and_assignments(world, student):
    assert student.get("/api/v1/courses/").json() == [{"slug": "attn", "title": "Attention", "role": "student"}]
    due = timezone.now() + timedelta(days=2)
    world.assignment.due_at = due
    world.assignment.save()
    rows = student.get("/api/v1/courses/attn/assignments/").json()
    assert rows == [{
        "slug": "week1", "title": "Week1", "opens_at": None, "due_at": due.isoformat().replace("+00:00", "Z"),
        "closes_at": None, "attempts_per_part": 3, "time_limit_minutes": None, "time_limit_seconds": None,
        "kind": "homework",
        "score_percent": 0, "solved": 0, "total": 1,
    }]


def test_an_unpublished_assignment_is_hidden_from_students(world, student):
    world.assignment.is_published = False
    world.assignment.save()
    assert student.get("/api/v1/courses/attn/assignments/").json() == []
    assert student.get("/api/v1/courses/attn/assignments/week1/").status_code == 404
    assert student.get(f"/api/v1/exercises/{world.item.pk}/").status_code == 404
    staff = api_client(world.tokens["ta"]).get("/api/v1/courses/attn/assignments/")
    assert [row["slug"] for row in staff.json()] == ["week1"]


def test_the_variant_gives_the_prompt_as_sanitised_html_and_my_inputs(world, student):
    body = student.get(f"/api/v1/exercises/{world.item.pk}/").json()
    variant = Variant.objects.get(student=world.people.student, assignment_item=world.item)
    a, b = variant.params["a"], variant.params["b"]
    assert body["variant_id"] == variant.pk
    assert body["inputs"] == {"a": a, "b": b}
    assert body["prompt_html"].startswith(f"<p>Multiply ${a}$ by ${b}$.</p>")
    assert [(p["key"], p["type"], p["attempts_left"], p["solved"]) for p in body["parts"]] == [
        ("product", "numeric", 3, False), ("total", "numeric", 3, False),
    ]
    assert body["parts"][0]["submit_url"] == f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"
    # Opening it again gives the same variant.
    assert student.get(f"/api/v1/exercises/{world.item.pk}/").json()["inputs"] == {"a": a, "b": b}


def test_a_closed_assignment_says_it_takes_no_answers_and_no_part_has_attempts_left(world, student):
    """As the page, which shows no form then: open, attempts left and takes_answers; closed,
    no part has attempts left, every part is finished, and the refusal says why."""
    body = student.get(f"/api/v1/exercises/{world.item.pk}/").json()
    assert (body["takes_answers"], body["refusal"]) == (True, None)
    assert [(p["attempts_left"], p["finished"]) for p in body["parts"]] == [(3, False), (3, False)]
    world.assignment.closes_at = timezone.now() - timedelta(minutes=1)
    world.assignment.save()
    body = student.get(f"/api/v1/exercises/{world.item.pk}/").json()
    assert (body["takes_answers"], body["refusal"]) == (False, "This assignment is closed.")
    assert [(p["attempts_left"], p["finished"]) for p in body["parts"]] == [(None, True), (None, True)]
    refused = submit(student, world.item.pk, "product", "1")
    assert (refused.status_code, refused.json()["detail"]) == (409, "This assignment is closed.")


def test_the_assignment_says_nothing_is_left_once_it_closed_as_its_page_does(world, student):
    def item_status():
        return student.get("/api/v1/courses/attn/assignments/week1/").json()["exercises"][0]

    assert (item_status()["state"], item_status()["attempts_left"]) == ("not started", 3)
    world.assignment.closes_at = timezone.now() - timedelta(minutes=1)
    world.assignment.save()
    status = item_status()
    assert (status["state"], status["attempts_left"]) == ("not answered", None)



def test_a_parts_points_are_what_the_page_labels_and_the_gradebook_counts(world, student):
    """A 2-point exercise whose parts weigh 2 and 1: the parts are worth 4/3 and 2/3 point
    (the page's labels, the gradebook's maxima); the weights stay apart as ``weight``."""
    from authoring.tests.factories import product_yaml, published_version
    from instructor.selectors import assignment_items_info, gradebook_part_points

    world.item.exercise_version = published_version(source=product_yaml(slug="weighted", points=2))
    world.item.points = 2.0
    world.item.save()
    body = student.get(f"/api/v1/exercises/{world.item.pk}/").json()
    assert [(p["key"], p["points"], p["weight"]) for p in body["parts"]] == [
        ("product", 1.3333333333333333, 2.0), ("total", 0.6666666666666666, 1.0),
    ]
    (info,) = assignment_items_info(assignment=world.assignment)
    assert gradebook_part_points(info) == {p["key"]: p["points"] for p in body["parts"]}
    page = Client()
    page.force_login(world.people.student)
    html = page.get(f"/exercises/{world.item.pk}/").content.decode()
    assert "<em>(4/3 points)</em>" in html and "<em>(2/3 point)</em>" in html


def test_derived_parameters_are_not_given_away(world, student, monkeypatch):
    from api import selectors
    from exercises.engine.spec import Parameter

    variant = Variant.objects.create(
        exercise_version=world.item.exercise_version, student=world.people.student, assignment_item=world.item,
        context=f"assignment:{world.item.pk}", seed=1, params={"a": 2, "b": 3, "secret": 6},
    )
    spec = selectors.version_spec(variant.exercise_version)
    with_derived = dataclasses.replace(spec, parameters=spec.parameters + (Parameter("secret", "derived", {}),))
    monkeypatch.setattr(selectors, "version_spec", lambda version: with_derived)
    assert selectors.variant_inputs(variant=variant) == {"a": 2, "b": 3}


def test_submit_and_read_the_graded_result(world, student, django_capture_on_commit_callbacks):
    student.get(f"/api/v1/exercises/{world.item.pk}/")
    params = Variant.objects.get(student=world.people.student).params
    with django_capture_on_commit_callbacks(execute=True):
        accepted = submit(student, world.item.pk, "product", str(params["a"] * params["b"]))
    assert accepted.status_code == 202
    submission = Submission.objects.get()
    assert accepted.json() == {"id": submission.pk, "status": "queued", "url": f"/api/v1/submissions/{submission.pk}/"}
    assert accepted["Location"] == f"/api/v1/submissions/{submission.pk}/"
    result = student.get(accepted.json()["url"]).json()
    assert {k: result[k] for k in ("status", "finished", "score", "awarded", "correct", "attempt", "part")} == {
        "status": "graded", "finished": True, "score": 1.0, "awarded": 1.0, "correct": True,
        "attempt": 1, "part": "product",
    }
    again = submit(student, world.item.pk, "product", "1")
    assert (again.status_code, again.json()["detail"]) == (409, "You have already solved this part.")
    assert again.json()["type"] == "urn:attnquiz:problem:solved"


def test_a_format_error_is_422_and_uses_no_attempt(world, student):
    response = submit(student, world.item.pk, "product", "twelve")
    assert response.status_code == 422
    assert response.json()["type"] == "urn:attnquiz:problem:invalid"
    assert Submission.objects.count() == 0


def test_attempts_run_out_as_on_the_page(world, student, django_capture_on_commit_callbacks):
    for wrong in ("0", "1", "2"):  # a + b >= 4; each answer new (the same again is refused as unchanged)
        with django_capture_on_commit_callbacks(execute=True):
            assert submit(student, world.item.pk, "total", wrong).status_code == 202
    refused = submit(student, world.item.pk, "total", "3")
    assert (refused.status_code, refused.json()["detail"]) == (409, "You have used all 3 attempts for this part.")
    assert Submission.objects.filter(status=SubmissionStatus.GRADED, correct=False).count() == 3


def test_unknown_part_and_closed_assignment(world, student):
    assert submit(student, world.item.pk, "nope", "1").status_code == 404
    world.assignment.closes_at = timezone.now() - timedelta(minutes=1)
    world.assignment.save()
    closed = submit(student, world.item.pk, "product", "1")
    assert (closed.status_code, closed.json()["detail"]) == (409, "This assignment is closed.")


@pytest.mark.parametrize(
    "answer",
    [["1", "2"], [["1", "2"], ["3", "4"]], "12", "0.5"],
)
def test_answers_of_every_shape_reach_the_format_check(world, student, answer):
    response = submit(student, world.item.pk, "product", answer)
    assert response.status_code in (202, 422)
    if response.status_code == 202:
        assert Submission.objects.get().raw_answer == answer


@pytest.mark.parametrize(
    ("answer", "field_error"),
    [
        ([], "No answer was entered."),
        ([["1"] * 65], "A grid answer may have at most 64 rows and columns."),
        ("1" * 20_001, "That answer is too long (more than 20 kB)."),
        (True, "An answer is a string, a list of strings (choices) or a list of rows of strings (a grid)."),
        ([None], "An answer is a string, a list of strings (choices) or a list of rows of strings (a grid)."),
    ],
)
def test_malformed_answers_are_400_with_the_field_error(world, student, answer, field_error):
    response = submit(student, world.item.pk, "product", answer)
    assert response.status_code == 400
    assert response.json()["errors"] == {"answer": [field_error]}
    assert Submission.objects.count() == 0


def test_a_student_cannot_read_another_students_submission(world, student, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        url = submit(student, world.item.pk, "total", "0").json()["url"]
    from api.services import api_token_create

    sue = api_client(api_token_create(user=world.people.student2, name="s", scope="read", lifetime_days=7)[1])
    assert sue.get(url).status_code == 404
    assert api_client(world.tokens["ta"]).get(url).status_code == 200
    assert api_client(world.tokens["outsider"]).get(url).status_code == 404


def test_a_resent_answer_with_its_idempotency_key_is_stored_once(world, student):
    student.get(f"/api/v1/exercises/{world.item.pk}/")
    url = f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"

    def post(answer, key):
        return student.post(url, {"answer": answer}, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)

    sent = [post("7", "api-answer-0001") for _ in range(2)]
    submission = Submission.objects.get()
    assert [response.status_code for response in sent] == [202, 202]
    assert {response.json()["id"] for response in sent} == {submission.pk}
    reused = post("8", "api-answer-0001")
    assert (reused.status_code, reused.json()["type"]) == (409, "urn:attnquiz:problem:key-reused")
    malformed = post("8", "bad key")
    assert malformed.status_code == 400
    assert Submission.objects.count() == 1
