"""Reads for LTI: registrations, our published keys, mappings, and the score we pass back."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from jwt.algorithms import RSAAlgorithm

from courses.models import Assignment
from grading.models import Submission, SubmissionStatus

from .models import Platform, ToolKey

AGS_SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


def platforms_for_issuer(*, issuer: str, client_id: str = "") -> list[Platform]:
    platforms = Platform.objects.filter(issuer=issuer)
    if client_id:
        platforms = platforms.filter(client_id=client_id)
    return list(platforms)


def tool_key_signing() -> ToolKey | None:
    """The key that signs our client assertions: the newest active one."""
    return ToolKey.objects.filter(is_active=True).order_by("-created_at", "-id").first()


def public_jwk(*, key: ToolKey) -> dict:
    private_key = serialization.load_pem_private_key(key.private_key_pem.encode(), password=None)
    jwk = RSAAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
    return {**jwk, "kid": key.kid, "alg": "RS256", "use": "sig"}


def tool_jwks() -> dict:
    """Our public keyset as /lti/jwks/ publishes it."""
    keys = ToolKey.objects.filter(is_published=True).order_by("-created_at", "-id")
    return {"keys": [public_jwk(key=key) for key in keys]}


@dataclass(frozen=True)
class AssignmentScore:
    earned: float
    possible: float
    finished: bool  # every exercise solved or out of attempts
    pending: bool  # an answer is still being graded (queued or grading)
    pending_manual: bool = False  # an answer waits for an instructor's grade


def assignment_score(*, assignment: Assignment, student) -> AssignmentScore:
    """Points earned / points possible, as the assignment page and gradebook count them."""
    from exercises.selectors import assignment_item_statuses

    statuses = assignment_item_statuses(assignment=assignment, student=student)
    possible = sum(s["item"].points for s in statuses)
    earned = sum(s["item"].points * s["status"]["score"] for s in statuses)
    finished = bool(statuses) and all(
        s["status"]["state"] == "solved" or s["status"]["attempts_left"] == 0 for s in statuses
    )
    waiting = set(
        Submission.objects.filter(
            student=student,
            variant__assignment_item__assignment=assignment,
            variant__context__startswith="assignment:",
            status__in=(
                SubmissionStatus.QUEUED,
                SubmissionStatus.GRADING,
                SubmissionStatus.MANUAL,
            ),
        ).values_list("status", flat=True)
    )
    # Rounded so a sum of weighted floats does not report 0.30000000000000004.
    return AssignmentScore(
        earned=round(earned, 6),
        possible=round(possible, 6),
        finished=finished,
        pending=bool(waiting - {SubmissionStatus.MANUAL}),
        pending_manual=SubmissionStatus.MANUAL in waiting,
    )
