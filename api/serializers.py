"""The API's request and response shapes. Output serializers only read what selectors
return; input serializers check types and bounds, never business rules."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from attnquiz.input_limits import validate_storable_date
from authoring.services import MAX_SOURCE_BYTES
from courses.models import EnrolmentStatus, Role
from courses.services import MAX_ROSTER_BYTES, MAX_ROSTER_ROWS, ROSTER_ACTIONS
from exams.selectors import submission_outcome_for_student
from exercises.markdown_math import render_markdown_math
from exercises.models import VersionStatus
from grading.answer_input import MAX_GRID_SIDE
from grading.models import SubmissionStatus
from instructor.models import RegradeOutcome, RegradeRequestStatus, RegradeStatus
from instructor.selectors_rubrics import regrade_outcome_for_student
from grading.views import MAX_ANSWER_BYTES



def _refuse_unencodable(text: str) -> str:
    """JSON may carry lone UTF-16 surrogates and NUL; neither is text we can store."""
    if "\x00" in text:
        raise serializers.ValidationError("Text may not contain NUL characters.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise serializers.ValidationError("Text must be valid Unicode (no lone surrogates).")
    return text


@extend_schema_field(OpenApiTypes.STR)
class HtmlField(serializers.Field):
    """Exercise Markdown + LaTeX as the pages render it: sanitised HTML, math left for KaTeX."""

    def to_representation(self, value):
        if isinstance(value, SafeString):  # a variant's stored body: rendered and sanitised once
            return str(value)
        return render_markdown_math(value or "")


class AnswerField(serializers.Field):
    """An answer as the page posts it: text, a list of choices, or a grid of cells."""

    default_error_messages = {
        "type": "An answer is a string, a list of strings (choices) or a list of rows of strings (a grid).",
        "grid": f"A grid answer may have at most {MAX_GRID_SIDE} rows and columns.",
        "size": f"That answer is too long (more than {MAX_ANSWER_BYTES // 1000} kB).",
        "empty": "No answer was entered.",
    }

    def to_internal_value(self, data):
        answer = self._cell_or_fail(data) if not isinstance(data, list) else None
        if isinstance(data, list):
            if not data:
                self.fail("empty")
            if len(data) > MAX_GRID_SIDE:
                self.fail("grid")
            if all(isinstance(row, list) for row in data):
                if any(len(row) > MAX_GRID_SIDE for row in data):
                    self.fail("grid")
                answer = [[self._cell_or_fail(cell) for cell in row] for row in data]
            else:
                answer = [self._cell_or_fail(cell) for cell in data]
        if len(repr(answer).encode()) > MAX_ANSWER_BYTES:
            self.fail("size")
        return answer

    def _cell_or_fail(self, value) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.fail("type")
        return _refuse_unencodable(value) if isinstance(value, str) else repr(value)

    def to_representation(self, value):
        return value


AnswerField = extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "maxLength": MAX_ANSWER_BYTES},
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_GRID_SIDE},
            {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_GRID_SIDE,
                "items": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_GRID_SIDE},
            },
        ]
    }
)(AnswerField)


# ---------------------------------------------------------------------------
# Student side
# ---------------------------------------------------------------------------


class CourseSerializer(serializers.Serializer):
    slug = serializers.CharField(source="course.slug")
    title = serializers.CharField(source="course.title")
    role = serializers.CharField()


class AssignmentSummarySerializer(serializers.Serializer):
    slug = serializers.CharField(source="assignment.slug")
    title = serializers.CharField(source="assignment.title")
    # Your own dates and limits: an accommodation your instructor set replaces the assignment's.
    opens_at = serializers.DateTimeField(source="limits.opens_at", allow_null=True)
    due_at = serializers.DateTimeField(source="limits.due_at", allow_null=True)
    closes_at = serializers.DateTimeField(source="limits.closes_at", allow_null=True)
    attempts_per_part = serializers.IntegerField(
        source="limits.attempts_per_part", help_text="0 means unlimited."
    )
    time_limit_minutes = serializers.SerializerMethodField(
        help_text="Your time limit in whole minutes, rounded up; time_limit_seconds is exact."
    )
    time_limit_seconds = serializers.IntegerField(source="limits.time_limit_seconds", allow_null=True)
    kind = serializers.CharField(source="assignment.kind", help_text="homework or exam.")
    score_percent = serializers.IntegerField(allow_null=True, help_text="null while the review policy hides scores.")
    solved = serializers.IntegerField(allow_null=True, help_text="Exercises solved; null while correctness is hidden.")
    total = serializers.IntegerField(help_text="Exercises in the assignment.")


    def get_time_limit_minutes(self, summary) -> int | None:
        seconds = summary["limits"].time_limit_seconds
        return None if seconds is None else -(-seconds // 60)


class ItemStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="item.pk", help_text="The exercise's id in this assignment.")
    exercise = serializers.CharField(source="item.exercise_version.exercise.slug")
    version = serializers.IntegerField(source="item.exercise_version.number")
    title = serializers.CharField(source="item.exercise_version.title")
    points = serializers.FloatField(source="item.points")
    state = serializers.ChoiceField(
        choices=["not started", "in progress", "solved", "answered", "finished", "not answered"], source="status.state",
        help_text="'answered' while the review policy hides correctness; once the assignment is over for you "
                  "(closed, your time or exam attempt ended): 'solved', 'finished' or 'not answered'.",
    )
    score = serializers.FloatField(
        source="status.score", allow_null=True,
        help_text="Fraction of the points earned, 0..1; null while the review policy hides scores.",
    )
    parts = serializers.IntegerField(source="status.parts")
    solved_parts = serializers.IntegerField(source="status.solved_parts", allow_null=True)
    attempts_left = serializers.IntegerField(source="status.attempts_left", allow_null=True)


class AssignmentDetailSerializer(AssignmentSummarySerializer):
    exercises = ItemStatusSerializer(many=True, source="items")


class RubricLineSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="The rubric item as the grader ticked it (plain text).")
    points = serializers.FloatField(help_text="Its points; negative for a deduction.")


class FeedbackSerializer(serializers.Serializer):
    message = serializers.CharField(required=False, default="")
    misconception_message = serializers.CharField(required=False, default="")
    entry_correct = serializers.JSONField(
        source="details.entry_correct", required=False, default=None,
        help_text="For grid answers: which cells were right.",
    )
    rubric = RubricLineSerializer(
        many=True, required=False, default=list,
        help_text="A grade given by a person with a rubric: the items that applied, in the rubric's order. "
        "Empty until the review policy shows both the score and the verdict.",
    )
    rubric_unrecorded = serializers.BooleanField(
        required=False, default=False,
        help_text="True for a rubric grade given before the items that applied were recorded with it, "
        "when they cannot be read any more (``rubric`` is then empty). False until the review policy "
        "shows both the score and the verdict.",
    )


class SubmissionSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    url = serializers.SerializerMethodField()
    exercise_id = serializers.IntegerField(source="variant.assignment_item_id", allow_null=True)
    part = serializers.CharField()
    attempt = serializers.IntegerField()
    answer = serializers.JSONField(source="raw_answer")
    status = serializers.ChoiceField(choices=SubmissionStatus.choices)
    finished = serializers.BooleanField(source="is_finished")
    score = serializers.FloatField(allow_null=True)
    awarded = serializers.FloatField(allow_null=True, help_text="After attempt and late penalties.")
    correct = serializers.BooleanField(allow_null=True)
    is_late = serializers.BooleanField()
    misconception = serializers.CharField(allow_blank=True)
    feedback = FeedbackSerializer()
    created_at = serializers.DateTimeField()
    graded_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, submission) -> str:
        return reverse("api:submission", args=[submission.pk])

    def to_representation(self, submission):
        """Grade fields the review policy hides (context "visibility") read null/empty."""
        data = super().to_representation(submission)
        visibility = self.context.get("visibility")
        if visibility is None or visibility.everything:
            return data
        outcome = submission_outcome_for_student(submission, visibility)
        data.update(
            score=outcome["score"], awarded=outcome["awarded"], correct=outcome["correct"],
            misconception=outcome["misconception"],
            feedback=FeedbackSerializer(outcome["feedback"]).data,
        )
        return data


class PartSerializer(serializers.Serializer):
    key = serializers.CharField()
    type = serializers.CharField(source="answer_type")
    prompt_html = HtmlField(source="prompt")
    points = serializers.FloatField(
        allow_null=True,
        help_text="What the part is worth in the assignment, as the exercise page labels it and the "
        "gradebook counts it: the exercise's points split over its parts in proportion to their "
        "weights (a 2-point exercise of three equal parts: 0.666…, shown as 2/3 point). Full "
        "precision; the parts' points add up to the exercise's.",
    )
    weight = serializers.FloatField(
        source="spec.points",
        help_text="The part's weight in its exercise (the `points` of the exercise file): only the "
        "ratio of the weights counts; `points` is what it makes the part worth.",
    )
    shape = serializers.ListField(child=serializers.IntegerField(), allow_null=True,
                                  help_text="[rows, columns] of a grid answer.")
    choices = serializers.JSONField()
    multiple = serializers.BooleanField()
    attempts_used = serializers.IntegerField(source="progress.attempts_used")
    attempts_left = serializers.IntegerField(allow_null=True)
    solved = serializers.BooleanField(allow_null=True, help_text="null while the review policy hides correctness.")
    solved_on_earlier_version = serializers.SerializerMethodField(
        help_text="Solved on your copy of the version this exercise had before your instructor "
        "switched it: that answer counts, the part is solved and finished here with no attempt used, "
        "and an answer to it is refused (409, problem type `urn:attnquiz:problem:solved-earlier`). "
        "False while the review policy hides correctness.",
    )
    finished = serializers.BooleanField()
    hints_html = serializers.ListField(child=HtmlField(), source="hints")
    solution_html = HtmlField(source="solution", allow_null=True)
    submit_url = serializers.SerializerMethodField()

    def get_submit_url(self, part) -> str:
        return reverse("api:submit", args=[self.context["item"].pk, part["key"]])

    def get_solved_on_earlier_version(self, part) -> bool:
        return part["solved_earlier"] is not None


class FigureSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="\"heatmap\": a matrix, one coloured cell per entry.")
    title = serializers.CharField(allow_blank=True)
    rows = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="The matrix, row by row, rounded to `decimals` as the page prints it.",
    )
    row_labels = serializers.ListField(child=serializers.CharField(), help_text="[] when the rows are unlabelled.")
    col_labels = serializers.ListField(child=serializers.CharField(), help_text="[] when the columns are unlabelled.")
    decimals = serializers.IntegerField()
    range = serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2,
        help_text="[low, high]: the numbers drawn lightest and darkest.",
    )


class ExerciseSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="item.pk")
    variant_id = serializers.IntegerField(source="variant.pk")
    exercise = serializers.CharField(source="variant.exercise_version.exercise.slug")
    version = serializers.IntegerField(source="variant.exercise_version.number")
    title = serializers.CharField()
    prompt_html = HtmlField(source="prompt")
    figures = FigureSerializer(many=True, help_text="Shown after the prompt, in order.")
    inputs = serializers.DictField(
        child=serializers.JSONField(), help_text="Your own randomised matrices and numbers."
    )
    parts = PartSerializer(many=True)
    takes_answers = serializers.BooleanField(
        help_text="Whether the assignment takes your answers now. False once it closed for you, your time "
        "ran out or your exam attempt ended: then no part has attempts left and every part is finished.",
    )
    refusal = serializers.CharField(
        allow_null=True, help_text="Why it takes no answers now (what a submit would be told); null while it does.",
    )


class SubmitSerializer(serializers.Serializer):
    answer = AnswerField()


class SubmitAcceptedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    url = serializers.CharField(help_text="Poll this for the result (add ?wait=N to wait)." )


class WaitSerializer(serializers.Serializer):
    wait = serializers.FloatField(
        required=False, default=0.0, min_value=0.0,
        help_text="Seconds to wait for the grade (long poll); at most the server's bound.",
    )

    def validate_wait(self, value):
        bound = settings.API_LONG_POLL_MAX_SECONDS
        if value > bound:
            raise serializers.ValidationError(f"Wait at most {bound:g} seconds.")
        return value


# ---------------------------------------------------------------------------
# Teaching staff
# ---------------------------------------------------------------------------


class GradeReleaseCreateSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=["release", "withdraw", "schedule", "unschedule"],
        help_text="Required: release now, withdraw an earlier release, schedule a release for "
        "``at``, or unschedule (cancel) it. An empty body is a 400, never a release.",
    )
    at = serializers.DateTimeField(
        required=False, validators=[validate_storable_date],
        help_text="With schedule only, and required there: when to release (ISO 8601; a time "
        "without an offset is read in the course's time zone). Must be in the future.",
    )

    def validate(self, data):
        if data["action"] == "schedule" and "at" not in data:
            raise serializers.ValidationError({"at": "Say when to release: schedule needs at."})
        if data["action"] != "schedule" and "at" in data:
            raise serializers.ValidationError({"at": "Only schedule takes a time; leave at out."})
        return data


class ReleasePreviewSerializer(serializers.Serializer):
    """What a release would do now: where the students are and what it shows them."""

    is_exam = serializers.BooleanField()
    students = serializers.IntegerField()
    not_started = serializers.IntegerField(help_text="They see the release once their own attempt ends.")
    working = serializers.IntegerField(help_text="Still in their attempt: they see it once it ends.")
    ended = serializers.IntegerField(help_text="Finished or timed out: they see it at once.")
    is_open = serializers.BooleanField(help_text="The exam has not closed for every student yet.")
    closes_at = serializers.DateTimeField(allow_null=True)
    later_closes = serializers.IntegerField(help_text="Students whose accommodation closes later.")
    shows = serializers.ListField(child=serializers.CharField(), help_text="What the release shows.")


class GradeReleaseSerializer(serializers.Serializer):
    assignment = serializers.CharField(source="slug")
    kind = serializers.CharField(help_text="homework or exam.")
    grades_released_at = serializers.DateTimeField(
        allow_null=True, help_text="null once withdrawn."
    )
    grades_release_scheduled_at = serializers.DateTimeField(
        allow_null=True, help_text="When a scheduled release will happen; null when none is scheduled."
    )
    grades_release_scheduled_by = serializers.CharField(
        source="grades_release_scheduled_by.username", allow_null=True, default=None,
        help_text="Who scheduled it.",
    )


class GradebookColumnSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="item.pk")
    exercise = serializers.CharField(source="slug")
    title = serializers.CharField()
    points = serializers.FloatField(source="item.points")
    pool = serializers.CharField(source="item.pool", help_text="The pool's name; empty outside a pool.")


class GradebookRowSerializer(serializers.Serializer):
    username = serializers.CharField(source="student.username")
    first_name = serializers.CharField(source="student.first_name")
    last_name = serializers.CharField(source="student.last_name")
    scores = serializers.ListField(child=serializers.FloatField(allow_null=True),
                                   help_text="Points per exercise, in column order; null if never answered or not given.")
    given = serializers.ListField(child=serializers.BooleanField(),
                                  help_text="Per exercise, in column order: false for a pool's exercise the student was not given.")
    total = serializers.FloatField()
    out_of = serializers.FloatField(help_text="The points of the exercises this student was given.")
    percent = serializers.FloatField()


class GradebookSerializer(serializers.Serializer):
    columns = GradebookColumnSerializer(many=True)
    rows = GradebookRowSerializer(many=True)
    max_points = serializers.FloatField()


class SubmissionExportSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField(source="student.username")
    exercise = serializers.CharField(source="variant.exercise_version.exercise.slug")
    version = serializers.IntegerField(source="variant.exercise_version.number")
    exercise_id = serializers.IntegerField(source="variant.assignment_item_id")
    part = serializers.CharField()
    attempt = serializers.IntegerField()
    answer = serializers.JSONField(source="raw_answer")
    status = serializers.ChoiceField(choices=SubmissionStatus.choices)
    score = serializers.FloatField(allow_null=True)
    awarded = serializers.FloatField(allow_null=True)
    correct = serializers.BooleanField(allow_null=True)
    is_late = serializers.BooleanField()
    misconception = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    graded_at = serializers.DateTimeField(allow_null=True)


class SinceSerializer(serializers.Serializer):
    since = serializers.DateTimeField(
        required=False, help_text="Only submissions created or graded at or after this time (ISO 8601)."
    )


class CountSerializer(serializers.Serializer):
    """A (value, count) pair, as Counter.most_common gives them."""

    value = serializers.CharField()
    count = serializers.IntegerField()

    def to_representation(self, pair):
        value, count = pair
        return {"value": str(value), "count": count}


class VariantDifficultySerializer(serializers.Serializer):
    variant_id = serializers.IntegerField()
    seed = serializers.IntegerField()
    attempts = serializers.IntegerField()
    best = serializers.FloatField()
    solved = serializers.BooleanField()


class PartAnalyticsSerializer(serializers.Serializer):
    key = serializers.CharField()
    type = serializers.CharField()
    points = serializers.FloatField()
    attempts = serializers.IntegerField()
    students = serializers.IntegerField()
    mean_score = serializers.FloatField(allow_null=True)
    facility = serializers.FloatField(allow_null=True)
    discrimination = serializers.FloatField(allow_null=True)
    common_wrong = CountSerializer(many=True, help_text="Most common wrong answers.")
    misconceptions = CountSerializer(many=True)
    variants = VariantDifficultySerializer(many=True, help_text="Hardest variants first.")


class ExerciseAnalyticsSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="info.item.pk")
    exercise = serializers.CharField(source="info.slug")
    title = serializers.CharField(source="info.title")
    parts = PartAnalyticsSerializer(many=True)


class AnalyticsSerializer(serializers.Serializer):
    students = serializers.IntegerField()
    exercises = ExerciseAnalyticsSerializer(many=True)


class RegradeCreateSerializer(serializers.Serializer):
    allow_lower = serializers.BooleanField(default=False, help_text="Let a regrade lower a score.")
    exercises = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, default=list, max_length=200,
        help_text="Exercise ids of the assignment; empty means all.",
    )
    parts = serializers.ListField(
        child=serializers.SlugField(max_length=64), required=False, default=list, max_length=100,
        help_text="Part keys; empty means all.",
    )


class RegradeChangeSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    outcome = serializers.CharField()
    old_score = serializers.FloatField(allow_null=True)
    new_score = serializers.FloatField(allow_null=True)
    old_awarded = serializers.FloatField(allow_null=True)
    new_awarded = serializers.FloatField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class RegradeJobSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    url = serializers.SerializerMethodField()
    assignment = serializers.CharField(source="assignment.slug")
    dry_run = serializers.BooleanField()
    allow_lower = serializers.BooleanField()
    exercises = serializers.ListField(child=serializers.IntegerField(), source="item_ids")
    parts = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=RegradeStatus.choices)
    finished = serializers.BooleanField(source="is_finished")
    total = serializers.IntegerField()
    processed = serializers.IntegerField()
    percent = serializers.IntegerField()
    changed = serializers.IntegerField()
    held = serializers.IntegerField()
    errors = serializers.IntegerField()
    message = serializers.CharField(allow_blank=True)
    preview_of = serializers.IntegerField(source="preview_of_id", allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    changes = serializers.SerializerMethodField()

    def get_url(self, job) -> str:
        return reverse("api:regrade", args=[job.assignment.course.slug, job.pk])

    @extend_schema_field(RegradeChangeSerializer(many=True))
    def get_changes(self, job):
        return RegradeChangeSerializer(job.changes.order_by("submission_id")[:500], many=True).data


class RosterEntrySerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    first_name = serializers.CharField(source="user.first_name")
    last_name = serializers.CharField(source="user.last_name")
    email = serializers.CharField(source="user.email", allow_blank=True)
    role = serializers.ChoiceField(choices=Role.choices)
    status = serializers.ChoiceField(choices=EnrolmentStatus.choices, help_text="A dropped student keeps their work.")
    student_id = serializers.CharField(allow_blank=True)
    enrolled_at = serializers.DateTimeField(source="created_at")


class RosterRowSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, required=False, allow_blank=True, validators=[_refuse_unencodable])
    email = serializers.CharField(max_length=254, required=False, allow_blank=True, validators=[_refuse_unencodable])
    name = serializers.CharField(max_length=300, required=False, allow_blank=True, validators=[_refuse_unencodable])
    first_name = serializers.CharField(max_length=150, required=False, allow_blank=True, validators=[_refuse_unencodable])
    last_name = serializers.CharField(max_length=150, required=False, allow_blank=True, validators=[_refuse_unencodable])
    student_id = serializers.CharField(max_length=64, required=False, allow_blank=True, validators=[_refuse_unencodable])
    role = serializers.CharField(max_length=30, required=False, allow_blank=True, help_text="student (default), ta or instructor")


class RosterImportSerializer(serializers.Serializer):
    """Either ``csv`` (the roster page's format: a header line naming the columns) or ``rows``."""

    csv = serializers.CharField(
        required=False, max_length=MAX_ROSTER_BYTES, trim_whitespace=False, validators=[_refuse_unencodable]
    )
    rows = RosterRowSerializer(many=True, required=False, max_length=MAX_ROSTER_ROWS)
    dry_run = serializers.BooleanField(default=True, help_text="Report what would change, change nothing.")

    def validate(self, data):
        if ("csv" in data) == ("rows" in data):
            raise serializers.ValidationError("Send either csv or rows.")
        return data


class RosterLineSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    who = serializers.CharField(allow_blank=True)
    action = serializers.ChoiceField(choices=ROSTER_ACTIONS)
    detail = serializers.CharField(allow_blank=True)


class RosterReportSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    changes = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())
    lines = RosterLineSerializer(many=True)


# ---------------------------------------------------------------------------
# Exercise banks
# ---------------------------------------------------------------------------


class SourceSerializer(serializers.Serializer):
    source = serializers.CharField(
        max_length=MAX_SOURCE_BYTES, trim_whitespace=False, help_text="The exercise file (YAML).",
        validators=[_refuse_unencodable],
    )


class SpecIssueSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True)
    path = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class ValidationResultSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    slug = serializers.CharField(allow_null=True)
    title = serializers.CharField(allow_null=True)
    content_hash = serializers.CharField(help_text="SHA-256 of the source, as versions store it.")
    issues = SpecIssueSerializer(many=True)


class VersionSerializer(serializers.Serializer):
    exercise = serializers.CharField(source="exercise.slug")
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=VersionStatus.choices)
    title = serializers.CharField()
    content_hash = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField(allow_null=True)


class VersionDetailSerializer(VersionSerializer):
    source = serializers.CharField()


class ExerciseRowSerializer(serializers.Serializer):
    slug = serializers.CharField(source="exercise.slug")
    title = serializers.CharField(source="exercise.title")
    owned = serializers.BooleanField(help_text="Owned by this course (editable here).")
    latest = VersionSerializer()


class PushResultSerializer(VersionSerializer):
    changed = serializers.BooleanField(help_text="False when the latest version already had this source.")


class TransitionSerializer(serializers.Serializer):
    to_status = serializers.ChoiceField(choices=VersionStatus.choices)
    message = serializers.CharField(
        max_length=2000, required=False, default="", allow_blank=True, validators=[_refuse_unencodable]
    )


class CourseGradebookColumnSerializer(serializers.Serializer):
    assignment = serializers.SlugField(source="assignment.slug")
    title = serializers.CharField(source="assignment.title")
    kind = serializers.CharField(source="assignment.kind")
    max_points = serializers.FloatField()
    category_id = serializers.IntegerField(allow_null=True)


class CourseGradebookCategorySerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="null for the implicit category.")
    name = serializers.CharField()
    weight = serializers.FloatField(help_text="Percent of the course total.")
    drop_lowest = serializers.IntegerField()


class CourseGradebookCellSerializer(serializers.Serializer):
    earned = serializers.FloatField(allow_null=True, help_text="Points earned; null when not attempted (not a 0).")
    out_of = serializers.FloatField()
    accommodated = serializers.BooleanField()
    dropped = serializers.BooleanField(help_text="Dropped as one of the category's lowest results.")


class CourseGradebookRowSerializer(serializers.Serializer):
    username = serializers.CharField(source="student.username")
    student_id = serializers.CharField(source="enrolment.student_id")
    email = serializers.CharField(source="student.email")
    first_name = serializers.CharField(source="student.first_name")
    last_name = serializers.CharField(source="student.last_name")
    cells = CourseGradebookCellSerializer(many=True, help_text="One per assignment, in column order.")
    category_percents = serializers.ListField(child=serializers.FloatField(allow_null=True))
    total = serializers.FloatField(allow_null=True, help_text="Course percent; null while nothing counts.")


class CourseGradebookSerializer(serializers.Serializer):
    columns = CourseGradebookColumnSerializer(many=True)
    categories = CourseGradebookCategorySerializer(many=True)
    rows = CourseGradebookRowSerializer(many=True)
class AttemptActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["start", "finish"], help_text="Required: start or finish.")


class AttemptSerializer(serializers.Serializer):
    """Your attempt at an exam, as its window says now."""

    state = serializers.CharField(help_text="not_started, running, finished or timed_out.")
    started_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True, help_text="When it ended (by you or the clock).")
    ended_by = serializers.CharField(help_text="you, time, close, instructor; empty while it runs.")
    deadline = serializers.DateTimeField(allow_null=True, help_text="null once ended, before Start, without a limit.")
    seconds_left = serializers.IntegerField(allow_null=True)
    time_limit_seconds = serializers.IntegerField(source="limits.time_limit_seconds", allow_null=True)


# ---------------------------------------------------------------------------
# Rubric grading and regrade requests
# ---------------------------------------------------------------------------


class RubricItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    text = serializers.CharField()
    points = serializers.FloatField(help_text="Earned when ticked; negative for a deduction.")
    position = serializers.IntegerField()


class RubricSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    exercise = serializers.CharField(source="exercise.slug", help_text="The exercise the rubric grades, in every assignment.")
    part = serializers.CharField()
    max_points = serializers.SerializerMethodField(help_text="The positive points: a score is ticked points / these, within 0..1.")
    criteria = RubricItemSerializer(many=True, source="items.all")

    def get_max_points(self, rubric) -> float:
        return sum(item.points for item in rubric.items.all() if item.points > 0)


class RubricItemInputSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=300, validators=[_refuse_unencodable])
    points = serializers.FloatField(min_value=-100, max_value=100)


CONFIRMED_HELP = (
    "The ``confirmation`` of the 409 ``confirmation_needed`` this change answered: it makes the change "
    "while the numbers it said still hold."
)


class RubricItemAddSerializer(RubricItemInputSerializer):
    confirmed = serializers.CharField(
        max_length=200, required=False, allow_blank=True, allow_null=True, help_text=CONFIRMED_HELP
    )


class RubricChangeConfirmQuerySerializer(serializers.Serializer):
    confirmed = serializers.CharField(
        max_length=200, required=False, allow_blank=True, allow_null=True, help_text=CONFIRMED_HELP
    )


class RubricCreateSerializer(serializers.Serializer):
    criteria = RubricItemInputSerializer(
        many=True, required=False, max_length=40,
        help_text="The rubric's items; leave out to start from the criteria the exercise's author wrote.",
    )


class RubricItemUpdateSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=300, required=False, validators=[_refuse_unencodable])
    points = serializers.FloatField(
        min_value=-100, max_value=100, required=False,
        help_text="Answers graded with the rubric are scored again with them (asked first: 409 confirmation_needed).",
    )
    confirmed = serializers.CharField(
        max_length=200, required=False, allow_blank=True, allow_null=True, help_text=CONFIRMED_HELP
    )

    def validate(self, data):
        if "text" not in data and "points" not in data:
            raise serializers.ValidationError("Send text, points or both.")
        return data


class RubricApplySerializer(serializers.Serializer):
    submissions = serializers.ListField(
        child=serializers.IntegerField(min_value=1), min_length=1, max_length=1000,
        help_text="Ids of the students' newest answers to this part (see answers/).",
    )
    criteria = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, default=list, max_length=40,
        help_text="Ids of this part's rubric items.",
    )
    replace = serializers.BooleanField(
        default=False,
        help_text="false: tick these items on top of the ones each answer had; true: these are the only ones ticked.",
    )
    comment = serializers.CharField(
        max_length=5000, required=False, allow_blank=True, validators=[_refuse_unencodable],
        help_text="The comment each student reads; left out, each answer keeps its own.",
    )

    def validate(self, data):
        if not data["criteria"] and not data["replace"]:
            raise serializers.ValidationError({"criteria": ["Choose at least one rubric item."]})
        return data


class QuestionAnswerSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1, 2, … in the order the answers came in.")
    submission_id = serializers.IntegerField(source="submission.pk")
    username = serializers.CharField(source="submission.student.username")
    answer = serializers.JSONField(source="submission.raw_answer")
    status = serializers.ChoiceField(choices=SubmissionStatus.choices, source="submission.status",
                                     help_text="manual while it waits for a grade.")
    score = serializers.FloatField(source="submission.score", allow_null=True)
    awarded = serializers.FloatField(source="submission.awarded", allow_null=True, help_text="After penalties.")
    criteria = serializers.ListField(child=serializers.IntegerField(), source="ticked",
                                     help_text="Rubric items ticked by the newest grade.")
    created_at = serializers.DateTimeField(source="submission.created_at")


class RegradeRequestSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    submission_id = serializers.IntegerField()
    username = serializers.CharField(source="student.username")
    assignment = serializers.CharField(source="submission.variant.assignment_item.assignment.slug", allow_null=True, default=None)
    exercise = serializers.CharField(source="submission.variant.exercise_version.exercise.slug")
    part = serializers.CharField(source="submission.part")
    message = serializers.CharField()
    status = serializers.ChoiceField(choices=RegradeRequestStatus.choices)
    reply = serializers.CharField(allow_blank=True)
    replied_by = serializers.CharField(source="replied_by.username", allow_null=True, default=None)
    score_before = serializers.FloatField(allow_null=True, help_text="The score awarded when the student asked.")
    score_after = serializers.FloatField(allow_null=True, help_text="The score awarded when the reply was sent.")
    outcome = serializers.ChoiceField(
        choices=RegradeOutcome.choices, read_only=True,
        help_text="waiting for a reply; answered with the grade standing; answered with the grade changed. "
                  "To a student whose score is hidden: answered, changed or not.",
    )
    created_at = serializers.DateTimeField()
    replied_at = serializers.DateTimeField(allow_null=True)


class StudentRegradeRequestSerializer(RegradeRequestSerializer):
    """A request as its student reads it: the scores, and whether the reply changed the
    grade, only where the review policy shows the score (``context["visibility"]``); else
    an answered request's outcome is "answered", changed or not."""

    def to_representation(self, instance):
        data = super().to_representation(instance)
        visibility = self.context["visibility"]
        data["outcome"] = regrade_outcome_for_student(request=instance, visibility=visibility)[0]
        if not visibility.score:
            data["score_before"] = data["score_after"] = None
        return data


class RegradeRequestQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["open", "answered", "all"], default="open", required=False)


class RegradeRequestCreateSerializer(serializers.Serializer):
    message = serializers.CharField(max_length=2000, validators=[_refuse_unencodable],
                                    help_text="What should be looked at again.")


class RegradeReplySerializer(serializers.Serializer):
    reply = serializers.CharField(max_length=5000, validators=[_refuse_unencodable],
                                  help_text="The student reads it; replying answers (closes) the request.")
    score = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="A checked answer's new score (a fraction), set by hand with the reply; leave out to keep it.",
    )
