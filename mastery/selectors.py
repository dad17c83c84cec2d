"""Reads of mastery for pages: a student's skill map per course, and a course's students ×
skills grid. Both read one course's masteries only: a course's staff never see what a
student did in another course, and the student's map of a course is what its staff see.

Pages read stored rows only (``SkillMastery``); nothing here runs BKT or a fit.

Levels (thresholds on P(known)): *strong* from 0.95 (the usual BKT mastery criterion),
*developing* from 0.60, *shaky* below that, and *not yet seen* without any attempt. With
the default parameters two right answers in a row reach strong, two wrong ones with no
right answer leave a skill shaky.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import Avg, Count, Exists, F, OuterRef, Q, Subquery

from accounts.name_order import name_ordering
from courses.models import Role
from courses.selectors import access_course_staff, active_enrolments
from exercises.engine.skills import SKILL_SLUGS, SKILLS
from grading.core.misconceptions import MISCONCEPTION_LABELS

from .models import SkillMastery

STRONG_FROM = 0.95
DEVELOPING_FROM = 0.60
LEVELS = ("strong", "developing", "shaky", "not yet seen")
GRID_PAGE_SIZE = 50


def mastery_level(p_known: float | None, attempts: int = 0) -> str:
    if p_known is None or attempts == 0:
        return "not yet seen"
    if p_known >= STRONG_FROM:
        return "strong"
    if p_known >= DEVELOPING_FROM:
        return "developing"
    return "shaky"


def misconception_note(recent: list[str]) -> str:
    """'last 2 attempts showed ‘forgot σ’' from the newest-first codes of recent attempts;
    '' when none of them carried a misconception."""
    codes = [code for code in recent if isinstance(code, str)]
    if not codes:
        return ""
    newest = codes[0]
    if newest:
        run = 1
        while run < len(codes) and codes[run] == newest:
            run += 1
        label = MISCONCEPTION_LABELS.get(newest, newest)
        return f"last attempt showed ‘{label}’" if run == 1 else f"last {run} attempts showed ‘{label}’"
    seen = [code for code in codes if code]
    if not seen:
        return ""
    most = max(dict.fromkeys(seen), key=seen.count)  # the most frequent, the newest on a tie
    return f"{seen.count(most)} of the last {len(codes)} attempts showed ‘{MISCONCEPTION_LABELS.get(most, most)}’"


@dataclass(frozen=True)
class SkillLine:
    skill: str
    label: str
    level: str
    p_known: float | None
    attempts: int
    note: str

    @property
    def percent(self) -> int | None:
        return None if self.p_known is None else round(100 * self.p_known)


def _skill_lines(stored: dict) -> list[SkillLine]:
    lines = []
    for slug in SKILL_SLUGS:
        row = stored.get(slug)
        attempts = row.attempts if row else 0
        p_known = row.p_known if row else None
        lines.append(SkillLine(
            skill=slug, label=SKILLS[slug].label, level=mastery_level(p_known, attempts),
            p_known=p_known, attempts=attempts, note=misconception_note(row.recent_misconceptions) if row else "",
        ))
    return lines


def skill_maps_by_course(*, student, course_ids) -> dict[int, list[SkillLine]]:
    """The student's skill map in each of the given courses (every skill of the vocabulary,
    in its order), from that course's answers only — what the course's staff see of the
    student. One query for all the courses."""
    course_ids = list(course_ids)
    stored: dict[int, dict] = {course_id: {} for course_id in course_ids}
    for row in SkillMastery.objects.filter(student=student, course_id__in=course_ids, skill__in=SKILL_SLUGS):
        stored[row.course_id][row.skill] = row
    return {course_id: _skill_lines(rows) for course_id, rows in stored.items()}


def skill_map(*, student, course) -> list[SkillLine]:
    """The student's skill map in one course."""
    return skill_maps_by_course(student=student, course_ids=[course.pk])[course.pk]


# --------------------------------------------------------------------------- instructor grid


def access_course_skill_grid(*, user, course_slug: str):
    """The course, for its instructors and teaching assistants; 404 for outsiders (other
    courses' staff included), 403 for its students."""
    course, role = access_course_staff(user=user, slug=course_slug)
    return course, role


@dataclass(frozen=True)
class GridColumn:
    skill: str
    label: str
    mean: float | None  # over the course's students with attempts
    students_seen: int


@dataclass(frozen=True)
class GridCell:
    level: str
    p_known: float | None
    attempts: int

    @property
    def percent(self) -> int | None:
        return None if self.p_known is None else round(100 * self.p_known)


@dataclass(frozen=True)
class GridRow:
    student_id: int
    name: str
    cells: list[GridCell]
    username: str = ""


def course_student_ids(course):
    return active_enrolments().filter(course=course, role=Role.STUDENT).values("user_id")


def grid_columns(*, course) -> list[GridColumn]:
    """The skills, the class's weakest first (lowest mean P(known) over students with
    attempts); skills nobody has attempted come last, in vocabulary order."""
    stats = {
        row["skill"]: row
        for row in SkillMastery.objects.filter(
            course=course, student__in=course_student_ids(course), skill__in=SKILL_SLUGS
        )
        .values("skill")
        .annotate(mean=Avg("p_known"), seen=Count("id"))
    }
    columns = [
        GridColumn(slug, SKILLS[slug].label, stats[slug]["mean"] if slug in stats else None,
                   stats[slug]["seen"] if slug in stats else 0)
        for slug in SKILL_SLUGS
    ]
    order = {slug: index for index, slug in enumerate(SKILL_SLUGS)}
    return sorted(columns, key=lambda c: (c.mean is None, c.mean if c.mean is not None else 0.0, order[c.skill]))


GRID_LEVELS = ("strong", "developing", "shaky", "not yet seen")


def _by_name(*, descending: bool = False) -> list:
    """The grid's rows by name (``accounts.name_order``), the user id last for stable pages."""
    return [*name_ordering(prefix="user__", descending=descending), F("user_id").desc() if descending else "user_id"]


@dataclass(frozen=True)
class GridQuery:
    """How the grid is sorted and filtered: ``sort`` is "name" or a skill (by P(known),
    lowest first unless ``descending``); ``level`` keeps the students at that level of
    ``level_skill`` (of any skill when empty). Unknown values fall back to the default."""

    sort: str = "name"
    descending: bool = False
    level: str = ""
    level_skill: str = ""

    @classmethod
    def from_request(cls, params) -> GridQuery:
        sort = params.get("sort", "name")
        level = params.get("level", "")
        level_skill = params.get("level_skill", "")
        return cls(
            sort=sort if sort in SKILL_SLUGS else "name",
            descending=params.get("order") == "desc",
            level=level if level in GRID_LEVELS else "",
            level_skill=level_skill if level_skill in SKILL_SLUGS else "",
        )


def _level_condition(level: str, prefix: str = "") -> Q:
    p_known, attempts = f"{prefix}p_known", f"{prefix}attempts"
    if level == "strong":
        return Q(**{f"{p_known}__gte": STRONG_FROM, f"{attempts}__gt": 0})
    if level == "developing":
        return Q(**{f"{p_known}__gte": DEVELOPING_FROM, f"{p_known}__lt": STRONG_FROM, f"{attempts}__gt": 0})
    return Q(**{f"{p_known}__lt": DEVELOPING_FROM, f"{attempts}__gt": 0})


def _grid_enrolments(*, course, query: GridQuery):
    enrolments = active_enrolments().filter(course=course, role=Role.STUDENT).select_related("user")
    if query.level:
        masteries = SkillMastery.objects.filter(course=course, student=OuterRef("user_id"))
        if query.level_skill:
            masteries = masteries.filter(skill=query.level_skill)
        if query.level == "not yet seen":
            # Without a skill: students who have not attempted anything yet.
            enrolments = enrolments.exclude(Exists(masteries.filter(attempts__gt=0)))
        else:
            enrolments = enrolments.filter(Exists(masteries.filter(_level_condition(query.level))))
    if query.sort == "name":
        return enrolments.order_by(*_by_name(descending=query.descending))
    known = Subquery(
        SkillMastery.objects.filter(course=course, student=OuterRef("user_id"), skill=query.sort, attempts__gt=0)
        .values("p_known")[:1]
    )
    enrolments = enrolments.annotate(sort_known=known)
    key = F("sort_known").desc(nulls_last=True) if query.descending else F("sort_known").asc(nulls_last=True)
    return enrolments.order_by(key, *_by_name())


def grid_page(*, course, columns: list[GridColumn], page_number, query: GridQuery | None = None):
    """One page of students (by name, or as ``query`` sorts and filters them) with their
    cells in the columns' order."""
    enrolments = _grid_enrolments(course=course, query=query or GridQuery())
    page = Paginator(enrolments, GRID_PAGE_SIZE).get_page(page_number)
    students = [enrolment.user for enrolment in page.object_list]
    stored = {
        (row.student_id, row.skill): row
        for row in SkillMastery.objects.filter(
            course=course, student__in=students, skill__in=[c.skill for c in columns]
        )
    }
    rows = []
    for student in students:
        cells = []
        for column in columns:
            row = stored.get((student.pk, column.skill))
            p_known, attempts = (row.p_known, row.attempts) if row else (None, 0)
            cells.append(GridCell(mastery_level(p_known, attempts), p_known, attempts))
        rows.append(GridRow(student.pk, student.get_full_name() or student.username, cells, student.username))
    return page, rows
