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
from datetime import datetime, timedelta
from functools import reduce
from operator import or_

from django.contrib.auth import get_user_model
from django.db import OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from courses.models import AssignmentItem
from exercises.engine.skills import part_skills, skill_for_misconception
from exercises.models import ExerciseVersion
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


def _outcome(submission) -> bool | None:
    """Right or wrong (a Submission, or a batch's row of one); None while a grade is awaited."""
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


@dataclass(frozen=True)
class _Graded:
    """What one submission's evidence is made of, as read for a batch."""

    id: int
    student_id: int
    part: str
    score: float | None
    correct: bool | None
    misconception: str
    created_at: datetime
    manual: object  # feedback["details"]["manual"]: a person graded it when truthy
    context: str
    version_id: int
    assignment_course_id: int | None

    @property
    def is_practice(self) -> bool:
        return self.context.startswith("practice:")


def _graded_read(submission_ids: list[int]) -> list[_Graded]:
    """The batch's submissions with their variant's context and assignment's course, one
    query, id order. The specs are read apart, once per version (many answers share one)."""
    rows = (
        Submission.objects.filter(pk__in=submission_ids)
        .order_by("pk")
        .values_list(
            "id", "student_id", "part", "score", "correct", "misconception", "created_at",
            "feedback__details__manual", "variant__context", "variant__exercise_version_id",
            "variant__assignment_item__assignment__course_id",
        )
    )
    return [_Graded(*row) for row in rows]


def _graded_courses(graded: list[_Graded]) -> dict[int, int | None]:
    """The course each answer belongs to: its assignment's, or for practice the course of
    the assignment item the practice was started from (one query for the batch); None when
    there is none (the item was deleted since), and such an answer is no evidence for
    anybody's mastery."""
    origins = {
        row.id: practice_origin_item_id(row)  # reads the row's context as a variant's
        for row in graded
        if row.assignment_course_id is None and row.is_practice
    }
    origin_courses = dict(
        AssignmentItem.objects.filter(pk__in=set(origins.values())).values_list("pk", "assignment__course_id")
    ) if origins else {}
    return {
        row.id: row.assignment_course_id if row.id not in origins else origin_courses.get(origins[row.id])
        for row in graded
    }


def _spec_data(version_ids: set[int]) -> dict[int, dict]:
    return dict(ExerciseVersion.objects.filter(pk__in=version_ids).values_list("pk", "spec"))


def _graded_credit(row: _Graded) -> float | None:
    """A person's grade of the answer (its raw score), or None for a machine grade."""
    return float(row.score) if row.manual and row.score is not None else None


def _students_lock(student_ids: set[int]) -> None:
    """Lock the students' user rows, in id order (two batches never wait on each other in a
    circle). NO KEY UPDATE: the lock serialises mastery updates of a student but, unlike
    FOR UPDATE, does not hold up the student's new answers (their foreign key checks)."""
    list(
        get_user_model().objects.select_for_update(no_key=True)
        .filter(pk__in=sorted(student_ids)).order_by("pk").values_list("pk", flat=True)
    )


def mastery_record_submission(*, submission_id: int) -> list[str]:
    """Store the evidence of one submission as its grade now stands, and recompute the
    student's mastery in the answer's course of every skill it touches (or touched before a
    regrade). Idempotent and safe to run concurrently, late or twice; returns the skills
    recomputed."""
    return mastery_record_submissions(submission_ids=[submission_id]).get(submission_id, [])


def mastery_record_submissions(*, submission_ids: list[int]) -> dict[int, list[str]]:
    """``mastery_record_submission`` for a batch, with the same rows as a result as
    recording each id alone, in any order: a fixed number of queries whatever the batch's
    size (its submissions in one read, each student locked once, the evidence written in
    one statement, each (student, course) recomputed once with all its skills). Ids that
    no longer exist are skipped, duplicates count once. Returns the skills recomputed per
    submission found."""
    graded = _graded_read(sorted(set(submission_ids)))
    if not graded:
        return {}
    courses = _graded_courses(graded)
    specs = _spec_data({row.version_id for row in graded})
    with transaction.atomic():
        # One student's updates run one at a time: each recomputes from the history it reads.
        _students_lock({row.student_id for row in graded})
        stored = list(
            Observation.objects.filter(submission_id__in=[row.id for row in graded])
            .values_list("pk", "submission_id", "course_id", "skill")
        )
        before: dict[int, set[tuple[int, str]]] = defaultdict(set)
        for _, submission_id, course_id, skill in stored:
            before[submission_id].add((course_id, skill))
        now: dict[int, set[tuple[int, str]]] = {}
        observations = []
        for row in graded:
            course_id = courses[row.id]
            if course_id is None and before[row.id]:
                course_id = min(before[row.id])[0]  # the practice's item is gone since: the course it was recorded in
            evidence = [] if course_id is None else submission_evidence(
                spec_data=specs.get(row.version_id), part=row.part, correct=_outcome(row),
                misconception=row.misconception, credit=_graded_credit(row),
            )
            now[row.id] = {(course_id, item.skill) for item in evidence}
            observations += [
                Observation(
                    submission_id=row.id, student_id=row.student_id, course_id=course_id, skill=item.skill,
                    correct=item.correct, misconception=item.misconception, credit=item.credit,
                    is_practice=row.is_practice, observed_at=row.created_at,
                )
                for item in evidence
            ]
        # A regrade's evidence about a skill it no longer touches goes (now's skills are upserted).
        stale_skills = {row.id: {skill for _, skill in before[row.id] - now[row.id]} for row in graded}
        stale = [pk for pk, submission_id, _, skill in stored if skill in stale_skills[submission_id]]
        if stale:
            Observation.objects.filter(pk__in=stale).delete()
        if observations:
            _observations_store(observations)
        touched: dict[tuple[int, int], set[str]] = defaultdict(set)
        for row in graded:
            for course_id, skill in before[row.id] | now[row.id]:
                touched[(row.student_id, course_id)].add(skill)
        masteries_recompute_many(skills_of=touched)
    return {row.id: sorted({skill for _, skill in before[row.id] | now[row.id]}) for row in graded}


def _observations_store(observations: list[Observation]) -> None:
    observations.sort(key=lambda row: (row.submission_id, row.skill))  # one lock order for every writer
    Observation.objects.bulk_create(
        observations,
        update_conflicts=True,
        unique_fields=["submission", "skill"],
        update_fields=["course", "correct", "credit", "misconception", "is_practice", "observed_at"],
    )


def masteries_recompute(*, student_id: int, course_id: int, skills: list[str]) -> None:
    """Replay the student's history of each skill in one course through BKT and store the
    result. Call inside the transaction that holds the student's lock."""
    masteries_recompute_many(skills_of={(student_id, course_id): set(skills)})


def masteries_recompute_many(*, skills_of: dict[tuple[int, int], set[str]]) -> None:
    """``masteries_recompute`` of each (student id, course id) for its skills, in one read of
    the histories and one write. Call inside the transaction that holds the students' locks."""
    if not skills_of:
        return
    wanted = {(student_id, course_id, skill) for (student_id, course_id), skills in skills_of.items()
              for skill in skills}
    all_skills = sorted({skill for _, _, skill in wanted})
    history: dict[tuple[int, int, str], list[tuple[bool | float, str]]] = defaultdict(list)
    # One read for the batch: a superset of the wanted histories (another student's course,
    # say), of which only the wanted ones are kept.
    rows = (
        Observation.objects.filter(
            student_id__in=sorted({key[0] for key in skills_of}),
            course_id__in=sorted({key[1] for key in skills_of}),
            skill__in=all_skills,
        )
        .order_by("observed_at", "submission_id")
        .values_list("student_id", "course_id", "skill", "correct", "credit", "misconception")
    )
    for student_id, course_id, skill, correct, credit, misconception in rows:
        if (student_id, course_id, skill) in wanted:
            history[(student_id, course_id, skill)].append((correct if credit is None else float(credit), misconception))
    params = parameters_for(all_skills)
    keep = [
        SkillMastery(student_id=student_id, course_id=course_id, skill=skill,
                     **_summary(history[(student_id, course_id, skill)], params[skill]))
        for student_id, course_id, skill in sorted(wanted)
        if history[(student_id, course_id, skill)]
    ]
    gone = sorted(key for key in wanted if not history[key])
    if gone:
        SkillMastery.objects.filter(
            reduce(or_, (Q(student_id=student_id, course_id=course_id, skill=skill) for student_id, course_id, skill in gone))
        ).delete()
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
    _masteries_record_each_failing_alone(visible)
    return len(visible)


def _masteries_record_each_failing_alone(submission_ids: list[int]) -> None:
    """Record a batch; if it fails (other than by a lost lock race, which the caller runs
    again), record each id on its own, so one submission that cannot be recorded keeps
    none of the others' evidence out."""
    if not submission_ids:
        return
    try:
        mastery_record_submissions(submission_ids=submission_ids)
        return
    except OperationalError:
        raise
    except Exception:
        if len(submission_ids) == 1:
            raise
        logger.exception("mastery of a batch of %d submissions failed; recording each alone", len(submission_ids))
    for submission_id in submission_ids:
        try:
            mastery_record_submission(submission_id=submission_id)
        except OperationalError:
            raise
        except Exception:
            logger.exception("could not record the mastery evidence of submission %s", submission_id)


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
        visible = submissions_not_withheld(batch)
        for chunk in _batches(visible, size=RECORD_BATCH):
            _masteries_record_each_failing_alone(chunk)
        count += len(visible)
    return count


# The backfill records this many submissions per transaction: their students stay locked
# for its length.
RECORD_BATCH = 100
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
