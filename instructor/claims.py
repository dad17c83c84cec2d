"""Short-lived claims of answers being graded by hand, so that graders see each other.

Opening an answer's grading page (``manual_grade``, the rubric's ``grading_answer``)
claims it for the grader for ``CLAIM_SECONDS``; opening it again renews their claim, and
saving a grade from the page releases it. Another grader who opens a claimed answer is
told who has it open (and may still grade it: a claim never locks anyone out), the manual
queue shows the claims, and "next waiting" skips answers claimed by someone else while an
unclaimed one waits.

Claims live in Django's cache only (Redis in production). They are advice, not a lock:
any cache error means no claims at all, never a failed page, and the refusal of a grade
given over one the grader has not seen (``services.require_newest_grade_seen``, a 409)
stays what keeps two graders from replacing each other's grade.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone

from django.core.cache import cache
from django.utils import timezone

from grading.models import Submission

from .selectors_rubrics import QuestionAnswer

logger = logging.getLogger(__name__)

# Long enough to read a derivation and tick a rubric; short enough that a grader who
# walked away does not keep an answer from the others for long.
CLAIM_SECONDS = 10 * 60


@dataclass(frozen=True)
class AnswerClaim:
    """Who opened an answer's grading page last, and when (their claim holds for
    ``CLAIM_SECONDS`` from then)."""

    grader_id: int
    grader_name: str
    opened_at: datetime

    @property
    def opened_ago(self) -> str:
        """How long ago, in words for "… opened this answer 2 minutes ago"."""
        minutes = int((timezone.now() - self.opened_at).total_seconds() // 60)
        if minutes < 1:
            return "less than a minute ago"
        return f"{minutes} minute{'s' * (minutes != 1)} ago"

    def held_by_other(self, grader) -> bool:
        return self.grader_id != grader.pk


def claim_key(submission: Submission) -> str:
    """The cache key of an answer's claim. It holds the answer's time as well as its id, so
    that a claim never passes to another answer that reuses the id (a restored database, a
    test database made again)."""
    created = int(submission.created_at.timestamp() * 1_000_000) if submission.created_at else 0
    return f"grading-claim:1:{submission.pk}:{created}"


def _claim_stored(grader) -> dict:
    return {
        "grader_id": grader.pk,
        "grader_name": grader.get_full_name() or grader.get_username(),
        "opened_at": timezone.now().timestamp(),
    }


def _claim_read(stored) -> AnswerClaim | None:
    """The claim kept in the cache, or None for nothing, something unreadable, or a claim
    older than ``CLAIM_SECONDS`` (a cache that kept it longer than asked is not believed)."""
    if not isinstance(stored, dict):
        return None
    try:
        claim = AnswerClaim(
            grader_id=int(stored["grader_id"]), grader_name=str(stored["grader_name"]),
            opened_at=datetime.fromtimestamp(float(stored["opened_at"]), tz=dt_timezone.utc),
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if (timezone.now() - claim.opened_at).total_seconds() >= CLAIM_SECONDS:
        return None
    return claim


def _cache_failed(action: str, error: Exception) -> None:
    # One line, no traceback: during a Redis outage every grading page would log one.
    logger.warning("Grading claims unavailable (%s): %s", action, error)


def answer_claim_take(*, submission: Submission, grader) -> AnswerClaim | None:
    """Claim the answer for ``grader``, who has just opened its grading page, for
    ``CLAIM_SECONDS`` (their own claim is renewed, from now). Returns the claim of another
    grader who has it open, left as it is (the page tells ``grader`` about it), else None.
    Never raises for the cache: without it there are no claims."""
    key = claim_key(submission)
    try:
        if cache.add(key, _claim_stored(grader), timeout=CLAIM_SECONDS):
            return None
        held = _claim_read(cache.get(key))
        if held is not None and held.held_by_other(grader):
            return held
        # Ours (renewed) or gone stale. Not atomic with the read: of two graders opening
        # an answer whose claim has just lapsed, the later one holds it, which is harmless.
        cache.set(key, _claim_stored(grader), timeout=CLAIM_SECONDS)
    except Exception as error:  # noqa: BLE001 (any cache failure: no claims, grading goes on)
        _cache_failed("claim", error)
    return None


def answer_claim_release(*, submission: Submission, grader) -> None:
    """Release ``grader``'s claim of the answer (they saved a grade). Another grader's claim
    stays: they still have the answer open, and the 409 tells them of the new grade."""
    key = claim_key(submission)
    try:
        held = _claim_read(cache.get(key))
        if held is not None and not held.held_by_other(grader):
            cache.delete(key)
    except Exception as error:  # noqa: BLE001
        _cache_failed("release", error)


def answer_claims_release(*, submissions, grader) -> None:
    """Release ``grader``'s claims of the answers (a rubric item applied to all of them from
    the question's page grades them at once); others' claims stay, as in
    ``answer_claim_release``. One cache read and one delete for them all."""
    keys = [claim_key(submission) for submission in submissions]
    if not keys:
        return
    try:
        stored = cache.get_many(keys)
        claims = {key: _claim_read(value) for key, value in stored.items()}
        ours = [key for key, claim in claims.items() if claim is not None and not claim.held_by_other(grader)]
        if ours:
            cache.delete_many(ours)
    except Exception as error:  # noqa: BLE001
        _cache_failed("release", error)


def answer_claims_held(*, submissions) -> dict[int, AnswerClaim]:
    """Submission id -> its claim in force, for the answers that have one (one cache read
    for all of them). Empty when the cache fails."""
    keys = {claim_key(submission): submission.pk for submission in submissions}
    if not keys:
        return {}
    try:
        stored = cache.get_many(list(keys))
    except Exception as error:  # noqa: BLE001
        _cache_failed("read", error)
        return {}
    claims = {keys[key]: _claim_read(value) for key, value in stored.items() if key in keys}
    return {submission_id: claim for submission_id, claim in claims.items() if claim is not None}


def queue_rows_with_claims(rows) -> list[Submission]:
    """The manual queue's rows, each with ``claim``: the claim of the answer its link grades
    (``rubric_answer_id`` for a part graded by the course rubric, else the row itself),
    None when it has none. That answer, the student's newest, waiting or graded by hand, is
    a row of the same list, so one cache read of the rows covers every link."""
    rows = list(rows)
    claims = answer_claims_held(submissions=rows)
    for row in rows:
        row.claim = claims.get(getattr(row, "rubric_answer_id", None) or row.pk)
    return rows


def answers_with_claims(answers: list[QuestionAnswer]) -> list[QuestionAnswer]:
    """The answers of a question's page, each with ``claim`` (None when it has none), so that
    a grader choosing an answer from the list sees which ones another grader has open, as
    the manual queue shows them (one cache read)."""
    held = answer_claims_held(submissions=[answer.submission for answer in answers])
    for answer in answers:
        answer.claim = held.get(answer.submission.pk)
    return answers


def next_waiting_unclaimed(
    answers: list[QuestionAnswer], *, grader, after: int | None = None
) -> QuestionAnswer | None:
    """The next answer waiting for a grade for ``grader``, in the order of
    ``selectors_rubrics.next_waiting`` (after submission ``after``, wrapping round), passing
    over answers another grader has claimed; when every waiting answer is claimed, the first
    of them all the same (two graders on one answer beat a grader with nothing to do)."""
    start = next((index + 1 for index, a in enumerate(answers) if a.submission.pk == after), 0)
    waiting = [a for a in answers[start:] + answers[:start] if a.waiting and a.submission.pk != after]
    if not waiting:
        return None
    claims = answer_claims_held(submissions=[answer.submission for answer in waiting])
    for answer in waiting:
        claim = claims.get(answer.submission.pk)
        if claim is None or not claim.held_by_other(grader):
            return answer
    return waiting[0]
