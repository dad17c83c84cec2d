"""What a student has been shown of an assignment since their attempt ended (or, of
homework, since it closed for them), in words and numbers: worked solutions, verdicts,
scores, diagnoses of mistakes, correct attention weights. Reopening the attempt would let
them answer with these in hand, so the proctor's extension asks before it reopens
(``services_accommodations.accommodation_extend``) with the sentence made here.

What the review policy shows is decided by the student's window (``exams.window``); the
numbers come from their stored answers (one query, and one more for the exercises' specs
when the correct weights are shown).
"""

from __future__ import annotations

from courses.models import SolutionPolicy
from courses.time_text import course_time_text
from exercises.models import ExerciseVersion
from exercises.specs import version_spec
from grading.models import Submission, SubmissionStatus
from grading.results import WEIGHT_QUANTITIES

from .window import Window, shown_since_end


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


def _answers(*, assignment, student) -> list[tuple]:
    """(variant id, part, status, correct, misconception, exercise version id) of each of the
    student's stored answers to the assignment (practice left out)."""
    return list(
        Submission.objects.filter(
            variant__assignment_item__assignment=assignment,
            variant__student=student,
            variant__context__startswith="assignment:",
        )
        .order_by()
        .values_list("variant_id", "part", "status", "correct", "misconception", "variant__exercise_version_id")
    )


def _parts_finished(answers: list[tuple], *, attempts_allowed: int, solved_shown: bool) -> int:
    """Parts solved (as far as the student is shown it) or with every allowed attempt used:
    those whose worked solution a policy of "once solved or attempts used up" shows
    (exercises.selectors.part_finished, counted over every part answered)."""
    used: dict[tuple, int] = {}
    solved: set[tuple] = set()
    for variant_id, part, status, correct, _, _ in answers:
        key = (variant_id, part)
        if status != SubmissionStatus.COULD_NOT_GRADE:
            used[key] = used.get(key, 0) + 1
        if status == SubmissionStatus.GRADED and correct:
            solved.add(key)
    keys = set(used) | solved
    return sum(
        1 for key in keys
        if (key in solved and solved_shown) or (attempts_allowed and used.get(key, 0) >= attempts_allowed)
    )


def _weight_parts(graded: list[tuple]) -> int:
    """Parts with a graded answer whose heatmap draws the correct attention weights."""
    versions = {
        version.pk: version_spec(version)
        for version in ExerciseVersion.objects.filter(pk__in={row[5] for row in graded})
    }
    parts = set()
    for variant_id, part, _, _, _, version_id in graded:
        spec = versions.get(version_id)
        try:
            diagnose = spec.part(part).diagnose if spec is not None else None
        except KeyError:
            continue
        if diagnose and diagnose.get("quantity") in WEIGHT_QUANTITIES:
            parts.add((variant_id, part))
    return len(parts)


def review_seen_phrases(*, assignment, student, window: Window) -> list[str]:
    """What the review policy has shown the student only because their attempt ended, as
    phrases with their numbers ("the worked solutions", "their verdicts on 2 answers");
    empty when it has shown nothing that tells answers."""
    kinds = shown_since_end(assignment=assignment, window=window)
    if not kinds:
        return []
    answers = _answers(assignment=assignment, student=student)
    graded = [row for row in answers if row[2] == SubmissionStatus.GRADED]
    phrases = []
    if "solutions" in kinds:
        policy, now, due_at = assignment.solution_policy, window.now, window.limits.due_at
        if policy == SolutionPolicy.ALWAYS or (policy == SolutionPolicy.AFTER_DUE and due_at and now > due_at):
            phrases.append("the worked solutions")
        elif policy == SolutionPolicy.AFTER_SOLVED:
            finished = _parts_finished(
                answers, attempts_allowed=window.limits.attempts_per_part,
                solved_shown=window.visibility.correctness,
            )
            if finished:
                phrases.append(f"the worked solutions of {_count(finished, 'part')}")
    verdicts, scores = "correctness" in kinds, "score" in kinds
    if graded and (verdicts or scores):
        what = "their verdicts and scores" if verdicts and scores else ("their verdicts" if verdicts else "their scores")
        phrases.append(f"{what} on {_count(len(graded), 'answer')}")
    if "misconception" in kinds:
        diagnosed = sum(1 for row in graded if row[4])
        if diagnosed:
            phrases.append(f"the {'diagnosis' if diagnosed == 1 else 'diagnoses'} of {_count(diagnosed, 'mistake')}")
    if "heatmap" in kinds and graded:
        weights = _weight_parts(graded)
        if weights:
            phrases.append(f"the correct attention weights of {_count(weights, 'part')}")
    return phrases


def _joined(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"


def ended_at_of(window: Window):
    """When the student's attempt ended (of homework: their time ran out or it closed)."""
    if window.ended_at is not None:
        return window.ended_at
    limits = window.limits
    if limits.deadline is not None and window.now >= limits.deadline:
        return limits.deadline
    return limits.closes_at


def reopen_sentence(*, assignment, student, window: Window) -> str:
    """The question to ask before reopening the student's ended attempt: "student3's attempt
    ended at 17:55 CET and since then the review policy has shown them the worked solutions
    and their verdicts on 1 answer; reopening lets them answer with what they saw." Empty
    when it has shown them nothing that tells answers."""
    phrases = review_seen_phrases(assignment=assignment, student=student, window=window)
    if not phrases:
        return ""
    ended = course_time_text(ended_at_of(window), assignment.course, short=True, now=window.now)
    what = "attempt" if window.is_exam else "time on this homework"
    return (
        f"{student.username}'s {what} ended at {ended} and since then the review policy has shown them "
        f"{_joined(phrases)}; reopening lets them answer with what they saw."
    )
