"""The access controls of an exam, checked on every request of a student's attempt.

An assignment may ask for an access code (entered once per attempt), allow only some
networks (CIDR ranges, checked against the client's address on every request), and bind
the attempt to one browser session (a second one is refused, or ends the first).
``access_exam_gate`` is the one check the exercise page, submitting, result polling,
the assignment page and the student API call; staff previewing are never gated. An
assignment without any control costs no query here.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from datetime import timedelta

import redis
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from courses.models import Assignment, AssignmentKind, SessionPolicy
from courses.selectors import STAFF_ROLES, course_role
from grading import throttle

from .models import AssignmentAttempt

logger = logging.getLogger(__name__)

MAX_NETWORKS = 200
ACCESS_CODES_SESSION_KEY = "exam_access_codes"  # {assignment id: attempt id}
BOUND_SESSION_KEY = "exam_bound_attempts"  # {assignment id: attempt id} this session was bound to
LAST_SEEN_EVERY = timedelta(seconds=30)
CODE_BEFORE_START = 0  # the code was entered before the student's attempt began


class ExamAccessRefused(PermissionDenied):
    """This request may not reach the attempt. ``code``: network, session_elsewhere,
    session_replaced, code_needed, no_address or browser_only."""

    def __init__(self, message: str, *, code: str):
        super().__init__(message)
        self.message = message
        self.code = code


class AccessCodeRefused(Exception):
    def __init__(self, message: str, *, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


# --- Networks --------------------------------------------------------------------------


def networks_parse(text: str) -> tuple[list, list[str]]:
    """The networks of ``allowed_networks`` (one CIDR range per line; blank lines and
    ``#`` comments ignored), and a message per line that is not one."""
    networks, problems = [], []
    lines = (text or "").splitlines()
    if len(lines) > MAX_NETWORKS:
        return [], [f"Give at most {MAX_NETWORKS} ranges (found {len(lines)} lines)."]
    for number, line in enumerate(lines, start=1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=True))
        except ValueError as problem:
            shown = entry if len(entry) <= 60 else entry[:60] + "…"
            if "has host bits set" in str(problem):
                reason = "host bits are set (e.g. write 10.0.0.0/8, not 10.1.2.3/8)"
            else:
                reason = "not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)"
            problems.append(f"Line {number}, “{shown}”: {reason}.")
    return networks, problems


def client_address(request):
    """The client's IP address: REMOTE_ADDR, or, behind ``EXAM_TRUSTED_PROXIES`` trusted
    proxies, the address the outermost of them saw (counted from the right of
    X-Forwarded-For, so a client cannot forge it by sending its own header). None when it
    cannot be read."""
    hops = settings.EXAM_TRUSTED_PROXIES
    raw = request.META.get("REMOTE_ADDR", "")
    if hops > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) < hops:
            return None
        raw = forwarded[-hops]
    try:
        return ipaddress.ip_address(raw.strip())
    except ValueError:
        return None


def address_allowed(address, networks) -> bool:
    """Whether ``address`` is in one of ``networks`` (an IPv4-mapped IPv6 address counts
    as its IPv4 address)."""
    if address is None:
        return False
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address.version == network.version and address in network for network in networks)


# --- The gate --------------------------------------------------------------------------


def has_access_controls(assignment: Assignment) -> bool:
    return bool(
        assignment.access_code
        or assignment.allowed_networks.strip()
        or assignment.session_policy != SessionPolicy.ANY
    )


def access_exam_gate(*, request, assignment: Assignment, role: str | None = None) -> AssignmentAttempt | None:
    """Let this request reach the student's attempt, or raise ``ExamAccessRefused``.

    Checks, in order: the network, that this is a browser session when the attempt needs
    one, the access code, and the one-session policy (binding the attempt to the first
    session that reaches it). ``role``: the user's role in the course when the caller has
    read it (it is read here otherwise, only when the assignment has controls). An exam's
    attempt is never started here (its Start does that); homework under a one-session
    policy starts its attempt at the first request. Returns the attempt, or None."""
    if not has_access_controls(assignment):
        return None
    if role is None:
        role = course_role(user=request.user, course=assignment.course)
    if role in STAFF_ROLES:
        return None
    if assignment.allowed_networks.strip():
        networks, _ = networks_parse(assignment.allowed_networks)
        address = client_address(request)
        if not address_allowed(address, networks):
            raise ExamAccessRefused(
                f"This exam can only be taken from the networks its instructor allowed; your "
                f"address ({address or 'unknown'}) is not one of them. Ask the invigilator.",
                code="network",
            )
    needs_session = bool(assignment.access_code) or assignment.session_policy != SessionPolicy.ANY
    if not needs_session:
        return None
    session = _browser_session(request)
    if session is None:
        raise ExamAccessRefused(
            "This exam is taken in the browser: an API token cannot open it.", code="browser_only"
        )
    attempt = AssignmentAttempt.objects.filter(assignment=assignment, student=request.user).first()
    if assignment.access_code:
        _code_check(session=session, assignment=assignment, attempt=attempt)
    if assignment.session_policy == SessionPolicy.ANY:
        return attempt
    if attempt is None:
        if assignment.kind == AssignmentKind.EXAM:
            # An exam's attempt begins with its Start (exams.services.attempt_start), never
            # here: until then there is nothing to bind, and no answer is taken.
            return None
        # Homework has no Start: the first request of the one session starts the attempt.
        attempt = attempt_get_or_start(assignment=assignment, student=request.user)
    return _session_check(request=request, session=session, assignment=assignment, attempt=attempt)


def _code_check(*, session, assignment: Assignment, attempt: AssignmentAttempt | None) -> None:
    """The code entered in this session counts for one attempt: the one open when it was
    entered, or (entered before Start) the attempt started next; a new attempt (the old
    one removed) asks again."""
    entered = _code_entered_for(session, assignment)
    if entered is None or (attempt is not None and entered not in (CODE_BEFORE_START, attempt.pk)):
        raise ExamAccessRefused("Enter the exam's access code first.", code="code_needed")
    if attempt is not None and entered == CODE_BEFORE_START:
        _code_remember(session, assignment, attempt.pk)


def attempt_get_or_start(*, assignment: Assignment, student) -> AssignmentAttempt:
    """The student's attempt, started now if it was not yet. The unique constraint decides
    between racing first requests (and with the attempt's own start): one row, one clock."""
    attempt, _ = AssignmentAttempt.objects.get_or_create(
        assignment=assignment, student=student, defaults={"started_at": timezone.now()}
    )
    return attempt


def _browser_session(request):
    """The request's session, saved so it has a key; None for an API token's request."""
    if getattr(request, "auth", None) is not None:
        return None
    session = getattr(request, "session", None)
    if session is None:
        return None
    if not session.session_key:
        session.save()
    return session


def session_bound_here(session, *, assignment: Assignment, attempt: AssignmentAttempt) -> bool:
    """Whether this browser session was bound to ``attempt`` at some time (it remembers it)."""
    return session.get(BOUND_SESSION_KEY, {}).get(str(assignment.pk)) == attempt.pk


def session_replaced(session, *, assignment: Assignment, attempt: AssignmentAttempt) -> bool:
    """Whether this session was bound to ``attempt`` and another session holds it now."""
    return (
        bool(attempt.session_key) and attempt.session_key != session.session_key
        and session_bound_here(session, assignment=assignment, attempt=attempt)
    )


def _session_check(*, request, session, assignment: Assignment, attempt: AssignmentAttempt) -> AssignmentAttempt:
    """Bind the attempt to its first browser session; after that, refuse any other session,
    or (second takes over) bind to the newest and refuse the session it replaced.

    The session remembers the attempt it was bound to: a request from a session bound
    before but no longer is one that was replaced; one from a session never bound is a new
    login. Decided under the attempt's row lock, so two first requests cannot both bind."""
    key = session.session_key
    now = timezone.now()
    with transaction.atomic():
        attempt = AssignmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        if attempt.session_key == key:
            if attempt.last_seen_at is None or now - attempt.last_seen_at >= LAST_SEEN_EVERY:
                AssignmentAttempt.objects.filter(pk=attempt.pk).update(last_seen_at=now)
            return attempt
        if session_replaced(session, assignment=assignment, attempt=attempt):
            raise ExamAccessRefused(
                "Your attempt was opened in another browser session, which has taken it over; "
                "this one can no longer reach it.",
                code="session_replaced",
            )
        if attempt.session_key and assignment.session_policy == SessionPolicy.REFUSE_SECOND:
            raise ExamAccessRefused(
                "Your attempt is already open in another browser session; continue there. If "
                "that browser is gone, ask the invigilator.",
                code="session_elsewhere",
            )
        AssignmentAttempt.objects.filter(pk=attempt.pk).update(session_key=key, last_seen_at=now)
        attempt.session_key, attempt.last_seen_at = key, now
    session[BOUND_SESSION_KEY] = {**session.get(BOUND_SESSION_KEY, {}), str(assignment.pk): attempt.pk}
    return attempt


def start_session_key(*, request, assignment: Assignment) -> str:
    """The browser session an exam's attempt is bound to as it starts: this request's,
    under a one-session policy ("" otherwise, or without a browser session). Binding at the
    Start, not at the next request, leaves no moment in which another session signed in
    as the same student could reach the new attempt first and lock out the one that
    pressed Start."""
    if assignment.session_policy == SessionPolicy.ANY:
        return ""
    session = _browser_session(request)
    return session.session_key if session is not None else ""


def start_session_remember(*, request, assignment: Assignment, attempt: AssignmentAttempt) -> None:
    """Remember in this browser session that it holds ``attempt`` (bound by its Start), as
    a bind at a later request does, so a takeover by another session is told apart."""
    session = _browser_session(request)
    if session is not None and attempt.session_key and attempt.session_key == session.session_key:
        bound = {**session.get(BOUND_SESSION_KEY, {}), str(assignment.pk): attempt.pk}
        session[BOUND_SESSION_KEY] = bound


def attempt_sessions_release(*, session_key: str) -> int:
    """Unbind the open attempts bound to a browser session that has ended (its student
    signed out), so a one-session exam can be continued from another browser."""
    if not session_key:
        return 0
    return AssignmentAttempt.objects.filter(session_key=session_key, finished_at__isnull=True).update(
        session_key=""
    )


def attempt_sessions_rebind(*, old_key: str, new_key: str) -> int:
    """Move the open attempts bound to a browser session to the same browser's new session
    key (a password change gives its session a new key, keeping the student signed in):
    the student keeps the exam they are sitting, rather than being told it was taken over."""
    if not old_key or not new_key or old_key == new_key:
        return 0
    return AssignmentAttempt.objects.filter(session_key=old_key, finished_at__isnull=True).update(
        session_key=new_key
    )


def attempts_bound(*, assignment: Assignment):
    """Open attempts bound to a browser session, with their students (for the invigilator)."""
    return (
        AssignmentAttempt.objects.filter(assignment=assignment, finished_at__isnull=True)
        .exclude(session_key="")
        .select_related("student")
        .order_by("student__username")
    )


def attempt_session_free(*, assignment: Assignment, student_id: int) -> AssignmentAttempt | None:
    """Unbind one student's open attempt from its browser session (their computer failed):
    the next browser they use is bound instead. None when no such attempt is bound."""
    attempt = attempts_bound(assignment=assignment).filter(student_id=student_id).first()
    if attempt is None:
        return None
    AssignmentAttempt.objects.filter(pk=attempt.pk).update(session_key="")
    return attempt


def release_on_sign_out(sender, request, user, **kwargs) -> None:
    """``user_logged_out`` receiver (connected in ExamsConfig.ready)."""
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        attempt_sessions_release(session_key=session.session_key)


# --- The access code --------------------------------------------------------------------


def access_code_enter(*, request, assignment: Assignment, code: str) -> AssignmentAttempt:
    """Check a code the student typed (in constant time, throttled per student and exam)
    and remember it in the session for this attempt. Raises ``AccessCodeRefused``."""
    try:
        wait = throttle.token_take(
            key=f"exam-code:{assignment.pk}:{request.user.pk}",
            burst=settings.EXAM_CODE_BURST,
            per_second=settings.EXAM_CODE_PER_MINUTE / 60,
        )
    except redis.RedisError:  # Redis down: the exam start must not fail; the code is still checked
        logger.warning("access-code rate limit unavailable for user %s", request.user.pk)
        wait = 0.0
    if wait:
        seconds = math.ceil(wait)
        raise AccessCodeRefused(
            f"Too many tries. Wait {seconds} second{'s' * (seconds != 1)} and try again.",
            retry_after=seconds,
        )
    if not access_code_matches(stored=assignment.access_code, given=code or ""):
        raise AccessCodeRefused("That is not this exam's access code.")
    session = _browser_session(request)
    attempt = AssignmentAttempt.objects.filter(assignment=assignment, student=request.user).first()
    # Entering the code starts nothing: the clock starts with the attempt.
    _code_remember(session, assignment, attempt.pk if attempt else CODE_BEFORE_START)
    return attempt


CODE_HASH_PREFIX = "hmac-sha256$"
CODE_HASH_SALT = "attnquiz.exams.access_code"


def _code_digest(code: str) -> str:
    return CODE_HASH_PREFIX + salted_hmac(CODE_HASH_SALT, code.strip()[:200], algorithm="sha256").hexdigest()


def access_code_hash(code: str) -> str:
    """How an access code is stored: an HMAC of it keyed with SECRET_KEY (empty: no code).
    A stored value is never hashed twice. Rotating SECRET_KEY asks for the codes again."""
    code = (code or "").strip()
    if not code or code.startswith(CODE_HASH_PREFIX):
        return code
    return _code_digest(code)


def access_code_matches(*, stored: str, given: str) -> bool:
    """Whether ``given`` (what the student typed) is the code ``stored``, compared in
    constant time. A code written past the model's save (a raw update) is still plain and
    is hashed here for the comparison."""
    if not stored:
        return False
    return constant_time_compare(_code_digest(given), access_code_hash(stored))


def access_code_store(sender, instance, **kwargs) -> None:
    """``pre_save`` receiver for courses.Assignment (connected in ExamsConfig.ready): no
    access code reaches the database in plain text."""
    instance.access_code = access_code_hash(instance.access_code)


def _code_entered_for(session, assignment: Assignment) -> int | None:
    """The attempt this session entered the assignment's code for (CODE_BEFORE_START:
    entered before the attempt began), or None."""
    return session.get(ACCESS_CODES_SESSION_KEY, {}).get(str(assignment.pk))


def _code_remember(session, assignment: Assignment, attempt_id: int) -> None:
    session[ACCESS_CODES_SESSION_KEY] = {**session.get(ACCESS_CODES_SESSION_KEY, {}), str(assignment.pk): attempt_id}


def access_code_needed(*, request, assignment: Assignment) -> bool:
    """Whether this session has still to enter the code of the student's attempt."""
    if not assignment.access_code:
        return False
    attempt = AssignmentAttempt.objects.filter(assignment=assignment, student=request.user).first()
    entered = _code_entered_for(request.session, assignment)
    return entered is None or (attempt is not None and entered not in (CODE_BEFORE_START, attempt.pk))
