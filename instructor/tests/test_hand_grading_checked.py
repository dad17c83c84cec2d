"""A person sets the score of an auto-graded (checked) answer on the staff's submission
page: the grader and a ManualGrade are recorded, penalties apply, the checker's verdict
stays readable by the staff, a regrade keeps the person's score, the student reads it
under the review policy, and bad input saves nothing."""

import html
import re

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, user_create, variant_for,
)
from courses.models import Enrolment, ReleaseMoment, Role
from grading.models import Submission, SubmissionStatus
from instructor import services
from instructor.models import ChangeOutcome, ManualGrade, RegradeChange


def graded(variant, part, raw_answer, **fields):
    """Store and grade an answer the way the pipeline does (inline mode)."""
    from grading.services import submission_grade

    attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
    submission = Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=attempt, **fields
    )
    return submission_grade(submission_id=submission.pk)


@pytest.fixture
def checked(people):
    """sam's second, late answer 13 to 'product' (3 x 4): the checker gave 0. The item is
    worth 4 points, 2 of them this part's; an extra attempt costs 25 %, lateness 25 %."""
    version = published_version(source=product_yaml())
    assignment = assignment_create(
        people.course, [version], penalty_per_extra_attempt=0.25, late_penalty=0.25
    )
    item = assignment.items.get()
    item.points = 4
    item.save()
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    graded(variant, "product", "11")
    answer = graded(variant, "product", "13", is_late=True)
    assert (answer.status, answer.attempt, answer.score, answer.awarded, answer.correct) == (
        "graded", 2, 0.0, 0.0, False
    )
    return {"assignment": assignment, "item": item, "version": version, "variant": variant, "answer": answer}


def page_url(submission, course="attn"):
    return reverse("instructor:submission", args=[course, submission.pk])


def grade_url(submission, course="attn"):
    return reverse("instructor:submission_grade_by_hand", args=[course, submission.pk])


def stored(submission):
    row = Submission.objects.get(pk=submission.pk)
    return (row.status, row.score, row.awarded, row.correct)


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


# --- Grading by hand ---------------------------------------------------------------------


def test_a_ta_sets_a_percentage_and_penalties_apply(client, people, checked):
    answer = checked["answer"]
    client.login(username="tariq", password=PASSWORD)
    response = client.post(grade_url(answer), {"score": "75", "unit": "percent", "comment": "  Right idea, slip at the end. "})
    assert response.status_code == 302 and response["Location"] == page_url(answer)
    # 0.75 x (1 - 0.25 for the second attempt - 0.25 for lateness) = 0.375
    assert stored(answer) == ("graded", 0.75, 0.375, False)
    row = Submission.objects.get(pk=answer.pk)
    assert row.feedback == {
        "message": "Your instructor graded this answer by hand. Right idea, slip at the end.",
        "grader_comment": "Right idea, slip at the end.",
        "details": {"manual": True, "criteria_met": []},
        "rubric": [],
    }
    grade = ManualGrade.objects.get(submission=answer)
    assert (grade.grader, grade.score, grade.comment, grade.criteria_met) == (
        people.ta, 0.75, "Right idea, slip at the end.", []
    )
    verdict = grade.checker_verdict
    assert (verdict["status"], verdict["score"], verdict["awarded"], verdict["correct"]) == ("graded", 0.0, 0.0, False)
    assert verdict["feedback"]["message"] == answer.feedback["message"] != ""


def test_points_of_the_part_are_turned_into_a_fraction(client, people, checked):
    client.login(username="ines", password=PASSWORD)
    response = client.post(grade_url(checked["answer"]), {"score": "1.5", "unit": "points"})
    assert response.status_code == 302
    assert stored(checked["answer"]) == ("graded", 0.75, 0.375, False)  # 1.5 of the part's 2 points
    assert Submission.objects.get(pk=checked["answer"].pk).feedback["message"] == (
        "Your instructor graded this answer by hand."
    )


def test_full_marks_make_the_answer_correct(client, people, checked):
    client.login(username="tariq", password=PASSWORD)
    assert client.post(grade_url(checked["answer"]), {"score": "2", "unit": "points"}).status_code == 302
    assert stored(checked["answer"]) == ("graded", 1.0, 0.5, True)


def test_grading_again_keeps_the_history_and_the_checkers_first_verdict(client, people, checked):
    answer = checked["answer"]
    client.login(username="tariq", password=PASSWORD)
    client.post(grade_url(answer), {"score": "50", "unit": "percent", "comment": "first look"})
    client.login(username="ines", password=PASSWORD)
    client.post(grade_url(answer), {"score": "100", "unit": "percent", "comment": "on reflection, fine"})
    assert stored(answer) == ("graded", 1.0, 0.5, True)
    history = list(ManualGrade.objects.filter(submission=answer).values_list("grader__username", "score", "comment"))
    assert history == [("ines", 1.0, "on reflection, fine"), ("tariq", 0.5, "first look")]
    verdicts = [grade.checker_verdict for grade in ManualGrade.objects.filter(submission=answer)]
    assert verdicts[0] == verdicts[1] and (verdicts[0]["score"], verdicts[0]["correct"]) == (0.0, False)


def test_the_page_says_a_person_set_the_score_and_keeps_the_checkers_verdict(client, people, checked):
    answer = checked["answer"]
    checker_message = answer.feedback["message"]
    client.login(username="tariq", password=PASSWORD)
    client.post(grade_url(answer), {"score": "75", "unit": "percent", "comment": "Slip at the end."})
    response = client.get(page_url(answer))
    page = response.content.decode()
    shown = text_of(page)
    assert response.status_code == 200
    assert "Score set by a person: tariq gave 75% on" in shown
    assert "75% / 37.5% · correct: no · by tariq, by hand" in shown
    assert 'id="checker-verdict"' in page
    verdict = text_of(re.search(r'<table class="data" id="checker-verdict">(.*?)</table>', page, re.S)[1])
    assert "Status Graded" in verdict and "0% / 0% · correct: no" in verdict
    assert checker_message and text_of(checker_message) in verdict
    assert "0.75 by tariq — Slip at the end." in text_of(re.search(r'<ul id="hand-grades">(.*?)</ul>', page, re.S)[1])
    # The form stays, to change the score again.
    assert 'action="' + grade_url(answer) + '"' in page


def _score_line(client, submission) -> str:
    page = client.get(page_url(submission)).content.decode()
    return text_of(re.search(r'<td id="score-awarded">(.*?)</td>', page, re.S)[1]).strip()


def test_the_score_line_says_who_set_the_score_and_how(client, people):
    """1.5 of a part's 2 points, set by hand, read as a person's (it once read "by the
    checker"); given back to the checker, as the checker's again; a grader whose account
    is gone, as a former member of staff's."""
    version = published_version(source=product_yaml())
    assignment = assignment_create(people.course, [version])
    item = assignment.items.get()
    item.points = 4
    item.save()
    answer = graded(variant_for(item, people.student, params={"a": 3, "b": 4}), "product", "13")
    client.login(username="tariq", password=PASSWORD)
    assert _score_line(client, answer) == "0% / 0% · correct: no · by the checker"
    assert client.post(grade_url(answer), {"score": "1.5", "unit": "points"}).status_code == 302
    assert _score_line(client, answer) == "75% / 75% · correct: no · by tariq, by hand"
    client.post(reverse("instructor:submission_grade_return_to_checker", args=["attn", answer.pk]))
    assert _score_line(client, answer) == "0% / 0% · correct: no · by the checker"
    client.login(username="ines", password=PASSWORD)
    client.post(grade_url(answer), {"score": "100", "unit": "percent"})
    assert _score_line(client, answer) == "100% / 100% · correct: yes · by ines, by hand"
    people.instructor.delete()
    client.login(username="tariq", password=PASSWORD)
    assert _score_line(client, answer) == "100% / 100% · correct: yes · by a former member of staff, by hand"


def test_a_free_text_answer_graded_by_a_person_names_them_and_one_waiting_names_nobody(client, people):
    from authoring.tests.factories import FREE_TEXT_YAML

    assignment = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay")
    variant = variant_for(assignment.items.get(), people.student, params={"d": 64})
    answer = Submission.objects.create(
        variant=variant, student=people.student, part="why", raw_answer="Because.", attempt=1,
        status=SubmissionStatus.MANUAL,
    )
    client.login(username="tariq", password=PASSWORD)
    assert _score_line(client, answer) == "— / — · correct: —"
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.5)
    assert _score_line(client, answer) == "50% / 50% · correct: no · by tariq, by hand"


def test_an_answer_the_checker_could_not_grade_can_be_graded_by_hand(client, people, checked):
    variant = checked["variant"]
    lost = Submission.objects.create(
        variant=variant, student=people.student, part="total", raw_answer="7", attempt=1,
        status=SubmissionStatus.COULD_NOT_GRADE, feedback={"message": "The checker ran out of time."},
    )
    client.login(username="tariq", password=PASSWORD)
    page = client.get(page_url(lost)).content.decode()
    assert 'action="' + grade_url(lost) + '"' in page
    assert client.post(grade_url(lost), {"score": "100", "unit": "percent"}).status_code == 302
    assert stored(lost) == ("graded", 1.0, 1.0, True)
    verdict = ManualGrade.objects.get(submission=lost).checker_verdict
    assert (verdict["status"], verdict["score"], verdict["feedback"]["message"]) == (
        "could_not_grade", None, "The checker ran out of time."
    )
    shown = text_of(client.get(page_url(lost)).content.decode())
    assert "Status Could not grade" in shown and "The checker ran out of time." in shown


def test_an_answer_still_being_checked_is_refused(client, people, checked):
    waiting = Submission.objects.create(
        variant=checked["variant"], student=people.student, part="total", raw_answer="7", attempt=1,
        status=SubmissionStatus.QUEUED,
    )
    client.login(username="tariq", password=PASSWORD)
    assert 'action="' + grade_url(waiting) + '"' not in client.get(page_url(waiting)).content.decode()
    response = client.post(grade_url(waiting), {"score": "100", "unit": "percent"})
    assert response.status_code == 422
    assert "The checker has not finished with this answer" in response.content.decode()
    assert stored(waiting) == ("queued", None, None, None) and not ManualGrade.objects.exists()


def test_the_service_refuses_a_rubric_on_a_checked_part_and_a_score_out_of_range(people, checked):
    answer = checked["answer"]
    with pytest.raises(services.InstructorRefused, match="no rubric"):
        services.submission_grade_manually(submission=answer, grader=people.ta, score=0.5, criteria_met=[0])
    for score in (float("nan"), float("inf"), -0.01, 1.01, True):
        with pytest.raises(services.InstructorRefused, match="between 0 and 1"):
            services.submission_grade_manually(submission=answer, grader=people.ta, score=score)
    assert stored(answer) == ("graded", 0.0, 0.0, False) and not ManualGrade.objects.exists()


# --- Bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("data, message", [
    ({"score": "150", "unit": "percent"}, "Give a percentage between 0 and 100."),
    ({"score": "-1", "unit": "percent"}, "Give a percentage between 0 and 100."),
    ({"score": "2.5", "unit": "points"}, "Give between 0 and 2 points."),
    ({"score": "nan", "unit": "percent"}, "Enter a number."),
    ({"score": "NaN", "unit": "points"}, "Enter a number."),
    ({"score": "inf", "unit": "percent"}, "Enter a number."),
    ({"score": "-Infinity", "unit": "percent"}, "Enter a number."),
    ({"score": "three quarters", "unit": "percent"}, "Enter a number."),
    ({"score": "", "unit": "percent"}, "This field is required."),
    ({"score": "50", "unit": "bushels"}, "Select a valid choice. bushels is not one of the available choices."),
    ({"score": "50", "unit": "percent", "comment": "x" * 5001}, "Ensure this value has at most 5000 characters"),
])
def test_bad_input_is_a_message_on_the_page_and_saves_nothing(client, people, checked, data, message):
    answer = checked["answer"]
    client.login(username="tariq", password=PASSWORD)
    response = client.post(grade_url(answer), data)
    assert response.status_code == 422
    page = response.content.decode()
    assert message in html.unescape(page)
    assert "<h1>Submission" in page  # the submission's page, with the form to correct
    assert stored(answer) == ("graded", 0.0, 0.0, False) and not ManualGrade.objects.exists()


# --- Access -------------------------------------------------------------------------------


def test_students_get_403_and_other_courses_staff_404_and_nothing_is_saved(client, people, checked):
    answer = checked["answer"]
    other_ta = user_create("tom")
    Enrolment.objects.create(course=people.other_course, user=other_ta, role=Role.TEACHING_ASSISTANT)
    data = {"score": "100", "unit": "percent"}
    client.login(username="sam", password=PASSWORD)  # the answer's own student
    assert client.post(grade_url(answer), data).status_code == 403
    client.login(username="tom", password=PASSWORD)
    assert client.post(grade_url(answer), data).status_code == 404
    assert client.post(grade_url(answer, course="other"), data).status_code == 404
    assert client.get(page_url(answer, course="other")).status_code == 404
    client.logout()
    response = client.post(grade_url(answer), data)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client.get(grade_url(answer)).status_code in (302, 405)
    assert stored(answer) == ("graded", 0.0, 0.0, False) and not ManualGrade.objects.exists()


def test_the_form_only_takes_posts(client, people, checked):
    client.login(username="tariq", password=PASSWORD)
    assert client.get(grade_url(checked["answer"])).status_code == 405


# --- Regrade ------------------------------------------------------------------------------


@pytest.fixture
def corrected_after_hand_grade(people, checked, django_capture_on_commit_callbacks):
    """A person gave sam's 13 half marks; then the key is 'corrected' to a * b + 1 (13), so
    the checker would now give sam full marks; sue's 12 (right before) would now be wrong."""
    sue = variant_for(checked["item"], people.student2, params={"a": 3, "b": 4}, seed=2)
    sue_answer = graded(sue, "product", "12")
    services.submission_grade_manually(submission=checked["answer"], grader=people.ta, score=0.5, comment="half")
    v2 = published_version(source=product_yaml(answer="a * b + 1"), number=2, exercise=checked["version"].exercise)
    services.assignment_item_update(item=checked["item"], points=4, position=0, version=v2)
    return {**checked, "sue": sue_answer, "on_commit": lambda: django_capture_on_commit_callbacks(execute=True)}


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_regrade_keeps_the_persons_score_and_reports_it(people, corrected_after_hand_grade, dry_run):
    scene = corrected_after_hand_grade
    with scene["on_commit"]():
        job = services.regrade_job_create(
            assignment=scene["assignment"], actor=people.instructor, dry_run=dry_run, allow_lower=True,
            parts=["product"],
        )
    job.refresh_from_db()
    assert (job.status, job.total, job.changed, job.held, job.by_hand, job.errors) == ("done", 3, 1, 0, 1, 0)
    kept = RegradeChange.objects.get(job=job, submission=scene["answer"])
    assert (kept.outcome, kept.old_score, kept.old_awarded, kept.new_score, kept.new_awarded) == (
        ChangeOutcome.BY_HAND, 0.5, 0.25, 1.0, 0.5
    )
    assert stored(scene["answer"]) == ("graded", 0.5, 0.25, False)
    assert Submission.objects.get(pk=scene["answer"].pk).feedback["grader_comment"] == "half"
    assert ManualGrade.objects.filter(submission=scene["answer"]).count() == 1
    # The answer nobody graded by hand follows the checker (lowered: allowed here).
    assert stored(scene["sue"]) == (("graded", 1.0, 1.0, True) if dry_run else ("graded", 0.0, 0.0, False))


def test_the_regrade_page_counts_the_kept_hand_grades(client, people, corrected_after_hand_grade):
    scene = corrected_after_hand_grade
    with scene["on_commit"]():
        job = services.regrade_job_create(assignment=scene["assignment"], actor=people.instructor)
    client.login(username="ines", password=PASSWORD)
    shown = text_of(client.get(reverse("instructor:regrade", args=["attn", job.pk])).content.decode())
    assert "1 kept (graded by a person)" in shown
    assert "Kept: graded by a person" in shown


# --- What the student sees ----------------------------------------------------------------


def student_result(client, submission) -> str:
    client.login(username="sam", password=PASSWORD)
    return client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()


def test_the_student_reads_the_persons_score_and_comment(client, people, checked):
    answer = checked["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.75, comment="Slip at the end.")
    result = student_result(client, answer)
    assert 'data-score="0.75"' in result
    shown = text_of(result)
    assert "Partly correct — score 75% (37.5% after penalties)" in shown
    assert "Your instructor graded this answer by hand. Slip at the end." in shown
    mine = text_of(client.get(reverse("grades:mine")).content.decode())
    assert "Score 75% (37.5% after penalties)" in mine and "“Slip at the end.”" in mine


def test_the_review_policy_hides_the_persons_grade_as_it_hides_others(client, people, checked):
    assignment = checked["assignment"]
    assignment.show_correctness = assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.save()
    answer = checked["answer"]
    services.submission_grade_manually(submission=answer, grader=people.ta, score=0.75, comment="Slip at the end.")
    result = student_result(client, answer)
    assert "Slip at the end." not in result and "75%" not in result and 'data-score="0.75"' not in result
    assert "Slip at the end." not in client.get(reverse("grades:mine")).content.decode()


# --- A derivation: the finding this page answers ------------------------------------------


WRONG_LAST_STEP = (
    "Var(q·k)\nΣ_m Var(q_m k_m)\nd_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)\n"
    "d_k (1·1 - 0)\n2 d_k"
)


def test_a_derivation_with_one_wrong_final_step_gets_partial_credit(client, people):
    from django.conf import settings

    source = (settings.BASE_DIR / "exercises" / "bank" / "score-variance.yaml").read_text()
    version = published_version(source=source)
    assignment = assignment_create(people.course, [version], slug="variance")
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"d_k": 64, "sigma_q": 2, "sigma_k": 3})
    answer = graded(variant, "unit_variance", WRONG_LAST_STEP)
    assert (answer.status, answer.score, answer.feedback["details"]["first_wrong_step"]) == ("graded", 0.0, 6)
    client.login(username="tariq", password=PASSWORD)
    before = client.get(page_url(answer)).content.decode()
    # The staff read the checker's steps, typeset and sanitised, before they decide.
    assert "<strong>✗ The first step that does not follow.</strong>" in before
    response = client.post(grade_url(answer), {"score": "80", "unit": "percent", "comment": "Only the last step slips."})
    assert response.status_code == 302
    assert stored(answer) == ("graded", 0.8, 0.8, False)
    after = client.get(page_url(answer)).content.decode()
    verdict = re.search(r'<h2>The checker\'s verdict</h2>(.*?)<h2', after, re.S)[1]
    assert "Line 6: &#x27;2 d_k&#x27; does not follow from line 5" in verdict
    assert "<strong>✗ The first step that does not follow.</strong>" in verdict
