"""An exercise switched to another version while students work on it (docs/exams.md,
"Changing an exam or homework students have started"): a student who had opened it gets a
new copy under the new version, the page opened before the switch takes no more answers,
and the answers saved on the earlier copy still count, on every page as in the gradebook."""

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
from grading.services import VERSION_CHANGED, SubmissionRefused, submission_create
from instructor import selectors as gradebook
from instructor import services as instructor_services
from lti.selectors import assignment_score

NOTICE = (
    "<strong>Your instructor changed this exercise to a new version</strong>: these are new numbers, "
    "and your attempts start again."
)


@pytest.fixture
def scene(db):
    """Homework of one exercise worth 2 points (parts "product" and "total", 1 point each,
    2 attempts per part). Sam opened it under v1 and saved product right (1.0) and total
    wrong (0.0); then the instructor switched it to v2."""
    people = people_create()
    v1 = published_version(source=product_yaml(slug="mult"))
    homework = assignment_create(people.course, [v1], slug="hw", attempts_per_part=2)
    item = homework.items.get()
    item.points = 2.0
    item.save()
    old = variant_for(item, people.student, params={"a": 3, "b": 4})
    submission_add(old, "product", "12", awarded=1.0)
    submission_add(old, "total", "8", awarded=0.0)
    v2 = published_version(source=product_yaml(slug="mult", answer="a * b + 1"), number=2, exercise=v1.exercise)
    instructor_services.assignment_item_update(item=item, points=2.0, position=0, version=v2, confirmed=True)
    item.refresh_from_db()
    return {"people": people, "homework": homework, "item": item, "old": old, "v2": v2}


def _login(client, user):
    client.login(username=user.username, password=PASSWORD)


def _gradebook_points(scene) -> float | None:
    """Sam's points on the exercise as the instructor's gradebook counts them."""
    homework, student = scene["homework"], scene["people"].student
    infos = gradebook.assignment_items_info(assignment=homework)
    part_scores = gradebook.part_best_of_students(assignment=homework, student_ids=[student.pk])
    return gradebook.student_scores(infos=infos, student_id=student.pk, part_scores=part_scores, draws={}).scores[0]


# --- 1. The page opened before the switch takes no more answers -------------------------


def test_an_answer_to_the_copy_of_a_version_switched_away_from_is_refused_without_an_attempt(scene):
    old, student = scene["old"], scene["people"].student
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(variant=old, student=student, part="total", raw_answer="7")
    assert (refused.value.code, refused.value.message) == ("version_changed", VERSION_CHANGED)
    assert VERSION_CHANGED == (
        "Your instructor changed this exercise to a new version, so this page's copy no longer takes answers; "
        "nothing was stored. Reload the page to see the new version. The answers you already saved are kept "
        "and still count."
    )
    assert list(Submission.objects.filter(variant=old).order_by("part").values_list("part", "attempt")) == [
        ("product", 1), ("total", 1),
    ]


def test_the_page_opened_before_the_switch_shows_the_refusal_in_the_part_as_a_422(client, scene):
    old, student = scene["old"], scene["people"].student
    _login(client, student)
    response = client.post(reverse("submit", args=[old.pk, "total"]), {"answer": "7"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-result="refused"' in page
    assert "Your instructor changed this exercise to a new version" in page
    assert "Reload the page to see the new version." in page
    assert "This did not use an attempt." in page
    # Without the page's script: back to the exercise, which now shows the new copy, with the message.
    plain = client.post(reverse("submit", args=[old.pk, "total"]), {"answer": "7"})
    assert plain.status_code == 302 and plain["Location"] == reverse("exercise", args=[scene["item"].pk]) + "#part-total"
    assert [str(m) for m in get_messages(plain.wsgi_request)] == [VERSION_CHANGED]
    assert Submission.objects.filter(student=student).count() == 2


def test_the_new_copy_takes_answers_with_its_own_attempts(client, scene):
    item, student = scene["item"], scene["people"].student
    new = variant_get_or_create_for_item(item=item, student=student)
    assert (new.exercise_version_id, new.pk != scene["old"].pk) == (scene["v2"].pk, True)
    submission = submission_create(variant=new, student=student, part="total", raw_answer="7")
    assert (submission.variant_id, submission.attempt) == (new.pk, 1)


def test_the_api_answers_on_the_new_copy(scene):
    student, item = scene["people"].student, scene["item"]
    token = api_token_create(user=student, name="t", scope=TokenScope.WRITE, lifetime_days=7)[1]
    response = api_client(token).post(
        f"/api/v1/exercises/{item.pk}/parts/total/submissions/", {"answer": "7"}, content_type="application/json",
    )
    assert response.status_code == 202
    stored = Submission.objects.get(pk=response.json()["id"])
    assert (stored.variant.exercise_version_id, stored.attempt) == (scene["v2"].pk, 1)


# --- 2. One score everywhere: the gradebook's ------------------------------------------


def test_before_the_new_copy_is_opened_every_reading_agrees_with_the_gradebook(client, scene):
    student = scene["people"].student
    assert _gradebook_points(scene) == 1.0
    [row] = selectors.assignment_item_statuses(assignment=scene["homework"], student=student)
    assert (row["status"]["state"], row["status"]["score"], row["points_earned"]) == ("in progress", 0.5, 1.0)
    assert row["status"]["attempts_left"] == 2  # the new copy's, counted afresh
    assert assignment_score(assignment=scene["homework"], student=student).earned == 1.0


def test_after_the_new_copy_is_opened_the_student_page_dashboard_api_and_lms_agree_with_the_gradebook(client, scene):
    student, item, homework = scene["people"].student, scene["item"], scene["homework"]
    _login(client, student)
    assert client.get(reverse("exercise", args=[item.pk])).status_code == 200  # the new copy, no answers yet
    assert Variant.objects.filter(student=student, assignment_item=item).count() == 2
    assert _gradebook_points(scene) == 1.0

    [row] = selectors.assignment_item_statuses(assignment=homework, student=student)
    assert (row["status"]["state"], row["status"]["score"], row["points_earned"]) == ("in progress", 0.5, 1.0)
    assert (row["status"]["solved_parts"], row["status"]["attempts_left"]) == (1, 2)
    overview = client.get(reverse("assignment", args=["attn", "hw"])).content.decode()
    assert "<td>in progress</td>" in overview and "not started" not in overview
    assert '<td id="points-total">1.00 of 2 points</td>' in overview

    [summary] = selectors.assignment_summaries(course=homework.course, role="student", student=student)
    assert (summary["score_percent"], summary["solved"], summary["answered"]) == (50, 0, 1)

    token = api_token_create(user=student, name="t", scope=TokenScope.READ, lifetime_days=7)[1]
    detail = api_client(token).get("/api/v1/courses/attn/assignments/hw/").json()
    assert (detail["score_percent"], detail["exercises"][0]["state"], detail["exercises"][0]["score"]) == (
        50, "in progress", 0.5,
    )
    assert detail["exercises"][0]["attempts_left"] == 2

    lms = assignment_score(assignment=homework, student=student)
    assert (lms.earned, lms.possible, lms.finished) == (1.0, 2.0, False)


def test_answers_on_both_copies_count_per_part_at_their_best(scene):
    student, item, homework = scene["people"].student, scene["item"], scene["homework"]
    new = variant_get_or_create_for_item(item=item, student=student)
    submission_add(new, "product", "13", awarded=0.0)  # worse than v1's: v1's 1.0 stays the best
    submission_add(new, "total", "7", awarded=1.0)  # better than v1's 0.0
    assert _gradebook_points(scene) == 2.0
    [row] = selectors.assignment_item_statuses(assignment=homework, student=student)
    assert (row["status"]["state"], row["status"]["score"], row["points_earned"]) == ("solved", 1.0, 2.0)
    assert (row["status"]["solved_parts"], row["status"]["attempts_left"]) == (2, None)
    [summary] = selectors.assignment_summaries(course=homework.course, role="student", student=student)
    assert (summary["score_percent"], summary["solved"]) == (100, 1)
    lms = assignment_score(assignment=homework, student=student)
    assert (lms.earned, lms.possible, lms.finished) == (2.0, 2.0, True)
    # One item read on its own counts the same.
    status = selectors.exercise_status(item=item, student=student)
    assert (status["state"], status["score"], status["solved_parts"]) == ("solved", 1.0, 2)


def test_a_part_answered_only_on_the_earlier_copy_is_not_unanswered_at_the_finish(scene):
    [row] = selectors.assignment_unanswered_parts(assignment=scene["homework"], student=scene["people"].student)
    assert (row["parts"], row["unanswered"]) == (["product", "total"], [])


# --- 3. The page says the exercise changed ---------------------------------------------


def test_the_new_copy_says_the_exercise_changed_and_what_the_earlier_answers_count(client, scene):
    student, item = scene["people"].student, scene["item"]
    _login(client, student)
    for visit in ("first", "again"):
        page = client.get(reverse("exercise", args=[item.pk])).content.decode()
        assert (
            f"{NOTICE} Your answers to the earlier version still count: 1.00 of 2 points so far.</p>" in page
        ), visit
        assert "Attempts left: <span id=\"attempts-left-total\" data-attempts-left>2</span> of 2" in page


def test_a_copy_switched_before_any_answer_says_only_that_it_changed(client, scene):
    other = scene["people"].student2
    variant_for(scene["item"], other, params={"a": 3, "b": 4})  # opened under v2: no notice
    earlier_v1 = scene["old"].exercise_version
    Variant.objects.create(
        exercise_version=earlier_v1, student=other, assignment_item=scene["item"],
        context=f"assignment:{scene['item'].pk}", seed=2, params={"a": 2, "b": 5},
    )
    _login(client, other)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert f"{NOTICE}</p>" in page


def test_a_student_without_an_earlier_copy_sees_no_notice(client, scene):
    other = scene["people"].student2
    _login(client, other)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert "version-changed" not in page
    assert "version-changed" not in client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()


def test_while_the_review_policy_hides_scores_the_notice_gives_no_points(client, scene):
    homework = scene["homework"]
    homework.show_score = "on_release"
    homework.save()
    _login(client, scene["people"].student)
    page = client.get(reverse("exercise", args=[scene["item"].pk])).content.decode()
    assert f"{NOTICE} Your answers to the earlier version still count.</p>" in page
