"""Courses, who is enrolled in them with which role, and the assignments they run."""

from django.conf import settings
from django.db import models


class Course(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    term = models.CharField(max_length=100, blank=True, help_text="e.g. Autumn 2026")
    time_zone = models.CharField(
        max_length=64, default="UTC", help_text="Dates of this course are shown in this zone."
    )
    description = models.TextField(blank=True)
    # Archived courses are read-only (no answers, no edits, no joining) but stay exportable.
    archived_at = models.DateTimeField(null=True, blank=True)
    # The join code doubles as the invite link (/join/<code>/); None until one is made.
    join_code = models.CharField(max_length=16, unique=True, null=True, blank=True)
    join_open = models.BooleanField(default=False)
    join_expires_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    copied_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="copies"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title"]
        permissions = [("create_course", "May create courses")]

    def __str__(self):
        return f"{self.title} ({self.term})" if self.term else self.title

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class Role(models.TextChoices):
    INSTRUCTOR = "instructor", "Instructor"
    TEACHING_ASSISTANT = "ta", "Teaching assistant"
    STUDENT = "student", "Student"


class EnrolmentStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    # A dropped student loses access and leaves the gradebook (unless asked for), but
    # every submission stays; re-enrolling brings it all back.
    DROPPED = "dropped", "Dropped"


class EnrolmentSource(models.TextChoices):
    MANUAL = "manual", "Added by hand"
    JOIN_CODE = "join_code", "Join code or invite link"
    ROSTER = "roster", "Roster import"
    LMS = "lms", "LMS (LTI)"


class Enrolment(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="enrolments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrolments"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STUDENT)
    status = models.CharField(
        max_length=10, choices=EnrolmentStatus.choices, default=EnrolmentStatus.ACTIVE
    )
    source = models.CharField(
        max_length=10, choices=EnrolmentSource.choices, default=EnrolmentSource.MANUAL
    )
    student_id = models.CharField(max_length=64, blank=True, help_text="The institution's id.")
    dropped_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="one_enrolment_per_course")
        ]
        indexes = [models.Index(fields=["course", "status", "role"], name="enrolment_course_status")]

    def __str__(self):
        dropped = " (dropped)" if self.status == EnrolmentStatus.DROPPED else ""
        return f"{self.user} in {self.course} as {self.get_role_display()}{dropped}"

    @property
    def is_active(self) -> bool:
        return self.status == EnrolmentStatus.ACTIVE


class SolutionPolicy(models.TextChoices):
    NEVER = "never", "Never"
    AFTER_SOLVED = "after_solved", "Once the part is solved or attempts are used up"
    AFTER_DUE = "after_due", "After the due date"
    ALWAYS = "always", "Always"


class AssignmentKind(models.TextChoices):
    HOMEWORK = "homework", "Homework"
    # An exam collects answers and grades them in the background, but shows the student
    # only "answer saved" until its review policy lets more through.
    EXAM = "exam", "Quiz or exam"


class ReleaseMoment(models.TextChoices):
    """When one kind of feedback becomes visible to the student (each kind on its own), as
    Moodle's review options name them. Every moment after "during" waits, in an exam, for
    the student's own attempt to end (exams.window.moment_reached)."""

    DURING = "during", "During the attempt"
    AFTER_FINISH = "after_finish", "Immediately after the student's attempt ends"
    LATER = "later", "Later, from 2 minutes after the attempt ends"
    AFTER_CLOSE = "after_close", "After the exam closes for the student"
    ON_RELEASE = "on_release", "When released (to attempts that have ended)"
    NEVER = "never", "Never"


class SessionPolicy(models.TextChoices):
    ANY = "any", "Any number of browser sessions"
    REFUSE_SECOND = "refuse_second", "One session: a second one is refused"
    SECOND_TAKES_OVER = "second_takes_over", "One session: a second one ends the first"


class Assignment(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    opens_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    closes_at = models.DateTimeField(null=True, blank=True)
    attempts_per_part = models.PositiveIntegerField(default=3)
    penalty_per_extra_attempt = models.FloatField(
        default=0.0, help_text="Fraction of the part's score lost per attempt after the first."
    )
    late_penalty = models.FloatField(
        default=0.0, help_text="Fraction of the score lost when submitted after the due date."
    )
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    solution_policy = models.CharField(
        max_length=20, choices=SolutionPolicy.choices, default=SolutionPolicy.AFTER_SOLVED
    )
    is_published = models.BooleanField(default=True)
    kind = models.CharField(
        max_length=10, choices=AssignmentKind.choices, default=AssignmentKind.HOMEWORK
    )
    # The review policy: what the student sees of a graded answer, and from when.
    show_correctness = models.CharField(
        max_length=16, choices=ReleaseMoment.choices, default=ReleaseMoment.DURING
    )
    show_score = models.CharField(
        max_length=16, choices=ReleaseMoment.choices, default=ReleaseMoment.DURING
    )
    show_misconception = models.CharField(
        max_length=16, choices=ReleaseMoment.choices, default=ReleaseMoment.DURING
    )
    show_hints = models.CharField(
        max_length=16, choices=ReleaseMoment.choices, default=ReleaseMoment.DURING
    )
    show_heatmap = models.CharField(
        max_length=16, choices=ReleaseMoment.choices, default=ReleaseMoment.DURING
    )
    show_solutions = models.CharField(
        max_length=16,
        choices=ReleaseMoment.choices,
        default=ReleaseMoment.DURING,
        help_text="Also bounded by the solution policy.",
    )
    grades_released_at = models.DateTimeField(null=True, blank=True)
    # A release set for a time (exams.services.grades_release_schedule); the periodic
    # task releases at it, through the same service as the button.
    grades_release_scheduled_at = models.DateTimeField(null=True, blank=True)
    grades_release_scheduled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Exam access controls, checked on every request of an attempt.
    # Stored hashed (exams.access.access_code_hash), never in plain text.
    access_code = models.CharField(max_length=128, blank=True)
    allowed_networks = models.TextField(
        blank=True, help_text="Allowed IP ranges in CIDR notation, one per line; empty allows all."
    )
    session_policy = models.CharField(
        max_length=20, choices=SessionPolicy.choices, default=SessionPolicy.ANY
    )
    shuffle_items = models.BooleanField(
        default=False, help_text="Each student sees the exercises in their own order."
    )
    has_lti_link = models.BooleanField(
        default=False,
        editable=False,
        help_text="Kept by the LTI app: set once an LMS link opens this assignment. While "
        "False, a grade does no LMS passback work at all.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["due_at", "title"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="assignment_slug_per_course")
        ]

    def __str__(self):
        return f"{self.course.slug}/{self.slug}"


class AssignmentItem(models.Model):
    """One exercise (at a fixed version) placed in an assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    exercise_version = models.ForeignKey(
        "exercises.ExerciseVersion", on_delete=models.PROTECT, related_name="assignment_items"
    )
    position = models.PositiveIntegerField(default=0)
    points = models.FloatField(default=1.0)
    # Items of one assignment that share a non-empty pool name form one slot: each
    # student is given one of them (drawn once, see PoolDraw).
    pool = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "exercise_version"], name="exercise_once_per_assignment"
            )
        ]

    def __str__(self):
        return f"{self.assignment} #{self.position}: {self.exercise_version}"


class PoolDraw(models.Model):
    """Which item of a pool one student was given, fixed at the first draw so a reload,
    a regrade or a later change to the pool never changes what they saw."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="pool_draws")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pool_draws"
    )
    pool = models.CharField(max_length=64)
    item = models.ForeignKey(AssignmentItem, on_delete=models.CASCADE, related_name="draws")
    drawn_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "student", "pool"], name="one_draw_per_pool_and_student"
            )
        ]

    def __str__(self):
        return f"{self.student} drew {self.item} from pool {self.pool!r}"


class Invitation(models.Model):
    """The invitation e-mail sent to a person of a course: a link to choose their password
    (Django's password-reset token, so it expires after PASSWORD_RESET_TIMEOUT and works
    once). Resending refreshes it; accepting (setting the password) is recorded."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations")
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sent_at = models.DateTimeField()
    times_sent = models.PositiveIntegerField(default=1)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="one_invitation_per_course_user")
        ]

    def __str__(self):
        return f"invitation of {self.user} to {self.course}"


class EnrolmentInvitation(models.Model):
    """A pending invitation of an EXISTING account into a course, made when staff add it by
    hand or by a roster import: no enrolment exists until the person accepts it on their
    dashboard (then they are enrolled with ``role``); declining deletes it. Until then the
    course gives them nothing, and the course's pages show them only by ``identifier``, what
    the instructor typed (a username, or an e-mail address), never the account's name or
    e-mail: anyone can type anyone's username, so being typed is no consent to be seen.

    Not to be confused with ``Invitation``: the e-mail that lets a new account, made by
    staff, choose its first password."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="enrolment_invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrolment_invitations"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STUDENT)
    source = models.CharField(
        max_length=10, choices=EnrolmentSource.choices, default=EnrolmentSource.MANUAL
    )
    student_id = models.CharField(max_length=64, blank=True)
    identifier = models.CharField(max_length=254, help_text="What the inviter typed: a username or an e-mail.")
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    emailed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="one_enrolment_invitation_per_course")
        ]

    def __str__(self):
        return f"invitation of {self.identifier} to {self.course} as {self.get_role_display()}"
