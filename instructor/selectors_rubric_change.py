"""Reads of a change of a rubric's items: which answers were graded with the rubric, what
each would score under the rubric as changed, and the question that asks before the
change, in numbers ("15 answers were graded with this rubric, out of 5 points; with “TA
item” (+100) they are scored out of 105: 15 scores change (e.g. 60% → 2.9%).").

An answer graded with a rubric is one whose newest grade is a person's grade given by
ticking the rubric's items (``ManualGrade.rubric``). A typed score, an answer given back
to the checker, and an answer graded since with a typed score are not: a rubric change
leaves them alone. ``services_rubrics`` decides under the rubric's lock, with the answers'
rows locked, and scores the answers again from their ticked items.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import OuterRef, QuerySet, Subquery

from exams.selectors import feedback_visibility_for
from grading.core.score_rounding import percent_text
from grading.models import Submission

from .models import SCORE_CHANGE_EPSILON, ManualGrade, ManualGradeKind, Rubric


@dataclass(frozen=True)
class RubricLine:
    """One item of a rubric as it reads after a change (``pk`` None: the item being added)."""

    pk: int | None
    text: str
    points: float


def rubric_lines(items) -> list[RubricLine]:
    return [RubricLine(item.pk, item.text, item.points) for item in items]


def rubric_maximum(lines) -> float:
    """What a rubric's score is out of: the sum of its positive items."""
    return sum(line.points for line in lines if line.points > 0)


def rubric_fraction(*, lines, ticked_pks) -> float:
    """The score of an answer that ticked ``ticked_pks`` under the rubric of ``lines``: the
    ticked points over the positive points, kept within [0, 1] (0 for a rubric with no
    positive item, which the services refuse to leave graded answers with)."""
    maximum = rubric_maximum(lines)
    if maximum <= 0:
        return 0.0
    earned = sum(line.points for line in lines if line.pk in ticked_pks)
    return min(max(earned / maximum, 0.0), 1.0)


def rubric_graded_submissions(*, rubric: Rubric) -> QuerySet[Submission]:
    """The answers whose newest grade was given with ``rubric``'s items by a person (not a
    typed score, not a return to the checker), in id order."""
    newest = ManualGrade.objects.filter(submission=OuterRef("pk")).order_by("-created_at", "-id")
    return (
        Submission.objects.filter(pk__in=ManualGrade.objects.filter(rubric=rubric).values("submission_id"))
        .annotate(
            newest_rubric=Subquery(newest.values("rubric_id")[:1]),
            newest_kind=Subquery(newest.values("kind")[:1]),
        )
        .filter(newest_rubric=rubric.pk, newest_kind=ManualGradeKind.BY_HAND)
        .order_by("pk")
    )


@dataclass(frozen=True)
class RescoredAnswer:
    submission: Submission
    ticked: list[RubricLine]  # the items it ticked that the rubric keeps, in the rubric's order
    score_before: float | None
    score_after: float

    @property
    def score_changes(self) -> bool:
        if self.score_before is None:
            return True
        return abs(self.score_after - self.score_before) > SCORE_CHANGE_EPSILON


@dataclass(frozen=True)
class RubricRescore:
    """What a change of a rubric's items does to the answers graded with it."""

    graded: int  # answers graded with the rubric
    assignments: int  # how many assignments those answers belong to
    maximum_before: float
    maximum_after: float
    answers: list[RescoredAnswer]  # the answers to grade again: their score or ticked items change

    @property
    def changed(self) -> list[RescoredAnswer]:
        return [answer for answer in self.answers if answer.score_changes]


def rubric_rescore(
    *, submissions: list[Submission], lines_before: list[RubricLine], lines_after: list[RubricLine],
    touched: int | None = None,
) -> RubricRescore:
    """Each of ``submissions`` (the rubric's graded answers, read or locked by the caller,
    with their variant's item) scored under ``lines_after`` (the rubric is ``lines_before``
    now), from the items its newest grade ticked. An answer is graded again when its score
    changes, or when it ticked the item ``touched`` (given other points, or removed): the
    items its grade lists change."""
    ticked = _ticked_by_newest_grade(submissions)
    kept = {line.pk for line in lines_after}
    answers = []
    for submission in submissions:
        before = ticked.get(submission.pk, set())
        lines = [line for line in lines_after if line.pk in before]
        answer = RescoredAnswer(
            submission=submission, ticked=lines, score_before=submission.score,
            score_after=rubric_fraction(lines=lines_after, ticked_pks={line.pk for line in lines}),
        )
        if answer.score_changes or (touched is not None and touched in before) or (before - kept):
            answers.append(answer)
    return RubricRescore(
        graded=len(submissions),
        assignments=len({s.variant.assignment_item.assignment_id for s in submissions if s.variant.assignment_item}),
        maximum_before=rubric_maximum(lines_before),
        maximum_after=rubric_maximum(lines_after),
        answers=answers,
    )


def _ticked_by_newest_grade(submissions: list[Submission]) -> dict[int, set[int]]:
    newest: dict[int, ManualGrade] = {}
    for grade in ManualGrade.objects.filter(submission__in=[s.pk for s in submissions]).prefetch_related(
        "rubric_items"
    ).order_by("created_at", "id"):
        newest[grade.submission_id] = grade
    return {submission_id: {item.pk for item in grade.rubric_items.all()} for submission_id, grade in newest.items()}


def rubric_out_of_step(*, rubric: Rubric) -> RubricRescore:
    """The rubric's graded answers whose score is not what their ticked items give under the
    rubric as it stands (graded before an item was added, given other points or removed,
    when a change did not score them again)."""
    submissions = list(rubric_graded_submissions(rubric=rubric).select_related("variant__assignment_item__assignment"))
    lines = rubric_lines(rubric.items.all())
    return rubric_rescore(submissions=submissions, lines_before=lines, lines_after=lines)


# --- The question, in words ------------------------------------------------------------


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def _points(value: float) -> str:
    return f"{value:g}"


def item_words(text: str, points: float) -> str:
    return f"“{text}” ({points:+g})"


def released_sentence(changed: list[RescoredAnswer]) -> str:
    """Whether the students whose score changes see their scores now (their assignment's
    review policy shows them to them), so see the new ones at once."""
    seen = 0
    memo: dict[tuple[int | None, int], bool] = {}
    for answer in changed:
        submission = answer.submission
        item = submission.variant.assignment_item
        key = (item.assignment_id if item is not None else None, submission.student_id)
        if key not in memo:
            visibility = feedback_visibility_for(
                assignment=item.assignment if item is not None else None, student=submission.student_id
            )
            memo[key] = visibility.score
        seen += memo[key]
    if not seen:
        return "No student sees these scores yet."
    if seen == len(changed):
        return "Students see the new scores at once." if seen > 1 else "The student sees the new score at once."
    return (f"{seen} of these {len(changed)} scores are shown to their students now, so they see the new ones at "
            "once; the others once the review policy shows them.")


def _example_change(changed: list) -> str:
    """The largest of the ``changed`` scores' changes as "60% → 2.9%" (an answer without a
    score first; of equal changes the first), with as many decimals as it takes for the two
    to read differently."""
    example = max(
        changed,
        key=lambda answer: 2.0 if answer.score_before is None else round(abs(answer.score_after - answer.score_before), 9),
    )
    if example.score_before is None:
        return f"no score → {percent_text(example.score_after)}"
    for places in range(1, 7):
        before, after = percent_text(example.score_before, places), percent_text(example.score_after, places)
        if before != after:
            break
    return f"{before} → {after}"


def rubric_change_question(rescore: RubricRescore, *, change: str) -> str:
    """The question a change asks before it is made ("" when no score changes): how many
    answers were graded with the rubric and out of what, what they are scored out of with
    the change (``change``: "with “TA item” (+100)", "without …", "with … worth +3 instead
    of +2", or "" for the rubric as it stands), how many scores change with one example,
    and whether the students see them now."""
    changed = rescore.changed
    if not changed:
        return ""
    graded = _count(rescore.graded, "answer", "answers")
    where = f" (in {rescore.assignments} assignments)" if rescore.assignments > 1 else ""
    were = "was" if rescore.graded == 1 else "were"
    scores = f"{_count(len(changed), 'score changes', 'scores change')} (e.g. {_example_change(changed)})"
    if change:
        still = "still " if rescore.maximum_after == rescore.maximum_before else ""
        they = "it is" if rescore.graded == 1 else "they are"
        sentence = (
            f"{graded}{where} {were} graded with this rubric, out of {_points(rescore.maximum_before)} points; "
            f"{change} {they} {still}scored out of {_points(rescore.maximum_after)}: {scores}."
        )
    else:
        sentence = (
            f"{graded}{where} {were} graded with this rubric; scored from their ticked items under the rubric "
            f"as it stands, out of {_points(rescore.maximum_after)} points, {scores}."
        )
    return (f"{sentence} {released_sentence(changed)} Each new score is kept in the answer's grading history; "
            "answers given a typed score are not changed.")


def rubric_change_reason(*, what: str, maximum_before: float, maximum_after: float) -> str:
    """What an answer's history says of the grade a rubric change recorded (``what``: "“TA
    item” (+100) added", …; "" for the rubric as it stands)."""
    if not what:
        return ("Scored again from its ticked items under the rubric as it stands, "
                f"out of {_points(maximum_after)} points.")
    return (f"Scored again from its ticked items when the rubric changed ({what}): "
            f"out of {_points(maximum_after)} points, was {_points(maximum_before)}.")[:500]
