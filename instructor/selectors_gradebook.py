"""The course gradebook: every active student x every assignment of the course, with the
weighted category percents and the course total (rules in ``grade_totals``), and its rows
for CSV and XLSX.

It reads in a fixed number of queries whatever the roster: the assignments, their items,
the categories and their assignments, the students with their enrolments, one aggregate of
best part scores over the course (with which parts await grading), the accommodations (the
assignments' and the course-wide ones), and (only with pools) the draws.

An answer awaiting grading (a free-text part waiting for a person) counts 0 until it is
graded: its cell is marked ``pending`` and the student's total ``provisional``, on the page
and in the exports' "pending" column, so that 0 never reads as final.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.utils import timezone

from accounts.name_order import name_order_key, name_ordering
from attnquiz.paging import ShownRange
from courses import pools
from courses.selectors import enrolments_matching
from courses.models import Assignment, AssignmentItem, Course, Enrolment, EnrolmentStatus, PoolDraw, Role
from exams.models import Accommodation, CourseAccommodation
from exercises.specs import version_spec
from grading.core.score_rounding import EXPORT_PERCENT_PLACES, score_number, score_text
from grading.models import Submission

from . import grade_totals
from .models import GradeCategory
from .selectors import (
    PENDING_COLUMN, ItemInfo, PartInfo, PartScores, csv_safe, item_pending, item_score, part_best_scores,
    pending_words, student_scores,
)

UNCATEGORISED = "Not in a category"
NOT_ATTEMPTED = "not attempted"


@dataclass
class GradebookColumn:
    assignment: Assignment
    items: list[ItemInfo]
    max_points: float
    category_id: int | None
    has_pools: bool = False

    @property
    def label(self) -> str:
        return f"{self.assignment.title} (/{self.max_points:g})"

    def student_result(
        self, *, student_id: int, part_scores: PartScores, draws: dict[str, int]
    ) -> tuple[float | None, float, bool]:
        """(points earned, None when not attempted; points out of; whether an answer awaits
        grading) of one student. Without pools every student is given every item, so the
        rules of ``student_scores`` reduce to a sum over the items (the gradebook's inner
        loop: 3,000 students x the columns)."""
        if self.has_pools:
            result = student_scores(infos=self.items, student_id=student_id, part_scores=part_scores, draws=draws)
            return (result.total if result.attempted else None), result.out_of, result.provisional
        best, pending = part_scores.best, part_scores.pending
        scores = [item_score(info=info, student_id=student_id, best=best) for info in self.items]
        attempted = any(score is not None for score in scores)
        is_pending = attempted and any(
            item_pending(info=info, student_id=student_id, pending=pending) for info in self.items
        )
        return (sum(score or 0.0 for score in scores) if attempted else None), self.max_points, is_pending


@dataclass
class GradebookCategory:
    id: int | None
    name: str
    weight: float
    drop_lowest: int

    @property
    def label(self) -> str:
        return f"{self.name} ({self.weight:g} %)"


@dataclass
class GradebookCell:
    earned: float | None  # None: not attempted
    out_of: float
    accommodated: bool = False
    dropped: bool = False
    pending: bool = False  # an answer awaits grading: ``earned`` counts only what is graded

    @property
    def shown(self) -> str:
        return NOT_ATTEMPTED if self.earned is None else score_text(self.earned)


@dataclass
class GradebookRow:
    enrolment: Enrolment
    cells: list[GradebookCell]
    category_percents: list[float | None]
    total: float | None

    @property
    def student(self):
        return self.enrolment.user

    @property
    def accommodated(self) -> bool:
        return any(cell.accommodated for cell in self.cells)

    @property
    def provisional(self) -> bool:
        """True while an answer awaits grading: the total may still go up."""
        return any(cell.pending for cell in self.cells)


@dataclass
class CourseGradebook:
    course: Course
    columns: list[GradebookColumn]
    categories: list[GradebookCategory]
    rows: list[GradebookRow] = field(default_factory=list)


def _columns(*, course: Course) -> list[GradebookColumn]:
    assignments = list(course.assignments.order_by("due_at", "title", "pk"))
    items_by_assignment: dict[int, list[ItemInfo]] = defaultdict(list)
    for item in AssignmentItem.objects.filter(assignment__course=course).select_related(
        "exercise_version__exercise"
    ):
        spec = version_spec(item.exercise_version)
        parts = tuple(PartInfo(p.key, p.type, float(p.points)) for p in spec.parts)
        items_by_assignment[item.assignment_id].append(
            ItemInfo(item=item, slug=item.exercise_version.exercise.slug, title=spec.title, parts=parts)
        )
    category_of = dict(
        GradeCategory.assignments.through.objects.filter(gradecategory__course=course).values_list(
            "assignment_id", "gradecategory_id"
        )
    )
    columns = []
    for assignment in assignments:
        infos = sorted(items_by_assignment[assignment.pk], key=lambda info: (info.item.position, info.item.pk))
        columns.append(
            GradebookColumn(
                assignment=assignment, items=infos, category_id=category_of.get(assignment.pk),
                max_points=pools.slot_points(info.item for info in infos),
                has_pools=pools.has_pools(info.item for info in infos),
            )
        )
    return columns


def _categories(*, course: Course, columns: list[GradebookColumn]) -> list[GradebookCategory]:
    stored = [
        GradebookCategory(id=c.pk, name=c.name, weight=c.weight, drop_lowest=c.drop_lowest)
        for c in GradeCategory.objects.filter(course=course)
    ]
    if not stored:
        return [GradebookCategory(id=None, name="All assignments", weight=100.0, drop_lowest=0)]
    if any(column.category_id is None for column in columns):
        stored.append(GradebookCategory(id=None, name=UNCATEGORISED, weight=0.0, drop_lowest=0))
    return stored


def _best_part_scores(*, course: Course) -> PartScores:
    """The best score of every part answered in the course and which parts await grading,
    in one aggregate (as in the assignment gradebook)."""
    return part_best_scores(submissions=Submission.objects.filter(variant__assignment_item__assignment__course=course))


def _course_draws(*, course: Course, columns: list[GradebookColumn]) -> dict[tuple[int, int], dict[str, int]]:
    """(assignment id, student id) -> {pool: item id}; no query when no assignment has pools."""
    if not any(column.has_pools for column in columns):
        return {}
    draws: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for assignment_id, student_id, pool, item_id in PoolDraw.objects.filter(
        assignment__course=course
    ).values_list("assignment_id", "student_id", "pool", "item_id"):
        draws[(assignment_id, student_id)][pool] = item_id
    return draws


ROW_FIELDS = (
    "course_id", "user_id", "role", "status", "student_id",
    "user__username", "user__first_name", "user__last_name", "user__email",
)


def course_gradebook_students(*, course: Course, student_filter: str = ""):
    """The active students, by name (``accounts.name_order``); ``student_filter`` keeps those
    matching every word of it in their username, names, student ID or e-mail ("sam sto"
    finds Sam Stone)."""
    enrolments = (
        Enrolment.objects.filter(course=course, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE)
        .select_related("user")
        # What a row shows: thousands of students' dates would only cost time to read.
        .only(*ROW_FIELDS)
        .order_by(*name_ordering(prefix="user__"), "pk")
    )
    return enrolments_matching(enrolments, student_filter)


def _is_over(assignment: Assignment, now) -> bool:
    end = assignment.closes_at or assignment.due_at
    return end is not None and end <= now


def _accommodated_cells(*, course: Course, columns) -> set[tuple[int, int]]:
    """(student, assignment) pairs an accommodation reaches: the assignment's own ones, and
    each course-wide one on every assignment it changes (attempts anywhere; extra time only
    where the assignment is timed). Two queries."""
    cells = set(Accommodation.objects.filter(assignment__course=course).values_list("student_id", "assignment_id"))
    course_wide = CourseAccommodation.objects.filter(course=course).values_list(
        "student_id", "time_factor", "extra_minutes", "attempts_per_part"
    )
    for student_id, time_factor, extra_minutes, attempts_per_part in course_wide:
        for column in columns:
            assignment = column.assignment
            gives_time = (time_factor is not None or extra_minutes is not None) and bool(assignment.time_limit_minutes)
            if gives_time or attempts_per_part is not None:
                cells.add((student_id, assignment.pk))
    return cells


def course_gradebook(*, course: Course, student_filter: str = "") -> CourseGradebook:
    """The whole course gradebook (see the module docstring for its queries)."""
    columns = _columns(course=course)
    categories = _categories(course=course, columns=columns)
    rules = [grade_totals.CategoryRule(c.id, c.weight, c.drop_lowest) for c in categories]
    has_stored_categories = categories[0].id is not None
    book = CourseGradebook(course=course, columns=columns, categories=categories)
    enrolments = list(course_gradebook_students(course=course, student_filter=student_filter))
    if not enrolments:
        return book
    part_scores = _best_part_scores(course=course)
    draws = _course_draws(course=course, columns=columns)
    accommodated = _accommodated_cells(course=course, columns=columns)
    now = timezone.now()
    over = {column.assignment.pk: _is_over(column.assignment, now) for column in columns}
    for enrolment in enrolments:
        student_id = enrolment.user_id
        cells, results = [], defaultdict(list)
        for column in columns:
            earned, out_of, pending = column.student_result(
                student_id=student_id, part_scores=part_scores, draws=draws.get((column.assignment.pk, student_id), {})
            )
            cells.append(
                GradebookCell(
                    earned=earned, out_of=out_of,
                    accommodated=(student_id, column.assignment.pk) in accommodated,
                    pending=pending,
                )
            )
            key = column.category_id if has_stored_categories else None
            results[key].append(
                grade_totals.AssignmentResult(
                    assignment_id=column.assignment.pk, earned=earned, out_of=out_of,
                    is_over=over[column.assignment.pk],
                )
            )
        category_results = [grade_totals.category_result(rule, results[rule.key]) for rule in rules]
        dropped = {assignment_id for result in category_results for assignment_id in result.dropped}
        for cell, column in zip(cells, columns):
            cell.dropped = column.assignment.pk in dropped
        book.rows.append(
            GradebookRow(
                enrolment=enrolment, cells=cells,
                category_percents=[result.percent for result in category_results],
                total=grade_totals.weighted_total(rules, category_results),
            )
        )
    return book


def _titles(columns: list[GradebookColumn]) -> str:
    titles = [f"“{column.assignment.title}”" for column in columns[:3]]
    more = len(columns) - len(titles)
    listed = titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]
    return listed + (f" and {more} more" if more else "")


def gradebook_setup_problems(*, book: CourseGradebook) -> list[str]:
    """What in the categories leaves points out of the totals, each with what to do: the
    page shows it above the table (a total of "—" for everyone said nothing of why).
    None without categories: then every assignment counts."""
    if book.categories[0].id is None:
        return []
    problems = []
    loose = [column for column in book.columns if column.category_id is None]
    if loose:
        one = len(loose) == 1
        problems.append(
            f"{len(loose)} assignment{'' if one else 's'} ({_titles(loose)}) count{'s' if one else ''} in no category: "
            f"{'its' if one else 'their'} points are left out of every total. Choose a category for "
            f"{'it' if one else 'each'} under “Which category each assignment counts in”."
        )
    used = {column.category_id for column in book.columns}
    for category in book.categories:
        if category.id is not None and category.weight > 0 and category.id not in used:
            problems.append(
                f"The category “{category.name}” ({category.weight:g} %) holds no assignment: it counts nothing, "
                "and the totals weigh only the other categories until an assignment is put in it."
            )
    if not any(category.weight > 0 for category in book.categories if category.id is not None):
        problems.append("Every category weighs 0 %: no total can be worked out. Give the categories their weights.")
    return problems


# ---------------------------------------------------------------------------
# The page: sorted, one page of rows at a time
# ---------------------------------------------------------------------------

ROWS_PER_PAGE = 100
SORTS = {
    "name": "name",
    "username": "username",
    "student_id": "student ID",
    "total": "total",
}


def _sort_key(sort: str):
    if sort == "username":
        return lambda row: row.student.username.casefold()
    if sort == "student_id":
        return lambda row: (row.enrolment.student_id.casefold(), row.student.username.casefold())
    if sort == "total":
        return lambda row: row.total
    return lambda row: name_order_key(row.student)


def gradebook_rows_sorted(rows: list[GradebookRow], *, sort: str, descending: bool = False) -> list[GradebookRow]:
    """The rows by ``sort`` (one of ``SORTS``; anything else sorts by name). A total that
    counts nothing yet comes last in either direction."""
    key = _sort_key(sort if sort in SORTS else "name")
    if sort != "total":
        return sorted(rows, key=key, reverse=descending)
    counted = sorted((row for row in rows if row.total is not None), key=key, reverse=descending)
    return counted + [row for row in rows if row.total is None]


@dataclass
class GradebookPage(ShownRange):
    """One page of the course gradebook: every matching row is computed (so totals and the
    sort by total are over everyone); ``rows`` are the ones shown."""

    book: CourseGradebook
    rows: list[GradebookRow]
    number: int
    pages: int
    matching: int
    sort: str
    descending: bool
    per_page: int = ROWS_PER_PAGE

    @property
    def sort_words(self) -> str:
        return SORTS[self.sort]


def course_gradebook_page(
    *, course: Course, student_filter: str = "", sort: str = "name", descending: bool = False,
    page: int = 1, per_page: int = ROWS_PER_PAGE,
) -> GradebookPage:
    """Page ``page`` (clamped to the pages there are) of the sorted gradebook, in the
    queries of ``course_gradebook``."""
    sort = sort if sort in SORTS else "name"
    book = course_gradebook(course=course, student_filter=student_filter)
    rows = gradebook_rows_sorted(book.rows, sort=sort, descending=descending)
    pages = max(1, -(-len(rows) // per_page))
    number = min(max(page, 1), pages)
    shown = rows[(number - 1) * per_page: number * per_page]
    return GradebookPage(
        book=book, rows=shown, number=number, pages=pages, matching=len(rows), sort=sort, descending=descending,
        per_page=per_page,
    )


def _number(value: float | None, digits: int) -> float | str:
    return "" if value is None else score_number(value, digits)


def course_gradebook_table(*, book: CourseGradebook) -> list[list]:
    """Header then one row per student: username, student ID, e-mail, names, each
    assignment's points ("not attempted" when never answered), each category's percent,
    the total percent, and "pending": the assignments with an answer awaiting grading
    (counted 0 until graded, so a row that names any has a provisional total). Text cells,
    the header's assignment and category names among them, are made formula-safe."""
    header = ["username", "student_id", "email", "first_name", "last_name"]
    header += [csv_safe(column.label) for column in book.columns]  # titles and categories are typed by staff
    if book.categories[0].id is not None:
        header += [csv_safe(f"{category.label} %") for category in book.categories]
    header += ["total %", PENDING_COLUMN]
    table = [header]
    for row in book.rows:
        user = row.student
        line = [
            csv_safe(user.username), csv_safe(row.enrolment.student_id), csv_safe(user.email),
            csv_safe(user.first_name), csv_safe(user.last_name),
        ]
        line += [NOT_ATTEMPTED if cell.earned is None else score_number(cell.earned) for cell in row.cells]
        if book.categories[0].id is not None:
            line += [_number(percent, EXPORT_PERCENT_PLACES) for percent in row.category_percents]
        line.append(_number(row.total, EXPORT_PERCENT_PLACES))
        waiting = (column.assignment.title for column, cell in zip(book.columns, row.cells) if cell.pending)
        line.append(pending_words(waiting))
        table.append(line)
    return table
