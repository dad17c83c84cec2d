"""Writes for authoring: create, edit, import and move exercise versions through review.

The review workflow is a small state machine::

    draft ──submit──> in review ──approve──> published ──retire──> retired
      ^                  │
      └────withdraw──────┘   (the author withdraws, or a reviewer asks for changes)

A published (or retired) version never changes: saving an edit of one starts version
n + 1 as a draft. Approval must come from an instructor other than the version's
author, unless the course asks for no second reviewer (by default: a course with one
instructor), where the author publishes a draft or a version in review directly and the
history records it as published by its author. Publishing checks the stored source again,
in the sandbox, with the rules of today. Every change is recorded as an ``ExerciseEvent``.
"""

from __future__ import annotations

import difflib
import hashlib
from contextlib import contextmanager
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from courses.models import Course
from courses.services import require_course_writable
from exercises import engine
from exercises.engine.source import read_yaml
from exercises.models import Exercise, ExerciseVersion, VersionStatus

from .models import (
    CourseReviewSetting,
    EventKind,
    ExerciseEvent,
    ExerciseOwner,
    SecondReviewer,
    SourceCheckRun,
    VariantTestRun,
)
from .selectors import CHECK_LIMITS, exercise_is_owned, second_reviewer_required, versions_visible

MAX_SOURCE_BYTES = 200_000

TRANSITIONS: dict[tuple[str, str], str] = {
    (VersionStatus.DRAFT, VersionStatus.IN_REVIEW): EventKind.SUBMITTED,
    # Only where the course asks for no second reviewer (see _publishing_kind).
    (VersionStatus.DRAFT, VersionStatus.PUBLISHED): EventKind.SELF_PUBLISHED,
    (VersionStatus.IN_REVIEW, VersionStatus.DRAFT): EventKind.WITHDRAWN,
    (VersionStatus.IN_REVIEW, VersionStatus.PUBLISHED): EventKind.APPROVED,
    (VersionStatus.PUBLISHED, VersionStatus.RETIRED): EventKind.RETIRED,
}


# Shown wherever a version can be published (the version page's Publish and Approve): the
# library is shared by design, and the author should know before sharing.
PUBLISH_WARNING = (
    "Publishing shares this version with every course: the instructors and teaching assistants "
    "of all courses can read its source and solutions, preview it and add it to their "
    "assignments. A published version cannot be changed or unpublished; retiring it later "
    "keeps it readable to them."
)
PUBLISHED_NOTICE = "Version {number} is now published and shared with the staff of every course."
NOT_PUBLISHABLE = (
    "Version {number} was not published: its source does not pass today's checks for exercise "
    "files (they may have become stricter since it was saved). Edit it, fix what is listed and "
    "save it again, then publish. {issues}"
)


class AuthoringRefused(Exception):
    """The request breaks a workflow rule; ``message`` says which, in plain words."""

    def __init__(self, message: str, *, code: str = "refused"):
        super().__init__(message)
        self.message = message
        self.code = code


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def source_diff(old: str, new: str, *, old_label: str, new_label: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_label,
            tofile=new_label,
        )
    )


def _slug_issue(source: str, message: str) -> engine.SpecError:
    try:
        _, source_map = read_yaml(source)
        line = source_map.line(("slug",))
    except engine.SpecError:
        line = None
    return engine.SpecError([engine.SpecIssue(line, "slug", message)])


# Slugs are one namespace shared by every course and the built-in bank (``Exercise.slug`` is
# unique). Refusing a slug must tell a course's staff nothing they cannot already see: an
# exercise of their own course or of the shared library is named; a slug held by another
# course's unpublished exercise gets the same words as any other slug that cannot be used.
SLUG_TAKEN_HERE = "your course already has an exercise called '{slug}'; edit it, or choose another slug"
SLUG_TAKEN_LIBRARY = "'{slug}' is an exercise of the shared library; choose another slug"
SLUG_UNAVAILABLE = (
    "the slug '{slug}' cannot be used (slugs are shared by all courses and the built-in bank); "
    "choose another slug"
)


def _slug_refusal(*, course: Course, slug: str, source: str) -> engine.SpecError:
    """Why ``slug``, already in use, cannot name a new exercise of ``course`` (on the slug's line)."""
    exercise = Exercise.objects.select_related("owner").filter(slug=slug).first()
    if exercise is not None and exercise_is_owned(exercise=exercise, course=course):
        return _slug_issue(source, SLUG_TAKEN_HERE.format(slug=slug))
    if exercise is not None and versions_visible(exercise=exercise, course=course).exists():
        return _slug_issue(source, SLUG_TAKEN_LIBRARY.format(slug=slug))
    return _slug_issue(source, SLUG_UNAVAILABLE.format(slug=slug))


def working_spec(source: str) -> engine.ExerciseSpec:
    """The spec of ``source`` if it can be read *and* produces working variants.

    The check runs in the sandbox under a time limit first (see
    ``authoring.selectors.source_check``), so reading it here afterwards is bounded.
    Raises SpecError: line-precise issues, or the seeds that do not work and why, each
    cause once with its line.
    """
    from .selectors import source_check, source_check_issues

    checked = source_check(source=source)
    issues = source_check_issues(checked)
    if issues:
        raise engine.SpecError(issues)
    return engine.load_spec(source)


def _working_spec_tried(*, source: str, actor, action: str) -> engine.ExerciseSpec:
    """``working_spec`` holding the actor's one place for running a source in the sandbox
    (``source_check_place``; AuthoringRefused, code ``busy``, while another of theirs runs).
    Call outside any transaction: the place must be seen by the person's other requests."""
    with source_check_place(user=actor, action=action):
        return working_spec(source)


def _require_owner_writable(version: ExerciseVersion) -> None:
    """An exercise owned by an archived course is read-only with it (built-in ones have no owner)."""
    owner = ExerciseOwner.objects.select_related("course").filter(exercise_id=version.exercise_id).first()
    if owner is not None:
        require_course_writable(course=owner.course)


def _event(*, version: ExerciseVersion, actor, kind: str, **fields) -> ExerciseEvent:
    return ExerciseEvent.objects.create(
        exercise=version.exercise,
        version=version,
        version_number=version.number,
        actor=actor,
        kind=kind,
        **fields,
    )


def exercise_create(
    *, course: Course, actor, source: str, kind: str = EventKind.CREATED
) -> ExerciseVersion:
    """A new exercise owned by ``course``, as draft version 1.

    Raises SpecError (with lines) for an invalid source, one that cannot produce a
    working variant, or a slug already taken; AuthoringRefused (code ``busy``) while
    another run of a source of the actor's is under way (the source is tried in the
    sandbox first, outside the transaction that stores it).
    """
    require_course_writable(course=course)
    spec = _working_spec_tried(source=source, actor=actor, action="save")
    return _exercise_store(course=course, actor=actor, source=source, spec=spec, kind=kind)


@transaction.atomic
def _exercise_store(
    *, course: Course, actor, source: str, spec: engine.ExerciseSpec, kind: str
) -> ExerciseVersion:
    require_course_writable(course=course)
    if Exercise.objects.filter(slug=spec.slug).exists():
        raise _slug_refusal(course=course, slug=spec.slug, source=source)
    try:
        with transaction.atomic():
            exercise = Exercise.objects.create(slug=spec.slug, title=spec.title, created_by=actor)
    except IntegrityError:
        # Another request took the slug after the look-up above (it committed first).
        raise _slug_refusal(course=course, slug=spec.slug, source=source) from None
    ExerciseOwner.objects.create(exercise=exercise, course=course)
    version = ExerciseVersion.objects.create(
        exercise=exercise,
        number=1,
        source=source,
        spec=engine.spec_to_json(spec),
        content_hash=source_hash(source),
        status=VersionStatus.DRAFT,
        created_by=actor,
    )
    _event(version=version, actor=actor, kind=kind, to_status=VersionStatus.DRAFT)
    return version


def version_save(
    *, version: ExerciseVersion, actor, source: str, kind: str = EventKind.EDITED
) -> ExerciseVersion:
    """Store an edit. A draft is changed in place; a published or retired version is left
    untouched and the edit becomes a new draft version n + 1.

    Raises SpecError for an invalid source, AuthoringRefused when the version is in
    review or a newer draft already exists, or (code ``busy``) while another run of a
    source of the actor's is under way (the source is tried in the sandbox first, outside
    the transaction that stores it).
    """
    _require_owner_writable(version)
    spec = _working_spec_tried(source=source, actor=actor, action="save")
    return _version_store(version=version, actor=actor, source=source, spec=spec, kind=kind)


@transaction.atomic
def _version_store(
    *, version: ExerciseVersion, actor, source: str, spec: engine.ExerciseSpec, kind: str
) -> ExerciseVersion:
    version = ExerciseVersion.objects.select_for_update().get(pk=version.pk)
    _require_owner_writable(version)
    exercise = version.exercise
    if spec.slug != exercise.slug:
        raise _slug_issue(
            source, f"the slug of an existing exercise cannot change; keep '{exercise.slug}'"
        )
    if version.status == VersionStatus.IN_REVIEW:
        raise AuthoringRefused(
            f"Version {version.number} is in review and cannot be edited; "
            "return it to draft first."
        )
    if version.status == VersionStatus.DRAFT:
        if source == version.source:
            return version
        diff = source_diff(
            version.source, source, old_label=f"v{version.number}", new_label=f"v{version.number}"
        )
        version.source = source
        version.spec = engine.spec_to_json(spec)
        version.content_hash = source_hash(source)
        version.save(update_fields=["source", "spec", "content_hash"])
        _event(version=version, actor=actor, kind=kind, diff=diff)
        return version
    newer_open = exercise.versions.filter(
        number__gt=version.number, status__in=(VersionStatus.DRAFT, VersionStatus.IN_REVIEW)
    ).order_by("number").first()
    if newer_open is not None:
        raise AuthoringRefused(
            f"Version {newer_open.number} is already open ({newer_open.get_status_display().lower()}); "
            "edit that one instead of starting another."
        )
    number = (exercise.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    new_version = ExerciseVersion.objects.create(
        exercise=exercise,
        number=number,
        source=source,
        spec=engine.spec_to_json(spec),
        content_hash=source_hash(source),
        status=VersionStatus.DRAFT,
        created_by=actor,
    )
    _event(
        version=new_version,
        actor=actor,
        kind=EventKind.NEW_VERSION if kind == EventKind.EDITED else kind,
        to_status=VersionStatus.DRAFT,
        message=f"Started from version {version.number}.",
        diff=source_diff(version.source, source, old_label=f"v{version.number}", new_label=f"v{number}"),
    )
    return new_version


PUBLISHING_KINDS = (EventKind.APPROVED, EventKind.SELF_PUBLISHED)


def version_transition(
    *, version: ExerciseVersion, actor, to_status: str, message: str = ""
) -> ExerciseVersion:
    """Move a version along the review workflow; raises AuthoringRefused otherwise.

    Publishing (an approval, or an author's own where the course allows it) first checks
    the stored source again with the current rules for exercise files, in the sandbox and
    under the limits a save is checked with (``selectors.source_check``), holding the actor's one
    place for it (AuthoringRefused, code ``busy``, while another run of theirs is under
    way): the rules may have become stricter since the version was saved, and reading a
    file runs each reference answer through its checker. Raises SpecError when the source
    no longer passes. Call outside any transaction (the place must be seen by the person's
    other requests, and no lock is held while the sandbox runs).
    """
    current = ExerciseVersion.objects.select_related("exercise").get(pk=version.pk)
    checked_hash = None
    if _transition_kind(version=current, actor=actor, to_status=to_status) in PUBLISHING_KINDS:
        _source_checked_for_publishing(version=current, actor=actor)
        checked_hash = current.content_hash
    return _version_move(
        version=current, actor=actor, to_status=to_status, message=message, checked_hash=checked_hash
    )


def _transition_kind(*, version: ExerciseVersion, actor, to_status: str) -> str:
    """The event a move of ``version`` to ``to_status`` by ``actor`` records, or AuthoringRefused."""
    _require_owner_writable(version)
    kind = TRANSITIONS.get((version.status, to_status))
    if kind is None:
        raise AuthoringRefused(
            f"A {VersionStatus(version.status).label.lower()} version cannot become "
            f"{VersionStatus(to_status).label.lower()}."
        )
    if kind in PUBLISHING_KINDS:
        kind = _publishing_kind(version=version, actor=actor, kind=kind)
    return kind


def _source_checked_for_publishing(*, version: ExerciseVersion, actor) -> None:
    """The version's stored source passes today's checks, run in the sandbox as a save runs
    them; SpecError (with lines) when it does not. Nothing of the source runs in this process."""
    from .selectors import source_check, source_check_issues

    with source_check_place(user=actor, action="publish"):
        checked = source_check(source=version.source)
    issues = source_check_issues(checked)
    if issues:
        raise engine.SpecError(issues)


@transaction.atomic
def _version_move(
    *, version: ExerciseVersion, actor, to_status: str, message: str, checked_hash: str | None
) -> ExerciseVersion:
    """The move itself, with the version locked and every rule decided again. A version is
    published only with the content that was checked (``checked_hash``)."""
    version = ExerciseVersion.objects.select_for_update().select_related("exercise").get(
        pk=version.pk
    )
    from_status = version.status
    kind = _transition_kind(version=version, actor=actor, to_status=to_status)
    if kind in PUBLISHING_KINDS:
        if version.content_hash != checked_hash:
            raise AuthoringRefused(
                f"Version {version.number} changed while it was being checked; publish it again.",
                code="changed",
            )
        version.published_at = timezone.now()
    version.status = to_status
    version.save(update_fields=["status", "published_at"])
    if to_status == VersionStatus.PUBLISHED and version.exercise.title != version.title:
        Exercise.objects.filter(pk=version.exercise_id).update(title=version.title)
    _event(
        version=version,
        actor=actor,
        kind=kind,
        from_status=from_status,
        to_status=to_status,
        message=message.strip(),
    )
    return version


def _owner_course(version: ExerciseVersion) -> Course | None:
    owner = ExerciseOwner.objects.select_related("course").filter(exercise_id=version.exercise_id).first()
    return owner.course if owner else None


def _publishing_kind(*, version: ExerciseVersion, actor, kind: str) -> str:
    """APPROVED when someone other than the author publishes; SELF_PUBLISHED when the
    author does, which only a course asking for no second reviewer allows (the history
    records which). A draft goes straight to published only by SELF_PUBLISHED."""
    by_author = version.created_by_id is not None and version.created_by_id == actor.pk
    if kind == EventKind.APPROVED and not by_author:
        return EventKind.APPROVED
    if second_reviewer_required(course=_owner_course(version)):
        if kind == EventKind.SELF_PUBLISHED:
            raise AuthoringRefused(
                "This course requires a second reviewer: send the version to review first.",
                code="second_reviewer_required",
            )
        raise AuthoringRefused(
            "You wrote this version, so you cannot approve it: another instructor must review it.",
            code="self_approval",
        )
    return EventKind.SELF_PUBLISHED


@transaction.atomic
def course_review_setting_save(*, course: Course, actor, second_reviewer: str):
    if second_reviewer not in SecondReviewer.values:
        raise AuthoringRefused("Choose when a second reviewer is required.")
    setting, _ = CourseReviewSetting.objects.update_or_create(
        course=course, defaults={"second_reviewer": second_reviewer, "updated_by": actor}
    )
    return setting


def version_comment(*, version: ExerciseVersion, actor, message: str) -> ExerciseEvent:
    message = message.strip()
    if not message:
        raise AuthoringRefused("A comment cannot be empty.")
    _require_owner_writable(version)
    return _event(version=version, actor=actor, kind=EventKind.COMMENTED, message=message)


def source_from_upload(data: bytes) -> str:
    """The uploaded file as text, exactly (no newline or whitespace changes)."""
    if len(data) > MAX_SOURCE_BYTES:
        raise AuthoringRefused(
            f"The file is too large ({len(data)} bytes; the limit is {MAX_SOURCE_BYTES})."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuthoringRefused(f"The file is not UTF-8 text (byte {exc.start} is not valid).")


def exercise_import(*, course: Course, actor, data: bytes) -> ExerciseVersion:
    """Import an exercise file: a new exercise, or an edit of one this course owns
    (its latest version: a draft is replaced, a published one gets version n + 1).
    The file is tried in the sandbox once, as ``exercise_create`` does (AuthoringRefused,
    code ``busy``, while another run of a source of the actor's is under way)."""
    require_course_writable(course=course)
    source = source_from_upload(data)
    spec = _working_spec_tried(source=source, actor=actor, action="import")
    return _import_store(course=course, actor=actor, source=source, spec=spec)


@transaction.atomic
def _import_store(*, course: Course, actor, source: str, spec: engine.ExerciseSpec) -> ExerciseVersion:
    exercise = Exercise.objects.select_related("owner").filter(slug=spec.slug).first()
    if exercise is None:
        return _exercise_store(course=course, actor=actor, source=source, spec=spec, kind=EventKind.IMPORTED)
    if not exercise_is_owned(exercise=exercise, course=course):
        raise _slug_refusal(course=course, slug=spec.slug, source=source)
    latest = exercise.versions.order_by("-number").first()
    return _version_store(version=latest, actor=actor, source=source, spec=spec, kind=EventKind.IMPORTED)


# ---------------------------------------------------------------------------
# "Test N variants" and the pre-flight: at most two at once per person
# ---------------------------------------------------------------------------

MAX_VARIANT_TESTS_PER_USER = 2
# Longer than any one test may run (its sandbox's wall-clock limit is 25 s): a row left by
# a process that died stops counting after this.
VARIANT_TEST_LEASE = timedelta(seconds=90)


def variant_test_start(*, user) -> VariantTestRun:
    """Take one of the person's variant-test places, or raise AuthoringRefused (code
    ``busy``). The count is decided with the person's row locked, so two requests at once
    cannot both take the last place."""
    User = get_user_model()
    now = timezone.now()
    with transaction.atomic():
        User._default_manager.select_for_update().filter(pk=user.pk).first()
        running = VariantTestRun.objects.filter(user=user, started_at__gt=now - VARIANT_TEST_LEASE)
        if running.count() >= MAX_VARIANT_TESTS_PER_USER:
            raise AuthoringRefused(
                f"You already have {MAX_VARIANT_TESTS_PER_USER} variant tests (or pre-flights) running. Wait for "
                "one to finish (at most half a minute) and start this one again.",
                code="busy",
            )
        VariantTestRun.objects.filter(user=user, started_at__lte=now - VARIANT_TEST_LEASE).delete()
        return VariantTestRun.objects.create(user=user, started_at=now)


def variant_test_finish(*, run: VariantTestRun) -> None:
    VariantTestRun.objects.filter(pk=run.pk).delete()


# ---------------------------------------------------------------------------
# Running an author's source in the sandbox (Check, Save, Import, Preview, Publish): one at a
# time per person
# ---------------------------------------------------------------------------

# Longer than one run may take (its sandbox stops it after 10 s of wall-clock time,
# selectors.CHECK_LIMITS): a row left by a process that died stops counting after this.
SOURCE_CHECK_LEASE = timedelta(seconds=30)
SOURCE_CHECK_RETRY_SECONDS = 2
# What was not started, by what the request was doing (the editor's check keeps its own words).
SOURCE_RUN_ACTIONS = {
    "save": "this save", "import": "this import", "preview": "this preview", "publish": "this publish",
}


def source_check_start(*, user, action: str = "check") -> SourceCheckRun:
    """Take the person's one place for running an exercise source in the sandbox (the
    editor's check, a save, an import, a preview, a publish), or raise AuthoringRefused (code
    ``busy``) while another run of theirs is under way. Decided by the unique user of
    ``SourceCheckRun``: of two requests at once only one insert succeeds, so both cannot
    run. Call ``source_check_finish`` when the run ends (or use ``source_check_place``),
    outside any transaction, so that the person's other requests see the place taken."""
    now = timezone.now()
    SourceCheckRun.objects.filter(user=user, started_at__lte=now - SOURCE_CHECK_LEASE).delete()
    try:
        with transaction.atomic():
            return SourceCheckRun.objects.create(user=user, started_at=now)
    except IntegrityError:
        limit = f"each stops after at most {CHECK_LIMITS['wall_seconds']:g} s"
        if action == "check":
            message = (
                f"A check of yours is still running, so this one was not started: one check at a time "
                f"per person, and {limit}. The editor checks your latest text again in a moment."
            )
        else:
            message = (
                f"A check of yours is still running, so {SOURCE_RUN_ACTIONS[action]} was not started: "
                f"one check, save, import or preview at a time per person, and {limit}."
            )
        raise AuthoringRefused(message, code="busy") from None


def source_check_finish(*, run: SourceCheckRun) -> None:
    SourceCheckRun.objects.filter(pk=run.pk).delete()


@contextmanager
def source_check_place(*, user, action: str = "check"):
    """``with source_check_place(user=...)``: the run in the block holds the person's one
    place (AuthoringRefused, code ``busy``, when another holds it), given back however the
    block ends."""
    run = source_check_start(user=user, action=action)
    try:
        yield run
    finally:
        source_check_finish(run=run)
