"""What a student has been shown of an assignment since their attempt ended (or, of
homework, since it closed for them), in words and numbers: worked solutions, verdicts,
scores, diagnoses of mistakes, correct attention weights. Reopening the attempt would let
them answer with these in hand, so the proctor's extension asks before it reopens
(``services_accommodations.accommodation_extend``) with the sentence made here, and an
edit that makes an exam homework says how many of those it lets answer again have seen
what (``instructor.selectors_edit_impact.kind_change_counts``): both count with
``review_seen``.

What the review policy shows is decided by the student's window (``exams.window``); the
numbers come from their stored answers (one query, and one more for the exercises' specs
when the correct weights are shown).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from courses.models import SolutionPolicy
from courses.time_text import course_time_text
from exercises.models import ExerciseVersion
from exercises.specs import version_spec
from grading.models import Submission, SubmissionStatus
from grading.results import WEIGHT_QUANTITIES

from .window import Window, shown_since_end


class StoredAnswer(NamedTuple):
    """One stored answer, as ``review_seen`` counts it."""

    variant_id: int
    part: str
    status: str
    correct: bool | None
    misconception: str
    version_id: int


@dataclass(frozen=True)
class ReviewSeen:
    """What the review policy has shown one student only because their attempt ended:
    every worked solution (``all_solutions``) or those of ``solution_parts`` parts, the
    verdicts and/or the scores of their ``graded`` answers, the diagnoses of ``diagnoses``
    mistakes and the correct attention weights of ``weight_parts`` parts."""

    all_solutions: bool = False
    solution_parts: int = 0
    verdicts: bool = False
    scores: bool = False
    graded: int = 0
    diagnoses: int = 0
    weight_parts: int = 0

    @property
    def anything(self) -> bool:
        return bool(
            self.all_solutions or self.solution_parts or (self.graded and (self.verdicts or self.scores))
            or self.diagnoses or self.weight_parts
        )


NOTHING_SEEN = ReviewSeen()


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


def _answers(*, assignment, student) -> list[StoredAnswer]:
    """The student's stored answers to the assignment (practice left out)."""
    return [
        StoredAnswer(*row)
        for row in Submission.objects.filter(
            variant__assignment_item__assignment=assignment,
            variant__student=student,
            variant__context__startswith="assignment:",
        )
        .order_by()
        .values_list("variant_id", "part", "status", "correct", "misconception", "variant__exercise_version_id")
    ]


def _parts_finished(answers: list[StoredAnswer], *, attempts_allowed: int, solved_shown: bool) -> int:
    """Parts solved (as far as the student is shown it) or with every allowed attempt used:
    those whose worked solution a policy of "once solved or attempts used up" shows
    (exercises.selectors.part_finished, counted over every part answered)."""
    used: dict[tuple, int] = {}
    solved: set[tuple] = set()
    for answer in answers:
        key = (answer.variant_id, answer.part)
        if answer.status != SubmissionStatus.COULD_NOT_GRADE:
            used[key] = used.get(key, 0) + 1
        if answer.status == SubmissionStatus.GRADED and answer.correct:
            solved.add(key)
    keys = set(used) | solved
    return sum(
        1 for key in keys
        if (key in solved and solved_shown) or (attempts_allowed and used.get(key, 0) >= attempts_allowed)
    )


def _weight_parts(graded: list[StoredAnswer], *, specs: dict) -> int:
    """Parts with a graded answer whose heatmap draws the correct attention weights."""
    parts = set()
    for answer in graded:
        spec = specs.get(answer.version_id)
        try:
            diagnose = spec.part(answer.part).diagnose if spec is not None else None
        except KeyError:
            continue
        if diagnose and diagnose.get("quantity") in WEIGHT_QUANTITIES:
            parts.add((answer.variant_id, answer.part))
    return len(parts)


def specs_needed(*, kinds, answers: list[StoredAnswer]) -> bool:
    """Whether ``review_seen`` needs the specs of the exercises answered: the correct weights
    are among the ``kinds`` shown since the end, and an answer was graded."""
    return "heatmap" in kinds and any(answer.status == SubmissionStatus.GRADED for answer in answers)


def answered_specs(answers: list[StoredAnswer]) -> dict:
    """version id -> spec of the exercise versions ``answers`` answered. One query."""
    return {
        version.pk: version_spec(version)
        for version in ExerciseVersion.objects.filter(pk__in={answer.version_id for answer in answers})
    }


def review_seen(
    *, assignment, window: Window, answers: list[StoredAnswer], specs: dict | None = None,
    kinds: tuple[str, ...] | None = None,
) -> ReviewSeen:
    """What the review policy has shown the student of ``window`` only because their attempt
    ended, counted over their stored ``answers`` (pure). ``assignment``: the record, or
    anything with its review and solution policies and release; ``kinds``: shown_since_end,
    when the caller has it; ``specs``: answered_specs, read when ``specs_needed`` says so."""
    kinds = shown_since_end(assignment=assignment, window=window) if kinds is None else kinds
    if not kinds:
        return NOTHING_SEEN
    graded = [answer for answer in answers if answer.status == SubmissionStatus.GRADED]
    all_solutions, solution_parts = False, 0
    if "solutions" in kinds:
        policy, now, due_at = assignment.solution_policy, window.now, window.limits.due_at
        if policy == SolutionPolicy.ALWAYS or (policy == SolutionPolicy.AFTER_DUE and due_at and now > due_at):
            all_solutions = True
        elif policy == SolutionPolicy.AFTER_SOLVED:
            solution_parts = _parts_finished(
                answers, attempts_allowed=window.limits.attempts_per_part,
                solved_shown=window.visibility.correctness,
            )
    return ReviewSeen(
        all_solutions=all_solutions,
        solution_parts=solution_parts,
        verdicts="correctness" in kinds,
        scores="score" in kinds,
        graded=len(graded),
        diagnoses=sum(1 for answer in graded if answer.misconception) if "misconception" in kinds else 0,
        weight_parts=_weight_parts(graded, specs=specs or {}) if "heatmap" in kinds and graded else 0,
    )


def review_seen_of(*, assignment, student, window: Window) -> ReviewSeen:
    """review_seen of one student: one query for their answers when the review policy shows
    anything only after the end, one more for the specs when it shows the correct weights."""
    kinds = shown_since_end(assignment=assignment, window=window)
    if not kinds:
        return NOTHING_SEEN
    answers = _answers(assignment=assignment, student=student)
    specs = answered_specs(answers) if specs_needed(kinds=kinds, answers=answers) else None
    return review_seen(assignment=assignment, window=window, answers=answers, specs=specs, kinds=kinds)


def seen_phrases(seen: ReviewSeen) -> list[str]:
    """A ReviewSeen as phrases with their numbers ("the worked solutions", "their verdicts
    on 2 answers"); empty when nothing that tells answers was shown."""
    phrases = []
    if seen.all_solutions:
        phrases.append("the worked solutions")
    elif seen.solution_parts:
        phrases.append(f"the worked solutions of {_count(seen.solution_parts, 'part')}")
    if seen.graded and (seen.verdicts or seen.scores):
        what = (
            "their verdicts and scores" if seen.verdicts and seen.scores
            else ("their verdicts" if seen.verdicts else "their scores")
        )
        phrases.append(f"{what} on {_count(seen.graded, 'answer')}")
    if seen.diagnoses:
        phrases.append(f"the {'diagnosis' if seen.diagnoses == 1 else 'diagnoses'} of {_count(seen.diagnoses, 'mistake')}")
    if seen.weight_parts:
        phrases.append(f"the correct attention weights of {_count(seen.weight_parts, 'part')}")
    return phrases


def review_seen_phrases(*, assignment, student, window: Window) -> list[str]:
    """What the review policy has shown the student only because their attempt ended, as
    phrases with their numbers ("the worked solutions", "their verdicts on 2 answers");
    empty when it has shown nothing that tells answers."""
    return seen_phrases(review_seen_of(assignment=assignment, student=student, window=window))


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
