"""What an exam's student sees of their grades, everywhere a grade shows (the result
fragment, its JSON, the exercise, assignment and dashboard pages, the student API),
before release and then exactly what the review policy allows — on a frozen clock."""

from __future__ import annotations

import pytest
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from courses.models import ReleaseMoment
from exams import services
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission

from .conftest import POLICY, UNIFORM, correct, exam_policy

HX = {"HTTP_HX_REQUEST": "true"}
# Anything that would give a grade away, in the markup or its classes and data.
VERDICTS = ("Correct", "Not correct", "Partly correct", "is-correct", "is-wrong", "is-partial",
            "Solved", "score 100%", "score 0%", 'data-score="1', 'data-score="0')
HINT = "Start by forming"
HEATMAP = 'class="heatmaps"'
SOLUTION = "Worked solution"


@pytest.fixture
def taken(client, exam, item, student, clock, django_capture_on_commit_callbacks):
    """student1 started the exam, answered the weights part right and the output part wrong."""
    client.force_login(student)
    client.post(reverse("exams:start", args=[exam.course.slug, exam.slug]))
    client.get(reverse("exercise", args=[item.pk]))
    variant = variant_get_or_create_for_item(item=item, student=student)
    fragments = {}
    with django_capture_on_commit_callbacks(execute=True):
        for part, answer in (("weights", correct(variant, "weights")), ("output", "[0, 0, 0, 0]")):
            response = client.post(reverse("submit", args=[variant.pk, part]), {"answer": answer}, **HX)
            assert response.status_code == 200, response.content
            fragments[part] = response.content.decode()
    submissions = {s.part: s for s in Submission.objects.filter(variant=variant)}
    assert (submissions["weights"].correct, submissions["output"].correct) == (True, False)
    return {"variant": variant, "fragments": fragments, "submissions": submissions}


def pages(client, exam, item, submissions) -> dict[str, str]:
    return {
        "exercise": client.get(reverse("exercise", args=[item.pk])).content.decode(),
        "assignment": client.get(reverse("assignment", args=[exam.course.slug, exam.slug])).content.decode(),
        "dashboard": client.get(reverse("dashboard")).content.decode(),
        "result": client.get(reverse("submission", args=[submissions["weights"].pk]), **HX).content.decode(),
    }


def api_reads(student, exam, item, submissions) -> dict:
    _, secret = api_token_create(user=student, name="t", scope=TokenScope.READ, lifetime_days=7)
    api = api_client(secret)
    return {
        "submission": api.get(f"/api/v1/submissions/{submissions['weights'].pk}/").json(),
        "exercise": api.get(f"/api/v1/exercises/{item.pk}/").json(),
        "assignment": api.get(f"/api/v1/courses/{exam.course.slug}/assignments/{exam.slug}/").json(),
    }


def test_before_release_the_student_sees_only_answer_saved(client, exam, item, student, taken):
    for part, fragment in taken["fragments"].items():
        assert "Answer saved" in fragment, part
        assert "Grading your answer" not in fragment  # nothing to wait for
        assert not [word for word in VERDICTS if word in fragment], part
    shown = pages(client, exam, item, taken["submissions"])
    for name, page in shown.items():
        assert not [word for word in VERDICTS if word in page], name
        assert HINT not in page and HEATMAP not in page and SOLUTION not in page, name
    assert shown["exercise"].count("Answer saved") == 2
    assert "Earlier attempts" not in shown["exercise"]  # one answer a part: no history repeats it
    assert 'id="form-weights"' in shown["exercise"]  # a right answer does not end the part
    assert "not released yet" in shown["assignment"] and "answered" in shown["assignment"]
    assert "1 of " in shown["dashboard"] and " answered" in shown["dashboard"]
    assert "not released yet" in shown["dashboard"]
    json = client.get(
        reverse("submission", args=[taken["submissions"]["weights"].pk]), HTTP_ACCEPT="application/json"
    ).json()
    assert {k: json[k] for k in ("score", "awarded", "correct", "misconception")} == {
        "score": None, "awarded": None, "correct": None, "misconception": None,
    }
    assert json["feedback"]["message"] == "" and "entry_correct" not in json["feedback"]["details"]
    api = api_reads(student, exam, item, taken["submissions"])
    assert {k: api["submission"][k] for k in ("score", "awarded", "correct", "misconception")} == {
        "score": None, "awarded": None, "correct": None, "misconception": "",
    }
    assert api["submission"]["feedback"] == {
        "message": "", "misconception_message": "", "entry_correct": None, "rubric": [], "rubric_unrecorded": False,
    }
    assert [(p["solved"], p["finished"], p["hints_html"], p["solution_html"]) for p in api["exercise"]["parts"]] == [
        (None, False, [], None), (None, False, [], None),
    ]
    assert (api["assignment"]["score_percent"], api["assignment"]["solved"]) == (None, None)
    row = next(e for e in api["assignment"]["exercises"] if e["id"] == item.pk)
    assert (row["state"], row["score"], row["solved_parts"]) == ("answered", None, None)


def test_after_release_the_preset_shows_all_but_solutions(client, exam, item, student, taken, clock):
    services.grades_release(assignment=exam, by=None)
    # A release never reaches an attempt still running: only "Answer saved" until it ends.
    running = pages(client, exam, item, taken["submissions"])
    assert "Answer saved" in running["result"] and "Correct" not in running["result"]
    client.post(reverse("exams:finish", args=[exam.course.slug, exam.slug]))
    shown = pages(client, exam, item, taken["submissions"])
    assert "Correct" in shown["result"] and "score 100%" in shown["result"] and "is-correct" in shown["result"]
    assert "Solved" in shown["exercise"] and "Not correct" in shown["exercise"]
    assert HINT in shown["exercise"] and HEATMAP in shown["exercise"]
    assert SOLUTION not in shown["exercise"]  # the preset: solutions never
    assert "Answer saved" not in shown["exercise"]
    assert "not released yet" not in shown["dashboard"] + shown["assignment"]
    api = api_reads(student, exam, item, taken["submissions"])
    assert (api["submission"]["score"], api["submission"]["correct"]) == (1.0, True)
    assert [p["solved"] for p in api["exercise"]["parts"]] == [True, False]
    row = next(e for e in api["assignment"]["exercises"] if e["id"] == item.pk)
    # The attempt has ended: as on the assignment page, the exercise is finished, not in progress.
    assert (row["state"], row["solved_parts"], row["score"], row["attempts_left"]) == ("finished", 1, 0.5, None)


def test_correctness_after_finish_and_the_score_on_release(client, exam, item, student, taken, clock):
    exam_policy(exam, show_correctness=ReleaseMoment.AFTER_FINISH, show_misconception=ReleaseMoment.AFTER_FINISH)
    shown = pages(client, exam, item, taken["submissions"])
    assert "Answer saved" in shown["result"] and "Correct" not in shown["result"]
    client.post(reverse("exams:finish", args=[exam.course.slug, exam.slug]))
    shown = pages(client, exam, item, taken["submissions"])
    assert "Correct" in shown["result"] and "is-correct" in shown["result"]
    assert "score 100%" not in shown["result"] and 'data-score=""' in shown["result"]
    assert "Solved" in shown["exercise"] and HINT not in shown["exercise"]
    assert "not released yet" in shown["assignment"]
    api = api_reads(student, exam, item, taken["submissions"])
    assert (api["submission"]["correct"], api["submission"]["score"]) == (True, None)
    services.grades_release(assignment=exam, by=None)
    assert "score 100%" in pages(client, exam, item, taken["submissions"])["result"]


def test_after_close_shows_once_the_close_date_passed(client, exam, item, student, taken, clock):
    exam.closes_at = clock.now.replace(hour=10)
    exam_policy(exam, show_score=ReleaseMoment.AFTER_CLOSE)
    assert "score 100%" not in pages(client, exam, item, taken["submissions"])["result"]
    clock.now = exam.closes_at
    result = pages(client, exam, item, taken["submissions"])["result"]
    assert "score 100%" in result and "Correct" not in result  # correctness stays on release


def test_the_staff_see_the_grade_of_a_students_exam_answer(client, demo, exam, taken, django_user_model):
    client.force_login(django_user_model.objects.get(username="ta"))
    fragment = client.get(reverse("submission", args=[taken["submissions"]["weights"].pk]), **HX).content.decode()
    assert "Correct" in fragment and "score 100%" in fragment


def test_homework_still_shows_everything_at_once(client, demo, item, student, django_capture_on_commit_callbacks):
    client.force_login(student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        fragment = client.post(
            reverse("submit", args=[variant.pk, "weights"]), {"answer": UNIFORM}, **HX
        ).content.decode()
    assert "Grading your answer" in fragment  # graded at commit, after the view answered
    submission = Submission.objects.get(variant=variant)
    fragment = client.get(reverse("submission", args=[submission.pk]), **HX).content.decode()
    assert "Not correct" in fragment and "is-wrong" in fragment and "Answer saved" not in fragment


def test_mastery_and_review_wait_for_the_release(exam, item, student, clock, django_capture_on_commit_callbacks, settings):
    """The skill map and the review due list would tell what the exam hides; the mastery
    backfill records the answers once the grades are released."""
    from mastery.models import Observation
    from mastery.services import mastery_backfill
    from review.models import ReviewEntry
    from review.services import review_settings_update

    review_settings_update(course=exam.course, enabled=True, feeding_assignments=[exam])
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        from grading.services import submission_create

        submission_create(variant=variant, student=student, part="weights", raw_answer=correct(variant, "weights"))
    assert Submission.objects.get(variant=variant).correct is True
    assert not Observation.objects.filter(student=student).exists()
    assert not ReviewEntry.objects.filter(submission__student=student).exists()
    assert mastery_backfill(days=1) == 0
    services.grades_release(assignment=exam, by=None)
    assert mastery_backfill(days=1) == 0  # a release never reaches a running attempt
    services.attempt_finish(assignment=exam, student=student)
    assert mastery_backfill(days=1) == 1
    assert Observation.objects.filter(student=student).exists()
    # The same answer on homework feeds the review at once.
    exam_policy(exam, **{name: ReleaseMoment.DURING for name in POLICY}, kind="homework")
    item.assignment.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(variant=variant, student=student, part="output", raw_answer=correct(variant, "output"))
    assert ReviewEntry.objects.filter(submission__student=student).count() == 1
