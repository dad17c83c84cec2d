"""Writes of mastery: turn a graded submission into evidence per skill in the answer's
course, recompute P(known) from a student's history in that course, and fit the BKT parameters per skill from every stored attempt.

Which skills a submission is evidence about: the skills its part declares, except that a
wrong answer with a diagnosed misconception is evidence against the skill that
misconception reveals, and only that one (the diagnosis says where the mistake was; the
part's other skills were not what went wrong).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from courses.models import AssignmentItem
from exercises.engine.skills import part_skills, skill_for_misconception
from exercises.selectors import practice_origin_item_id
from grading.models import Submission

from . import bkt
from .models import Observation, SkillMastery, SkillParameters

logger = logging.getLogger(__name__)

RECENT_MISCONCEPTIONS = 5  # attempts kept per (student, skill) for the skill map's wording
# A fit from fewer students or attempts than this would mostly fit noise: defaults stay.
MIN_FIT_STUDENTS = 10
MIN_FIT_OBSERVATIONS = 50


@dataclass(frozen=True)
class Evidence:
    skill: str
    correct: bool
    misconception: str
    credit: float | None = None


# A person's partial grade counts as right for the (boolean) parameter fit from here up.
PARTIAL_CREDIT_RIGHT_FROM = 0.5


def submission_evidence(
    *, spec_data: dict, part: str, correct: bool | None, misconception: str, credit: float | None = None
) -> list[Evidence]:
    """What one graded answer says about each skill (see the module docstring); [] for an
    answer without a right/wrong outcome (still waiting for a manual grade). ``credit``, a
    manual grade strictly between 0 and 1, makes it partial evidence for every skill of
    the part (docs/mastery.md, "Partial credit")."""
    if credit is not None and 0.0 < credit < 1.0:
        right = credit >= PARTIAL_CREDIT_RIGHT_FROM
        return [Evidence(skill, right, "", credit) for skill in part_skills(spec_data, part)]
    if correct is None:
        return []
    revealed = None if correct else skill_for_misconception(misconception)
    if revealed is not None:
        return [Evidence(revealed, False, misconception)]
    return [Evidence(skill, bool(correct), "") for skill in part_skills(spec_data, part)]


def _manual_credit(submission: Submission) -> float | None:
    """A person's grade of the answer (its raw score), or None for a machine grade."""
    details = (submission.feedback or {}).get("details") if isinstance(submission.feedback, dict) else None
    if isinstance(details, dict) and details.get("manual") and submission.score is not None:
        return float(submission.score)
    return None


def _outcome(submission: Submission) -> bool | None:
    if submission.correct is not None:
        return submission.correct
    return None if submission.score is None else submission.score >= 1.0


def parameters_for(skills) -> dict[str, bkt.BKTParams]:
    """The stored fitted parameters of each skill, or the defaults where there is no fit."""
    stored = {row.skill: row for row in SkillParameters.objects.filter(skill__in=list(skills))}
    return {
        skill: bkt.BKTParams(prior=row.prior, learn=row.learn, guess=row.guess, slip=row.slip, forget=row.forget)
        if (row := stored.get(skill)) is not None
        else bkt.DEFAULT_PARAMS
        for skill in skills
    }


def submission_course_id(submission: Submission) -> int | None:
    """The course an answer belongs to: its assignment's, or for practice the course of the
    assignment item the practice was started from; None when there is none (the item was
    deleted since), and such an answer is no evidence for anybody's mastery."""
    variant = submission.variant
    if variant.assignment_item_id is not None:
        return variant.assignment_item.assignment.course_id
    if variant.context.startswith("practice:"):
        return (
            AssignmentItem.objects.filter(pk=practice_origin_item_id(variant))
            .values_list("assignment__course_id", flat=True)
            .first()
        )
    return None


def mastery_record_submission(*, submission_id: int) -> list[str]:
    """Store the evidence of one submission as its grade now stands, and recompute the
    student's mastery in the answer's course of every skill it touches (or touched before a
    regrade). Idempotent and safe to run concurrently, late or twice; returns the skills
    recomputed."""
    submission = (
        Submission.objects.select_related("variant__exercise_version", "variant__assignment_item__assignment")
        .only("id", "student_id", "part", "status", "score", "correct", "misconception", "created_at", "feedback",
              "variant__context", "variant__exercise_version__spec",
              "variant__assignment_item__assignment__course_id")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None:
        return []
    course_id = submission_course_id(submission)
    with transaction.atomic():
        # One student's updates run one at a time: each recomputes from the history it reads.
        get_user_model().objects.select_for_update().filter(pk=submission.student_id).values_list("pk").first()
        before = set(Observation.objects.filter(submission_id=submission.pk).values_list("course_id", "skill"))
        if course_id is None and before:
            course_id = min(before)[0]  # the practice's item is gone since: the course it was recorded in
        evidence = [] if course_id is None else submission_evidence(
            spec_data=submission.variant.exercise_version.spec,
            part=submission.part,
            correct=_outcome(submission),
            misconception=submission.misconception,
            credit=_manual_credit(submission),
        )
        now = {(course_id, item.skill) for item in evidence}
        if before - now:
            Observation.objects.filter(
                submission_id=submission.pk, skill__in={skill for _, skill in before - now}
            ).delete()
        if evidence:
            Observation.objects.bulk_create(
                [
                    Observation(
                        submission_id=submission.pk, student_id=submission.student_id, course_id=course_id,
                        skill=item.skill, correct=item.correct, misconception=item.misconception, credit=item.credit,
                        is_practice=submission.variant.context.startswith("practice:"),
                        observed_at=submission.created_at,
                    )
                    for item in evidence
                ],
                update_conflicts=True,
                unique_fields=["submission", "skill"],
                update_fields=["course", "correct", "credit", "misconception", "is_practice", "observed_at"],
            )
        by_course: dict[int, set[str]] = defaultdict(set)
        for touched_course, skill in before | now:
            by_course[touched_course].add(skill)
        for touched_course, skills in sorted(by_course.items()):
            masteries_recompute(student_id=submission.student_id, course_id=touched_course, skills=sorted(skills))
    return sorted({skill for _, skill in before | now})


def masteries_recompute(*, student_id: int, course_id: int, skills: list[str]) -> None:
    """Replay the student's history of each skill in one course through BKT and store the
    result. Call inside the transaction that holds the student's lock."""
    history: dict[str, list[tuple[bool | float, str]]] = defaultdict(list)
    rows = (
        Observation.objects.filter(student_id=student_id, course_id=course_id, skill__in=skills)
        .order_by("observed_at", "submission_id")
        .values_list("skill", "correct", "credit", "misconception")
    )
    for skill, correct, credit, misconception in rows:
        history[skill].append((correct if credit is None else float(credit), misconception))
    params = parameters_for(skills)
    keep = [SkillMastery(student_id=student_id, course_id=course_id, skill=skill,
                         **_summary(history[skill], params[skill]))
            for skill in skills if history[skill]]
    gone = [skill for skill in skills if not history[skill]]
    if gone:
        SkillMastery.objects.filter(student_id=student_id, course_id=course_id, skill__in=gone).delete()
    if keep:
        _masteries_store(keep)


def _summary(history: list[tuple[bool | float, str]], params: bkt.BKTParams) -> dict:
    return {
        "p_known": bkt.replay((correct for correct, _ in history), params),
        "attempts": len(history),
        "recent_misconceptions": [code for _, code in reversed(history[-RECENT_MISCONCEPTIONS:])],
    }


def _masteries_store(masteries: list[SkillMastery]) -> None:
    now = timezone.now()
    for mastery in masteries:
        mastery.updated_at = now  # bulk_create's upsert does not run auto_now
    SkillMastery.objects.bulk_create(
        masteries,
        update_conflicts=True,
        unique_fields=["student", "course", "skill"],
        update_fields=["p_known", "attempts", "recent_misconceptions", "updated_at"],
        batch_size=500,
    )


def mastery_record_visible(*, submission_ids: list[int]) -> int:
    """Record the submissions among ``submission_ids`` whose grade their student may see
    (an exam's withheld grade waits); returns how many were recorded."""
    from exams.selectors import submissions_not_withheld

    visible = submissions_not_withheld(submission_ids)
    for submission_id in visible:
        mastery_record_submission(submission_id=submission_id)
    return len(visible)


def mastery_backfill(*, days: int) -> int:
    """Record the graded submissions of the last ``days`` days that have no evidence yet
    (an update lost with the broker, or graded before mastery existed) and whose grade
    their student may see now (the one visibility rule: an exam's grade waits for its
    release or the policy's "after" moment, never while the attempt runs); returns how many
    were recorded. Parts without skills are looked at again each time, which is cheap."""
    from exams.selectors import submissions_not_withheld

    since = timezone.now() - timedelta(days=days)
    missing = (
        Submission.objects.filter(graded_at__gte=since, correct__isnull=False, mastery_observations__isnull=True)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )
    count = 0
    for batch in _batches(missing.iterator(chunk_size=BACKFILL_BATCH), size=BACKFILL_BATCH):
        for submission_id in submissions_not_withheld(batch):
            mastery_record_submission(submission_id=submission_id)
            count += 1
    return count


BACKFILL_BATCH = 1000


def _batches(ids, *, size: int):
    batch = []
    for submission_id in ids:
        batch.append(submission_id)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# --------------------------------------------------------------------------- fitting


@dataclass(frozen=True)
class SkillFit:
    skill: str
    students: int
    observations: int
    fitted: bool
    params: bkt.BKTParams
    log_likelihood: float | None = None
    iterations: int = 0

    def summary(self) -> str:
        p = self.params
        state = f"fitted in {self.iterations} iterations" if self.fitted else "too little data: defaults kept"
        return (f"{self.skill}: {self.students} students, {self.observations} attempts, {state}; "
                f"prior {p.prior:.3f} learn {p.learn:.3f} guess {p.guess:.3f} slip {p.slip:.3f}")


def skill_histories(*, skill: str) -> dict[tuple[int, int], list[tuple[bool, str]]]:
    """Every student's ordered (correct, misconception) history of one skill in each course
    they answered it in, keyed by (student, course)."""
    histories: dict[tuple[int, int], list[tuple[bool, str]]] = defaultdict(list)
    rows = (
        Observation.objects.filter(skill=skill)
        .order_by("student_id", "course_id", "observed_at", "submission_id")
        .values_list("student_id", "course_id", "correct", "credit", "misconception")
    )
    for student_id, course_id, correct, credit, misconception in rows.iterator(chunk_size=5000):
        histories[(student_id, course_id)].append((correct if credit is None else float(credit), misconception))
    return histories


def _as_right_or_wrong(outcome: bool | float) -> bool:
    """The fit's (boolean) reading of an outcome: partial credit from the threshold up is right."""
    return outcome if isinstance(outcome, bool) else outcome >= PARTIAL_CREDIT_RIGHT_FROM


def skill_parameters_fit(*, skill: str) -> SkillFit:
    """Fit one skill's BKT parameters by EM from every stored attempt, store them, and
    recompute every student's mastery of it in every course with them. Below the data
    minimum the stored fit (or the defaults) stays as it is.

    The fit pools every course: parameters describe the skill and the population, not one
    student. Each (student, course) history is one sequence, the same history the mastery
    shown to that course's staff is replayed from."""
    histories = skill_histories(skill=skill)
    sequences = [[_as_right_or_wrong(outcome) for outcome, _ in history] for history in histories.values()]
    observations = sum(len(sequence) for sequence in sequences)
    students = len({student_id for student_id, _ in histories})
    if students < MIN_FIT_STUDENTS or observations < MIN_FIT_OBSERVATIONS:
        return SkillFit(skill, students, observations, False, parameters_for([skill])[skill])
    result = bkt.fit(sequences)
    params = result.params
    with transaction.atomic():
        SkillParameters.objects.update_or_create(
            skill=skill,
            defaults={
                "prior": params.prior, "learn": params.learn, "guess": params.guess, "slip": params.slip,
                "forget": params.forget, "log_likelihood": result.log_likelihood,
                "observations": result.observations, "students": students,
                "iterations": result.iterations, "fitted_at": timezone.now(),
            },
        )
        _masteries_store([
            SkillMastery(student_id=student_id, course_id=course_id, skill=skill, **_summary(history, params))
            for (student_id, course_id), history in histories.items()
        ])
    return SkillFit(skill, students, observations, True, params, result.log_likelihood, result.iterations)


def skill_parameters_fit_all(*, skills=None) -> list[SkillFit]:
    from exercises.engine.skills import SKILL_SLUGS

    return [skill_parameters_fit(skill=skill) for skill in (skills or SKILL_SLUGS)]
