"""A person's score of a checked answer can give way to the checker's grade again: the
checker's kept grade is restored with the assignment's penalties, the return is a grade of
its own in the same history (who, when, the score before and after), regrades apply to the
answer again, the student reads the checker's verdict under the review policy, and only
the staff who may grade by hand may do it, by POST with the CSRF token."""

import html
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, product_yaml, published_version, submission_add, user_create,
    variant_for,
)
from courses.models import Enrolment, ReleaseMoment, Role
from grading.events import GradeChange, grade_changed
from grading.models import Submission, SubmissionStatus
from instructor import services
from instructor.models import ChangeOutcome, ManualGrade, ManualGradeKind, RegradeChange


def graded(variant, part, raw_answer, **fields):
    """Store and grade an answer the way the pipeline does (inline mode)."""
    from grading.services import submission_grade

    attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
    submission = Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=attempt, **fields
    )
    return submission_grade(submission_id=submission.pk)


@pytest.fixture
def scene(people):
    """sam's second, late answer to 'product' (3 x 4): 12 is right, so the checker gave 1,
    and 1 x (1 - 0.25 for the second attempt - 0.25 for lateness) = 0.5 awarded."""
    version = published_version(source=product_yaml())
    assignment = assignment_create(people.course, [version], penalty_per_extra_attempt=0.25, late_penalty=0.25)
    item = assignment.items.get()
    item.points = 4
    item.save()
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    graded(variant, "product", "11")
    answer = graded(variant, "product", "12", is_late=True)
    assert (answer.status, answer.attempt, answer.score, answer.awarded, answer.correct) == (
        "graded", 2, 1.0, 0.5, True
    )
    return {"assignment": assignment, "item": item, "version": version, "variant": variant, "answer": answer,
            "checker_feedback": answer.feedback}


def page_url(submission, course="attn"):
    return reverse("instructor:submission", args=[course, submission.pk])


def grade_url(submission, course="attn"):
    return reverse("instructor:submission_grade_by_hand", args=[course, submission.pk])


def return_url(submission, course="attn"):
    return reverse("instructor:submission_grade_return_to_checker", args=[course, submission.pk])


def stored(submission):
    row = Submission.objects.get(pk=submission.pk)
    return (row.status, row.score, row.awarded, row.correct)


def history(submission):
    return list(
        ManualGrade.objects.filter(submission=submission).values_list(
            "kind", "grader__username", "previous_score", "score"
        )
    )


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


# --- Returning ----------------------------------------------------------------------------


def test_the_checkers_grade_comes_back_with_its_penalties_and_the_return_is_recorded(client, people, scene):
    answer = scene["answer"]
    client.login(username="tariq", password=PASSWORD)
    assert client.post(grade_url(answer), {"score": "40", "unit": "percent", "comment": "Shown no work."}).status_code == 302
    assert stored(answer) == ("graded", 0.4, 0.2, False)  # 0.4 x 0.5
    client.login(username="ines", password=PASSWORD)
    before = timezone.now()
    response = client.post(return_url(answer))
    assert response.status_code == 302 and response["Location"] == page_url(answer)
    assert stored(answer) == ("graded", 1.0, 0.5, True)
    row = Submission.objects.get(pk=answer.pk)
    assert row.feedback == scene["checker_feedback"] and row.misconception == ""
    assert row.graded_at >= before  # the grade changed now
    assert history(answer) == [
        (ManualGradeKind.RETURNED, "ines", 0.4, 1.0),
        (ManualGradeKind.BY_HAND, "tariq", 1.0, 0.4),
    ]
    returned = ManualGrade.objects.filter(submission=answer).first()
    assert returned.created_at >= before and returned.comment == ""
    assert (returned.checker_verdict["score"], returned.checker_verdict["awarded"]) == (1.0, 0.5)


def test_the_penalties_are_the_assignments_now_as_a_regrade_would_apply_them(people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    assignment = scene["assignment"]
    assignment.late_penalty = 0.0  # waived after the person's grade
    assignment.save()
    services.submission_grade_return_to_checker(submission=answer, grader=people.instructor)
    assert stored(answer) == ("graded", 1.0, 0.75, True)  # 1 x (1 - 0.25 for the second attempt)


def test_a_wrong_answer_gets_its_zero_back(people, scene):
    wrong = graded(scene["variant"], "product", "13")  # third attempt, on time
    assert stored(wrong) == ("graded", 0.0, 0.0, False)
    message = wrong.feedback["message"]
    services.submission_grade_manually(submission=wrong, grader=people.ta, score=1.0, comment="Generous.")
    assert stored(wrong) == ("graded", 1.0, 0.5, True)
    services.submission_grade_return_to_checker(submission=wrong, grader=people.ta)
    assert stored(wrong) == ("graded", 0.0, 0.0, False)
    assert Submission.objects.get(pk=wrong.pk).feedback["message"] == message != ""


def test_graded_by_hand_twice_the_first_kept_verdict_is_the_checkers(people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    services.submission_grade_manually(submission=answer, grader=people.instructor, score=0.6)
    services.submission_grade_return_to_checker(submission=answer, grader=people.ta)
    assert stored(answer) == ("graded", 1.0, 0.5, True)
    assert history(answer) == [
        (ManualGradeKind.RETURNED, "tariq", 0.6, 1.0),
        (ManualGradeKind.BY_HAND, "ines", 0.4, 0.6),
        (ManualGradeKind.BY_HAND, "tariq", 1.0, 0.4),
    ]


def test_an_answer_the_checker_could_not_grade_goes_back_to_could_not_grade(client, people, scene):
    lost = Submission.objects.create(
        variant=scene["variant"], student=people.student, part="total", raw_answer="7", attempt=1,
        status=SubmissionStatus.COULD_NOT_GRADE, feedback={"message": "The checker ran out of time."},
    )
    services.submission_grade_manually(submission=lost, grader=people.ta, score=1.0)
    assert stored(lost) == ("graded", 1.0, 1.0, True)
    client.login(username="tariq", password=PASSWORD)
    assert client.post(return_url(lost)).status_code == 302
    assert stored(lost) == ("could_not_grade", None, None, None)
    assert Submission.objects.get(pk=lost.pk).feedback == {"message": "The checker ran out of time."}
    assert history(lost)[0] == (ManualGradeKind.RETURNED, "tariq", 1.0, None)
    shown = text_of(client.get(page_url(lost)).content.decode())
    assert "1.00 → no score (could not grade) by tariq: returned to the checker's grade" in shown


# --- The page -----------------------------------------------------------------------------


def test_the_page_offers_the_return_only_while_a_persons_score_stands(client, people, scene):
    answer = scene["answer"]
    client.login(username="tariq", password=PASSWORD)
    form = 'action="' + return_url(answer) + '"'
    assert form not in client.get(page_url(answer)).content.decode()  # the checker's grade stands
    client.post(grade_url(answer), {"score": "40", "unit": "percent"})
    page = client.get(page_url(answer)).content.decode()
    assert form in page and "Return to the checker's grade" in page
    assert "(100% before penalties)" in text_of(page)
    client.post(return_url(answer))
    page = client.get(page_url(answer)).content.decode()
    shown = text_of(page)
    assert form not in page and "Return to the checker's grade</button>" not in page
    assert "Score set by a person" not in shown and 'id="checker-verdict"' not in page
    assert "100% / 50% · correct: yes · by the checker" in shown
    hand_grades = text_of(re.search(r'<ul id="hand-grades">(.*?)</ul>', page, re.S)[1])
    assert "0.40 → 1.00 by tariq: returned to the checker's grade" in hand_grades
    assert "1.00 → 0.40 by tariq" in hand_grades
    # The score can be set by hand again, over the checker's grade restored.
    assert 'action="' + grade_url(answer) + '"' in page


def test_the_page_says_the_checkers_grade_is_back(client, people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    client.login(username="tariq", password=PASSWORD)
    followed = client.post(return_url(answer), follow=True)
    assert [str(m) for m in followed.context["messages"]] == [f"Submission {answer.pk} has the checker's grade again."]


# --- Refusals -----------------------------------------------------------------------------


def test_an_answer_nobody_graded_by_hand_is_refused_with_409(client, people, scene):
    answer = scene["answer"]
    client.login(username="tariq", password=PASSWORD)
    response = client.post(return_url(answer))
    assert response.status_code == 409
    assert "No person's score stands on this answer" in html.unescape(response.content.decode())
    assert stored(answer) == ("graded", 1.0, 0.5, True) and not ManualGrade.objects.exists()


def test_returning_twice_is_refused_the_second_time(client, people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    client.login(username="tariq", password=PASSWORD)
    assert client.post(return_url(answer)).status_code == 302
    assert client.post(return_url(answer)).status_code == 409
    assert stored(answer) == ("graded", 1.0, 0.5, True)
    assert ManualGrade.objects.filter(submission=answer).count() == 2


def test_a_free_text_answer_is_refused_with_409(client, people):
    version = published_version(source=FREE_TEXT_YAML)
    item = assignment_create(people.course, [version], slug="essay").items.get()
    variant = variant_for(item, people.student, params={"d": 64})
    essay = submission_add(variant, "why", "Because the softmax saturates.", awarded=None, status=SubmissionStatus.MANUAL)
    services.submission_grade_manually(submission=essay, grader=people.ta, score=0.5, criteria_met=[1])
    client.login(username="tariq", password=PASSWORD)
    response = client.post(return_url(essay))
    assert response.status_code == 409
    assert "no checker's grade to return to" in html.unescape(response.content.decode())
    assert stored(essay) == ("graded", 0.5, 0.5, False)
    assert history(essay) == [(ManualGradeKind.BY_HAND, "tariq", None, 0.5)]


def test_a_garbled_kept_verdict_restores_nothing(people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    ManualGrade.objects.filter(submission=answer).update(checker_verdict={"status": "graded", "score": "1"})
    with pytest.raises(services.InstructorRefused, match="not kept whole"):
        services.submission_grade_return_to_checker(submission=answer, grader=people.ta)
    assert stored(answer) == ("graded", 0.4, 0.2, False)
    assert ManualGrade.objects.filter(submission=answer).count() == 1


# --- Access -------------------------------------------------------------------------------


def test_only_the_courses_staff_may_return_and_only_by_post(client, people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    other_ta = user_create("tom")
    Enrolment.objects.create(course=people.other_course, user=other_ta, role=Role.TEACHING_ASSISTANT)
    client.login(username="sam", password=PASSWORD)  # the answer's own student
    assert client.post(return_url(answer)).status_code == 403
    client.login(username="tom", password=PASSWORD)
    assert client.post(return_url(answer)).status_code == 404
    assert client.post(return_url(answer, course="other")).status_code == 404
    client.login(username="tariq", password=PASSWORD)
    assert client.get(return_url(answer)).status_code == 405
    client.logout()
    response = client.post(return_url(answer))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert stored(answer) == ("graded", 0.4, 0.2, False)
    assert ManualGrade.objects.filter(submission=answer).count() == 1


def test_the_form_needs_its_csrf_token(people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    browser = Client(enforce_csrf_checks=True)
    browser.login(username="tariq", password=PASSWORD)
    assert browser.post(return_url(answer)).status_code == 403
    assert stored(answer) == ("graded", 0.4, 0.2, False)
    page = browser.get(page_url(answer)).content.decode()
    token = re.search(
        r'id="return-to-checker".*?name="csrfmiddlewaretoken" value="([^"]+)"', page, re.S
    )[1]
    assert browser.post(return_url(answer), {"csrfmiddlewaretoken": token}).status_code == 302
    assert stored(answer) == ("graded", 1.0, 0.5, True)


def test_an_archived_course_refuses_and_keeps_the_persons_score(client, people, scene):
    from courses.services import course_archive

    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    course_archive(course=people.course)
    client.login(username="ines", password=PASSWORD)
    assert client.post(return_url(answer)).status_code == 409
    assert 'action="' + return_url(answer) + '"' not in client.get(page_url(answer)).content.decode()
    with pytest.raises(services.InstructorRefused):
        services.submission_grade_return_to_checker(submission=answer, grader=people.instructor)
    assert stored(answer) == ("graded", 0.4, 0.2, False)


def test_the_return_is_announced_as_a_grade_change(people, scene, django_capture_on_commit_callbacks):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    heard = []

    def receiver(sender, submission, change, **kwargs):
        heard.append((submission.pk, change, submission.score, submission.awarded))

    grade_changed.connect(receiver)
    try:
        services.submission_grade_return_to_checker(submission=answer, grader=people.ta)
    finally:
        grade_changed.disconnect(receiver)
    assert heard == [(answer.pk, GradeChange.RETURNED_TO_CHECKER, 1.0, 0.5)]


# --- Regrades apply again -----------------------------------------------------------------


def test_a_regrade_applies_to_the_answer_again_and_a_new_hand_grade_keeps_the_new_verdict(
    people, scene, django_capture_on_commit_callbacks
):
    """sam's 13 (third attempt, on time) is wrong; a person gave it half marks and then gave
    it back to the checker. The key is 'corrected' to a * b + 1 (13): the regrade now gives
    it full marks, as it would any answer nobody graded by hand."""
    wrong = graded(scene["variant"], "product", "13")
    services.submission_grade_manually(submission=wrong, grader=people.ta, score=0.5, comment="half")
    services.submission_grade_return_to_checker(submission=wrong, grader=people.ta)
    assert stored(wrong) == ("graded", 0.0, 0.0, False)
    v2 = published_version(source=product_yaml(answer="a * b + 1"), number=2, exercise=scene["version"].exercise)
    services.assignment_item_update(item=scene["item"], points=4, position=0, version=v2)
    with django_capture_on_commit_callbacks(execute=True):
        job = services.regrade_job_create(
            assignment=scene["assignment"], actor=people.instructor, dry_run=False, allow_lower=False,
            parts=["product"], item_ids=[scene["item"].pk],
        )
    job.refresh_from_db()
    assert (job.status, job.by_hand) == ("done", 0)
    change = RegradeChange.objects.get(job=job, submission=wrong)
    assert (change.outcome, change.old_score, change.new_score, change.new_awarded) == (
        ChangeOutcome.CHANGED, 0.0, 1.0, 0.5
    )
    assert stored(wrong) == ("graded", 1.0, 0.5, True)  # 1 x (1 - 0.5 for the third attempt)
    # A person grades it again: the verdict kept (and restored on a return) is the regraded one.
    services.submission_grade_manually(submission=wrong, grader=people.instructor, score=0.25)
    assert ManualGrade.objects.filter(submission=wrong).first().checker_verdict["score"] == 1.0
    with django_capture_on_commit_callbacks(execute=True):
        kept = services.regrade_job_create(
            assignment=scene["assignment"], actor=people.instructor, dry_run=True, parts=["product"],
            item_ids=[scene["item"].pk], allow_lower=True,
        )
    kept.refresh_from_db()
    assert RegradeChange.objects.get(job=kept, submission=wrong).outcome == ChangeOutcome.BY_HAND
    services.submission_grade_return_to_checker(submission=wrong, grader=people.instructor)
    assert stored(wrong) == ("graded", 1.0, 0.5, True)


# --- What the student sees ----------------------------------------------------------------


def student_result(client, submission) -> str:
    client.login(username="sam", password=PASSWORD)
    return client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()


def test_the_student_reads_the_checkers_verdict_again(client, people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4, comment="Show your work.")
    assert "Show your work." in student_result(client, answer)
    services.submission_grade_return_to_checker(submission=answer, grader=people.ta)
    result = student_result(client, answer)
    shown = text_of(result)
    assert 'data-score="1.0"' in result
    assert "score 100% (50% after penalties)" in shown
    assert text_of(scene["checker_feedback"]["message"]) in shown
    assert "Show your work." not in shown and "graded this answer by hand" not in shown
    # No longer among the answers a person graded.
    mine = client.get(reverse("grades:mine")).content.decode()
    assert f'id="graded-{answer.pk}"' not in mine


def test_the_review_policy_withholds_the_checkers_verdict_until_release(client, people, scene):
    assignment = scene["assignment"]
    assignment.show_correctness = assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.save()
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    services.submission_grade_return_to_checker(submission=answer, grader=people.ta)
    checker_message = text_of(scene["checker_feedback"]["message"])
    withheld = student_result(client, answer)
    assert 'data-score="1.0"' not in withheld and "100%" not in withheld
    assert checker_message not in text_of(withheld)
    assignment.grades_released_at = timezone.now() - timedelta(seconds=1)
    assignment.save()
    released = student_result(client, answer)
    assert 'data-score="1.0"' in released and checker_message in text_of(released)


def test_the_submissions_export_names_no_grader_once_returned(client, people, scene):
    answer = scene["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.4)
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:submissions_csv", args=["attn", scene["assignment"].slug])

    def grader_of_answer():
        rows = b"".join(client.get(url).streaming_content).decode().splitlines()
        return next(line for line in rows if line.startswith(f"{answer.pk},")).rsplit(",", 1)[1]

    assert grader_of_answer() == "tariq"
    services.submission_grade_return_to_checker(submission=answer, grader=people.instructor)
    assert grader_of_answer() == ""
