"""Score passback through AGS: the outbox, sending, line items, retries and the sweeper.

A score change writes (or re-arms) one ``Passback`` row per LMS link the student reached
the assignment through, in the transaction that stores the score. After the commit a
task sends it; if the broker is down the row waits and the sweeper sends it. A row is
claimed by one sender at a time and always sends the total as it is at that moment, so
retries and duplicate deliveries post nothing stale and nothing twice.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem

from courses.models import Enrolment, EnrolmentStatus, Role

from . import selectors
from .connector import ServiceRefused, ServiceTemporaryError, call_service, service_connector
from .models import LtiIdentity, Passback, PassbackStatus, ResourceLink

logger = logging.getLogger(__name__)

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
MAX_ATTEMPTS = 8
BACKOFF_FIRST_SECONDS = 10
BACKOFF_MAX_SECONDS = 600
CLAIM_SECONDS = 300  # a claim older than this belongs to a sender that died
LINEITEM_PAGES = 20  # line item containers are short; never page forever
SWEEP_BATCH = 200


def backoff_seconds(attempts: int) -> int:
    """10 s, 20 s, 40 s … capped at 10 minutes."""
    return min(BACKOFF_FIRST_SECONDS * 2 ** max(attempts - 1, 0), BACKOFF_MAX_SECONDS)


# --- Recording (inside the score change's transaction) ----------------------------------


def passback_links(*, submission) -> list[ResourceLink]:
    """The LMS links a submission's score should be reported through: one indexed query.

    Only links that grant the score scope and have (or may create) a line item count.
    """
    links = ResourceLink.objects.filter(assignment__items__variants=submission.variant_id)
    return _scoring_links(links)


def _scoring_links(links) -> list[ResourceLink]:
    return [
        link
        for link in links.select_related("context")
        if link.can_post_scores()
        and (link.lineitem_url or (link.lineitems_url and link.can_manage_lineitems()))
    ]


def passbacks_record(*, submission, links: list[ResourceLink] | None = None) -> list[int]:
    """Arm the outbox rows for a student's changed score; the ids to send after commit.

    ``links`` are ``passback_links(submission=...)`` when the caller already has them.
    Call inside the transaction that stores the score.
    """
    if links is None:
        links = passback_links(submission=submission)
    if not links:
        return []
    platforms_with_identity = set(
        LtiIdentity.objects.filter(
            user_id=submission.student_id, platform__in={link.platform_id for link in links}
        ).values_list("platform_id", flat=True)
    )
    student_courses = set(
        Enrolment.objects.filter(
            user_id=submission.student_id, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE
        ).values_list("course_id", flat=True)
    )
    now = timezone.now()
    rows = [
        Passback(
            link=link,
            user_id=submission.student_id,
            status=PassbackStatus.PENDING,
            changed_at=now,
            next_attempt_at=now,
            attempts=0,
            last_error="",
        )
        for link in links
        if link.platform_id in platforms_with_identity and link.context.course_id in student_courses
    ]
    if not rows:
        return []
    Passback.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["link", "user"],
        update_fields=["status", "changed_at", "next_attempt_at", "attempts", "last_error"],
    )
    return list(
        Passback.objects.filter(
            user_id=submission.student_id, link__in=[row.link for row in rows]
        ).values_list("pk", flat=True)
    )


def passbacks_record_for_assignment(*, assignment) -> None:
    """Arm (and send after commit) every LMS-linked student's row of the assignment: its
    grades were released or withdrawn. Call inside the transaction that changes it."""
    links = _scoring_links(ResourceLink.objects.filter(assignment=assignment))
    if not links:
        return
    students = set(
        Enrolment.objects.filter(
            course_id__in={link.context.course_id for link in links},
            role=Role.STUDENT,
            status=EnrolmentStatus.ACTIVE,
        ).values_list("user_id", flat=True)
    )
    identities = LtiIdentity.objects.filter(
        user_id__in=students, platform__in={link.platform_id for link in links}
    ).values_list("user_id", "platform_id")
    now = timezone.now()
    rows = [
        Passback(
            link=link, user_id=user_id, status=PassbackStatus.PENDING, changed_at=now,
            next_attempt_at=now, attempts=0, last_error="",
        )
        for user_id, platform_id in identities
        for link in links
        if link.platform_id == platform_id
    ]
    if not rows:
        return
    Passback.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["link", "user"],
        update_fields=["status", "changed_at", "next_attempt_at", "attempts", "last_error"],
    )
    ids = list(Passback.objects.filter(link__in=links, status=PassbackStatus.PENDING).values_list("pk", flat=True))
    transaction.on_commit(partial(passbacks_enqueue, passback_ids=ids))


def scores_withheld(assignment) -> bool:
    """An exam's scores reach the LMS only once its grades are released; before, the LMS
    is told the grading is pending, with no score."""
    return assignment.kind == "exam" and assignment.grades_released_at is None


def passbacks_enqueue(*, passback_ids: list[int]) -> None:
    """Hand rows to the worker (or send them here in inline mode). Never raises.

    A row that cannot be enqueued stays pending in the database; the sweeper sends it.
    """
    if settings.GRADING_MODE == "inline":
        for passback_id in passback_ids:
            try:
                passback_send(passback_id=passback_id)
            except Exception:
                logger.warning("LTI passback %s failed", passback_id, exc_info=True)
        return
    from attnquiz.enqueue import registered_task

    send_passback = registered_task("lti.tasks.send_passback")
    try:
        with send_passback.app.connection_for_write() as connection:
            for passback_id in passback_ids:
                send_passback.apply_async(args=[passback_id], retry=False, connection=connection)
    except Exception:  # the broker being down must never fail the student's request
        logger.warning("broker unreachable; LTI passbacks %s wait for the sweeper", passback_ids)


def passbacks_record_and_schedule(*, submission, links: list[ResourceLink] | None = None) -> None:
    ids = passbacks_record(submission=submission, links=links)
    if ids:
        transaction.on_commit(partial(passbacks_enqueue, passback_ids=ids))


@transaction.atomic
def passback_resend(*, passback: Passback) -> Passback:
    """An instructor asks to send a (failed) row again, now."""
    Passback.objects.filter(pk=passback.pk).update(
        status=PassbackStatus.PENDING,
        attempts=0,
        next_attempt_at=timezone.now(),
        last_error="",
    )
    transaction.on_commit(partial(passbacks_enqueue, passback_ids=[passback.pk]))
    passback.refresh_from_db()
    return passback


# --- Sending ------------------------------------------------------------------------------


def _claim(passback_id: int) -> Passback | None:
    now = timezone.now()
    claimed = Passback.objects.filter(
        Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - timedelta(seconds=CLAIM_SECONDS)),
        pk=passback_id,
        status=PassbackStatus.PENDING,
    ).update(claimed_at=now)
    if not claimed:
        return None
    return (
        Passback.objects.select_related("link__platform", "link__assignment", "user")
        .filter(pk=passback_id)
        .first()
    )


def passback_send(*, passback_id: int) -> str:
    """Send the row's current total if it is pending and nobody else is sending it.

    Returns what happened. A temporary failure is recorded with its back-off and
    re-raised as ``ServiceTemporaryError`` so the task may retry; a refusal marks the row
    failed with the reason, for the instructor to see.
    """
    outcome = "not pending"
    for _round in range(3):  # a change that lands during a send is sent right after it
        passback = _claim(passback_id)
        if passback is None:
            return outcome
        changed_at = passback.changed_at
        try:
            sent = _post_score(passback)
        except ServiceTemporaryError as error:
            _record_failure(passback, reason=str(error), temporary=True)
            raise
        except ServiceRefused as error:
            _record_failure(passback, reason=str(error), temporary=False)
            return f"failed: {error}"
        finished = Passback.objects.filter(pk=passback.pk, changed_at=changed_at).update(
            status=PassbackStatus.SENT,
            sent_at=timezone.now(),
            sent_score=sent,
            attempts=0,
            last_error="",
            next_attempt_at=None,
            claimed_at=None,
        )
        outcome = "sent"
        if finished:
            return outcome
        Passback.objects.filter(pk=passback.pk).update(claimed_at=None)
    return outcome


def _record_failure(passback: Passback, *, reason: str, temporary: bool) -> None:
    attempts = passback.attempts + 1
    give_up = not temporary or attempts >= MAX_ATTEMPTS
    Passback.objects.filter(pk=passback.pk).update(
        status=PassbackStatus.FAILED if give_up else PassbackStatus.PENDING,
        attempts=attempts,
        last_error=reason[:1000],
        next_attempt_at=None
        if give_up
        else timezone.now() + timedelta(seconds=backoff_seconds(attempts)),
        claimed_at=None,
    )
    logger.warning("LTI passback %s %s: %s", passback.pk, "failed" if give_up else "will retry", reason)


def _ags(link: ResourceLink) -> tuple[AssignmentsGradesService, object, list[str]]:
    scopes = [scope for scope in link.ags_scopes if isinstance(scope, str)]
    connector = service_connector(platform=link.platform)
    service = AssignmentsGradesService(
        connector,
        {"scope": scopes, "lineitems": link.lineitems_url, "lineitem": link.lineitem_url},
    )
    return service, connector, scopes


def _post_score(passback: Passback) -> dict:
    link = passback.link
    if link.assignment is None:
        raise ServiceRefused("the LMS link does not open an assignment any more")
    identity = LtiIdentity.objects.filter(platform=link.platform, user=passback.user).first()
    if identity is None:
        raise ServiceRefused("the student has no identity on this LMS")
    score = selectors.assignment_score(assignment=link.assignment, student=passback.user)
    if score.possible <= 0:
        raise ServiceRefused("the assignment has no points")
    lineitem_url = lineitem_ensure(link=link, score_maximum=score.possible)
    payload = score_payload(
        sub=identity.sub, score=score, timestamp=passback.changed_at,
        withheld=scores_withheld(link.assignment),
    )
    grade = Grade().set_user_id(payload["userId"])
    if "scoreGiven" in payload:
        grade.set_score_given(payload["scoreGiven"]).set_score_maximum(payload["scoreMaximum"])
    grade = (
        grade.set_activity_progress(payload["activityProgress"])
        .set_grading_progress(payload["gradingProgress"])
        .set_timestamp(payload["timestamp"])
    )
    service, connector, scopes = _ags(link)
    try:
        call_service(
            connector, scopes, lambda: service.put_grade(grade, LineItem({"id": lineitem_url}))
        )
    except ServiceRefused as refusal:
        # A line item deleted in the LMS (or a stale one from a copied course): find or
        # create the link's own, once, when the LMS lets attnquiz manage line items.
        if refusal.status != 404 or not (link.lineitems_url and link.can_manage_lineitems()):
            raise
        ResourceLink.objects.filter(pk=link.pk).update(lineitem_url="")
        link.lineitem_url = ""
        lineitem_url = lineitem_ensure(link=link, score_maximum=score.possible)
        call_service(
            connector, scopes, lambda: service.put_grade(grade, LineItem({"id": lineitem_url}))
        )
    return payload


def score_payload(
    *, sub: str, score: selectors.AssignmentScore, timestamp, withheld: bool = False
) -> dict:
    """The AGS score: clamped to [0, maximum], with the progress the spec defines.

    ``withheld`` (an exam before its release): no score at all, and gradingProgress
    Pending — AGS lets a score omit scoreGiven, and an LMS shows no grade while grading
    is not FullyGraded."""
    given = min(max(score.earned, 0.0), score.possible)
    if withheld:
        return {
            "userId": sub,
            "activityProgress": "Completed" if score.finished else "InProgress",
            "gradingProgress": "Pending",
            "timestamp": timestamp.isoformat(timespec="milliseconds"),
        }
    if score.pending_manual:
        grading = "PendingManual"
    elif score.pending:
        grading = "Pending"
    else:
        grading = "FullyGraded"
    return {
        "userId": sub,
        "scoreGiven": given,
        "scoreMaximum": score.possible,
        "activityProgress": "Completed" if score.finished else "InProgress",
        "gradingProgress": grading,
        # Milliseconds: two changes in one second must still be ordered by the LMS.
        "timestamp": timestamp.isoformat(timespec="milliseconds"),
    }


def lineitem_ensure(*, link: ResourceLink, score_maximum: float) -> str:
    """The line item URL of a link: the launch's, else found or created in its course.

    Found by the link's resource link id (so a relaunch or a second sender never makes a
    duplicate column); created with the assignment's title and maximum otherwise. The link
    row is locked while this runs.
    """
    if link.lineitem_url:
        return link.lineitem_url
    with transaction.atomic():
        locked = ResourceLink.objects.select_for_update().get(pk=link.pk)
        if locked.lineitem_url:
            link.lineitem_url = locked.lineitem_url
            return link.lineitem_url
        if not (locked.lineitems_url and locked.can_manage_lineitems()):
            raise ServiceRefused(
                "the LMS gave this link no line item and does not let attnquiz create one "
                "(turn on grading for the link, or allow line item management)"
            )
        service, connector, scopes = _ags(locked)
        found = call_service(
            connector, scopes, lambda: _find_lineitem(service, locked.resource_link_id)
        )
        if found is None:
            new = (
                LineItem()
                .set_label(link.assignment.title[:200])
                .set_score_maximum(score_maximum)
                .set_resource_id(resource_id_for(assignment=link.assignment))
                .set_resource_link_id(locked.resource_link_id)
                .set_tag("attnquiz")
            )
            found = call_service(connector, scopes, lambda: service.create_lineitem(new))
        url = found.get_id()
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ServiceRefused("the LMS answered a line item without an id")
        ResourceLink.objects.filter(pk=link.pk).update(lineitem_url=url[:500])
        link.lineitem_url = url[:500]
        return link.lineitem_url


def _find_lineitem(service: AssignmentsGradesService, resource_link_id: str) -> LineItem | None:
    url = None
    for _page in range(LINEITEM_PAGES):
        items, url = service.get_lineitems_page(url)
        for item in items:
            if isinstance(item, dict) and item.get("resourceLinkId") == resource_link_id:
                return LineItem(item)
        if not url:
            return None
    return None


def resource_id_for(*, assignment) -> str:
    return f"attnquiz-assignment-{assignment.pk}"


# --- The sweeper --------------------------------------------------------------------------


def passbacks_send_due(*, limit: int = SWEEP_BATCH) -> dict:
    """Send pending rows whose time has come, oldest change first. For the periodic sweeper.

    Rows the task should already have sent (broker outage, lost message, a retry whose
    countdown passed) are caught here; ``LTI_PASSBACK_SWEEP_GRACE_SECONDS`` keeps the sweeper
    from racing a task that is about to run.
    """
    grace = getattr(settings, "LTI_PASSBACK_SWEEP_GRACE_SECONDS", 30)
    due = list(
        Passback.objects.filter(
            status=PassbackStatus.PENDING,
            next_attempt_at__lte=timezone.now() - timedelta(seconds=grace),
        )
        .order_by("changed_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    counts = {"sent": 0, "failed": 0, "retry": 0, "skipped": 0}
    for passback_id in due:
        try:
            outcome = passback_send(passback_id=passback_id)
        except ServiceTemporaryError:
            counts["retry"] += 1
            continue
        key = "sent" if outcome == "sent" else "failed" if outcome.startswith("failed") else "skipped"
        counts[key] += 1
    return counts

