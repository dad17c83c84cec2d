"""The proctor view's reads: per enrolled student of an assignment, whether they have
started, their time left (their own limit), the answers they have saved, when they were
last seen, and whether (when, why) they finished. A fixed number of queries however
many students there are."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, Count, F, FilteredRelation, Max, Min, Q, Value
from django.utils import timezone

from courses.models import Assignment, AssignmentKind, Enrolment, EnrolmentStatus, Role
from exercises.models import Variant
from grading.models import Submission

from .models import AssignmentAttempt
from .selectors_accommodations import (
    StudentLimits,
    accommodation_summary,
    carried_accommodation,
    course_zone,
    limits_apply,
    with_course_accommodation_in,
    with_own_accommodation,
)
from .window import end_due

NOT_STARTED = "not started"
IN_PROGRESS = "in progress"
TIME_UP = "time up"
FINISHED = "finished"


@dataclass(frozen=True)
class ProctorRow:
    student: object
    state: str  # NOT_STARTED, IN_PROGRESS, TIME_UP (the clock ran out, not closed yet) or FINISHED
    limits: StudentLimits
    attempt: AssignmentAttempt | None
    started_at: datetime | None
    seconds_left: int | None  # while in progress under a time limit
    answers_saved: int
    last_seen_at: datetime | None
    finished_at: datetime | None
    finish_reason: str  # the attempt's close reason, in words
    accommodation_summary: str  # the accommodation in words, "" without one

    @property
    def accommodation(self):
        return self.limits.accommodation

    @property
    def page_deadline(self) -> str:
        """Whether the student's open page has the deadline in force: "current" (it
        learned this one), "behind" (it still counts to an older one), "" (no page has
        asked yet, or there is no running clock)."""
        if self.state != IN_PROGRESS or self.limits.deadline is None or self.attempt is None:
            return ""
        if self.attempt.deadline_seen_at is None:
            return ""
        return "current" if self.attempt.deadline_seen == self.limits.deadline else "behind"


def _students(assignment: Assignment):
    """The course's active students, each with their accommodations (on the assignment and
    course-wide) and attempt joined in."""
    enrolled = Enrolment.objects.filter(
        course_id=assignment.course_id, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE
    ).values("user_id")
    return (
        get_user_model()
        .objects.filter(pk__in=enrolled)
        .annotate(
            own_accommodation=FilteredRelation(
                "accommodations", condition=Q(accommodations__assignment=assignment)
            ),
            **with_course_accommodation_in(course_id=assignment.course_id),
            own_accommodation_read=Value(True, output_field=BooleanField()),
            own_attempt=FilteredRelation(
                "assignment_attempts", condition=Q(assignment_attempts__assignment=assignment)
            ),
        )
        .select_related("own_accommodation", "own_course_accommodation", "own_attempt")
        .order_by("username")
    )


def proctor_rows(*, assignment: Assignment, now: datetime | None = None) -> list[ProctorRow]:
    """One row per enrolled student, by username. Three queries (four for homework, whose
    clock starts at the first exercise opened) whatever the number of students."""
    now = now or timezone.now()
    students = list(_students(assignment))
    ids = [student.pk for student in students]
    answers = {}
    if ids:
        answers = {
            student_id: (count, last)
            for student_id, count, last in Submission.objects.filter(
                variant__assignment_item__assignment=assignment,
                variant__context__startswith="assignment:",
                student_id__in=ids,
            )
            .values("student_id")
            .annotate(count=Count("pk"), last=Max("created_at"))
            .values_list("student_id", "count", "last")
        }
    exam = assignment.kind == AssignmentKind.EXAM
    first_opened = {}
    if not exam and ids:
        first_opened = dict(
            Variant.objects.filter(assignment_item__assignment=assignment, student_id__in=ids)
            .values_list("student_id")
            .annotate(first=Min("created_at"))
            .values_list("student_id", "first")
        )
    tz = course_zone(assignment)
    rows = []
    for student in students:
        attempt = vars(student).get("own_attempt")
        started_at = (attempt.started_at if attempt else None) if exam else first_opened.get(student.pk)
        limits = limits_apply(
            assignment=assignment,
            accommodation=carried_accommodation(student),
            started_at=started_at,
            now=now,
        )
        finished_at = attempt.finished_at if attempt else None
        if finished_at is not None:
            state = FINISHED
        elif started_at is None:
            state = NOT_STARTED
        elif limits.deadline is not None and now >= limits.deadline:
            state = TIME_UP
        else:
            state = IN_PROGRESS
        seconds_left = None
        if state == IN_PROGRESS and limits.deadline is not None:
            seconds_left = max(0, int((limits.deadline - now) / timedelta(seconds=1)))
        saved, last_answer = answers.get(student.pk, (0, None))
        seen = [moment for moment in (attempt.last_seen_at if attempt else None, last_answer) if moment]
        rows.append(
            ProctorRow(
                student=student,
                state=state,
                limits=limits,
                attempt=attempt,
                started_at=started_at,
                seconds_left=seconds_left,
                answers_saved=saved,
                last_seen_at=max(seen) if seen else None,
                finished_at=finished_at,
                finish_reason=attempt.get_close_reason_display() if finished_at else "",
                accommodation_summary=accommodation_summary(limits.accommodation, tz=tz),
            )
        )
    return rows


def proctor_counts(rows: list[ProctorRow]) -> dict[str, int]:
    counts = dict.fromkeys((NOT_STARTED, IN_PROGRESS, TIME_UP, FINISHED), 0)
    for row in rows:
        counts[row.state] += 1
    return counts


def running_attempts_by_exam(*, course_id: int, now: datetime | None = None) -> list[tuple[Assignment, int]]:
    """The course's exams with attempts running now (started, not ended, their time not
    over), each with how many, by title: one query. An attempt over but not yet recorded
    by the closer does not count: it takes no more answers anyway."""
    now = now or timezone.now()
    attempts = with_own_accommodation(
        AssignmentAttempt.objects.filter(
            assignment__course_id=course_id, assignment__kind=AssignmentKind.EXAM, finished_at__isnull=True
        ).select_related("assignment"),
        assignment_path="assignment", student=F("student"),
    )
    running: dict[int, list] = {}
    for attempt in attempts:
        limits = limits_apply(
            assignment=attempt.assignment, accommodation=carried_accommodation(attempt),
            started_at=attempt.started_at, now=now,
        )
        due = end_due(limits)
        if due is not None and now >= due[0]:
            continue
        running.setdefault(attempt.assignment_id, [attempt.assignment, 0])[1] += 1
    return sorted(((exam, count) for exam, count in running.values()), key=lambda pair: (pair[0].title, pair[0].pk))
