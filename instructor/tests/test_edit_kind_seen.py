"""Making an exam homework lets students who have finished answer again: the question says,
in numbers, what the exam's review policy has shown them since their attempt ended (worked
solutions, verdicts, scores), since they would answer with it in hand; nothing more when
it has shown them nothing. A confirmation holds only while those numbers read the same.

The fixture: 3 students working on a 15-minute exam, sam and sue finished 20 minutes ago.
The edit also clears the time limit, so as homework both may answer again."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import submission_add, variant_for
from courses.models import Assignment, ReleaseMoment, SolutionPolicy
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus
from grading.services import submission_create
from instructor import selectors_edit_impact
from instructor.tests.test_edit_running_exam import _confirmation, _login, _settings, _token, exam  # noqa: F401

WHO = "3 students are working on this exam now and 2 have finished."
REOPENS = (
    f"{WHO} Making it homework keeps every saved answer and lets 2 students who have finished answer again "
    "while it is open to them"
)
STALE_SETTINGS = "Nothing is saved yet: the numbers changed since you confirmed."
# Every moment "during": the policy shows nothing only because an attempt ended.
DURING = {
    "show_correctness": ReleaseMoment.DURING, "show_score": ReleaseMoment.DURING,
    "show_misconception": ReleaseMoment.DURING, "show_hints": ReleaseMoment.DURING,
    "show_heatmap": ReleaseMoment.DURING, "show_solutions": ReleaseMoment.DURING,
}


def _policy(exam, **fields):
    Assignment.objects.filter(pk=exam.pk).update(**{**DURING, **fields})
    exam.refresh_from_db()


def _answer(exam, student, part: str, *, correct: bool | None, status: str = SubmissionStatus.GRADED,
            misconception: str = ""):
    """One answer of ``student`` to the exam's first exercise (graded unless ``status`` says)."""
    item = exam.items.get(position=0)
    variant = (
        Variant.objects.filter(assignment_item=item, student=student).first()
        or variant_for(item, student, params={"a": 3, "b": 4}, seed=student.pk)
    )
    awarded = None if correct is None else float(correct)
    return submission_add(
        variant, part, "12" if correct else "11", awarded=awarded, correct=correct, status=status,
        misconception=misconception,
    )


def _ask(client, exam):
    _login(client)
    url = reverse("instructor:assignment_edit", args=["attn", exam.slug])
    data = _settings(exam, kind="homework", time_limit_minutes="")
    return url, data, client.post(url, data)


def _kind(exam) -> str:
    return Assignment.objects.get(pk=exam.pk).kind


# --- The sentence, in numbers ------------------------------------------------------------


@pytest.mark.parametrize("policy, sams_answer", [
    # Everything shows during the attempt: an ended one has seen nothing more.
    ({}, SubmissionStatus.GRADED),
    # Verdicts and scores after the end, but sam's only answer is not graded yet (no verdict,
    # no score); solutions never.
    ({"show_correctness": ReleaseMoment.AFTER_FINISH, "show_score": ReleaseMoment.AFTER_FINISH,
      "show_solutions": ReleaseMoment.AFTER_FINISH, "solution_policy": SolutionPolicy.NEVER},
     SubmissionStatus.QUEUED),
    # Hints after the end tell no answer.
    ({"show_hints": ReleaseMoment.AFTER_FINISH}, SubmissionStatus.GRADED),
])
def test_nothing_seen_says_nothing_more(client, exam, people, policy, sams_answer):
    _policy(exam, **policy)
    _answer(exam, people.student, "product", correct=None if sams_answer != SubmissionStatus.GRADED else True,
            status=sams_answer)
    url, data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(f"{REOPENS}.")
    confirmed = client.post(url, {**data, "confirm": "yes", "impact": _token(asked)})
    assert confirmed.status_code == 302
    assert _kind(exam) == "homework"


def test_solutions_always_after_the_end_are_counted_with_the_verdicts_and_scores_of_answers(client, exam, people):
    """sam answered once (graded) and was shown its solution, verdict and score; sue
    answered nothing and was shown the worked solutions (the policy shows them always)."""
    _policy(
        exam, show_correctness=ReleaseMoment.AFTER_FINISH, show_score=ReleaseMoment.AFTER_FINISH,
        show_solutions=ReleaseMoment.AFTER_FINISH, solution_policy=SolutionPolicy.ALWAYS,
    )
    sams = _answer(exam, people.student, "product", correct=False)
    url, data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(
        f"{REOPENS}; 1 of them has been shown the worked solutions, verdicts and scores of their answers and 1 "
        "has been shown the worked solutions."
    )
    assert _kind(exam) == "exam"
    confirmed = client.post(url, {**data, "confirm": "yes", "impact": _token(asked)})
    assert confirmed.status_code == 302
    # What the sentence said: sam answers again, with the solution he saw.
    exam.refresh_from_db()
    again = submission_create(variant=sams.variant, student=people.student, part="product", raw_answer="12")
    assert (again.status, again.attempt) == (SubmissionStatus.QUEUED, 2)


def test_solutions_once_solved_count_only_who_solved_a_part(client, exam, people):
    """The default solution policy: sam solved "product" (its solution showed once the
    verdict did); sue answered "total" wrong once of 3 attempts (no solution, but its verdict)."""
    _policy(
        exam, show_correctness=ReleaseMoment.AFTER_FINISH, show_solutions=ReleaseMoment.AFTER_FINISH,
        solution_policy=SolutionPolicy.AFTER_SOLVED,
    )
    _answer(exam, people.student, "product", correct=True)
    _answer(exam, people.student2, "total", correct=False)
    _url, _data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(
        f"{REOPENS}; 1 of them has been shown the worked solutions of some parts and verdicts of their answers "
        "and 1 has been shown the verdicts of their answers."
    )


def test_scores_only(client, exam, people):
    _policy(exam, show_score=ReleaseMoment.AFTER_FINISH, solution_policy=SolutionPolicy.ALWAYS)
    _answer(exam, people.student, "product", correct=True)
    _answer(exam, people.student, "total", correct=False)
    _url, _data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(f"{REOPENS}; 1 of them has been shown the scores of their answers.")


def test_verdicts_only_shown_to_both(client, exam, people):
    _policy(exam, show_correctness=ReleaseMoment.AFTER_FINISH)
    _answer(exam, people.student, "product", correct=True)
    _answer(exam, people.student2, "product", correct=False)
    _url, _data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(f"{REOPENS}; both have been shown the verdicts of their answers.")


def test_only_those_who_may_answer_again_are_counted(client, exam, people):
    """With the 15-minute limit kept, sam's homework clock counts from the exercise he
    opened during the exam (30 minutes ago): his time is up, so what he saw is not asked
    about; sue opened nothing and was shown the worked solutions."""
    _policy(exam, show_score=ReleaseMoment.AFTER_FINISH, show_solutions=ReleaseMoment.AFTER_FINISH,
            solution_policy=SolutionPolicy.ALWAYS)
    sams = _answer(exam, people.student, "product", correct=True)
    Variant.objects.filter(pk=sams.variant_id).update(created_at=timezone.now() - timedelta(minutes=30))
    _login(client)
    asked = client.post(reverse("instructor:assignment_edit", args=["attn", exam.slug]), _settings(exam, kind="homework"))
    assert _confirmation(asked).endswith(
        f"{WHO} Making it homework keeps every saved answer and lets 1 student who has finished answer again "
        "while it is open to them; they have been shown the worked solutions."
    )


# --- The selector and its queries ---------------------------------------------------------


def _counts(exam, **new):
    stored = selectors_edit_impact.review_fields_of(exam)
    limits = {name: stored[name] for name in selectors_edit_impact.LIMIT_FIELDS}
    now = timezone.now()
    started = selectors_edit_impact.students_started(assignment=exam, stored=limits, now=now)
    return stored, started, {**limits, "time_limit_minutes": None, **new}, now


@pytest.mark.parametrize("policy, queries, seen", [
    # Nothing shown only after the end: the first opened exercises alone, as before.
    ({}, 1, ()),
    # The answers are read with them, in the same query.
    ({"show_score": ReleaseMoment.AFTER_FINISH, "show_misconception": ReleaseMoment.AFTER_FINISH},
     1, ((("scores", "diagnoses"), 1), (("scores",), 1))),
    # The correct weights need the exercises' specs: one more (these draw none).
    ({"show_heatmap": ReleaseMoment.AFTER_FINISH}, 2, ()),
])
def test_kind_change_counts_reads_one_query_and_one_more_for_the_weights(
    exam, people, django_assert_num_queries, policy, queries, seen,
):
    _policy(exam, **policy)
    _answer(exam, people.student, "product", correct=False, misconception="added_instead")
    _answer(exam, people.student2, "product", correct=False)
    stored, started, applied, now = _counts(exam)
    with django_assert_num_queries(queries):
        change = selectors_edit_impact.kind_change_counts(
            assignment=exam, started=started, new_kind="homework", new_limits=applied, stored=stored, now=now
        )
    assert change == selectors_edit_impact.KindChange(count=2, seen=seen)


def test_what_they_were_shown_is_decided_by_the_stored_policy_not_the_edited_one(exam, people):
    """A form copies the new values onto the instance: what was shown follows the row."""
    _policy(exam, show_score=ReleaseMoment.AFTER_FINISH)
    _answer(exam, people.student, "product", correct=True)
    stored, started, applied, now = _counts(exam)
    exam.show_score = ReleaseMoment.DURING
    exam.kind = "homework"
    change = selectors_edit_impact.kind_change_counts(
        assignment=exam, started=started, new_kind="homework", new_limits=applied, stored=stored, now=now
    )
    assert change.seen == ((("scores",), 1),)


# --- The confirmation holds to these numbers ----------------------------------------------


def test_a_confirmation_goes_stale_when_what_they_were_shown_changes(client, exam, people):
    """Asked while sue's answer waited for grading; graded before the confirmation came
    back, its score now shows to her: the confirmation no longer holds, nothing is saved."""
    _policy(exam, show_score=ReleaseMoment.AFTER_FINISH)
    _answer(exam, people.student, "product", correct=True)
    sues = _answer(exam, people.student2, "product", correct=None, status=SubmissionStatus.QUEUED)
    url, data, asked = _ask(client, exam)
    assert _confirmation(asked).endswith(f"{REOPENS}; 1 of them has been shown the scores of their answers.")

    Submission.objects.filter(pk=sues.pk).update(status=SubmissionStatus.GRADED, score=0.0, awarded=0.0, correct=False)
    again = client.post(url, {**data, "confirm": "yes", "impact": _token(asked)})
    assert again.status_code == 200
    assert _kind(exam) == "exam"
    shown = _confirmation(again)
    assert STALE_SETTINGS in shown
    assert shown.endswith(f"{REOPENS}; both have been shown the scores of their answers.")
    assert _token(again) != _token(asked)

    done = client.post(url, {**data, "confirm": "yes", "impact": _token(again)})
    assert done.status_code == 302
    assert _kind(exam) == "homework"


def test_the_sentence_names_each_group_in_words():
    reached = selectors_edit_impact.AttemptsReached(working=0, finished=5)
    seen = (
        (("solutions", "verdicts", "scores", "diagnoses", "weights"), 2), (("some solutions",), 1), (("scores",), 1),
    )
    assert selectors_edit_impact.kind_change_sentence(
        reached, new_kind="homework", count=4, timed=False, seen=seen
    ) == (
        "5 students have finished this exam. Making it homework keeps every saved answer and lets 4 students who "
        "have finished answer again while it is open to them; 2 of them have been shown the worked solutions, "
        "verdicts, scores of their answers, diagnoses of their mistakes and correct attention weights, 1 has been "
        "shown the worked solutions of some parts and 1 has been shown the scores of their answers."
    )
    # Homework made an exam: nothing was shown "since the end" to ask about.
    assert selectors_edit_impact.kind_change_sentence(
        reached, new_kind="exam", count=0, timed=False
    ) == "5 students have finished this exam. Making it an exam keeps every saved answer."
