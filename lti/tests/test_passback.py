"""Score passback (the outbox, pylti1p3next's AGS client) against a real HTTP server on
127.0.0.1 playing the LMS's token, line item and score endpoints."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from django.core.cache import cache

from lti import passback, selectors, tasks
from lti.connector import ServiceTemporaryError, service_connector
from lti.models import Passback, PassbackStatus, ToolKey

from .conftest import AGS_SCOPES, CLIENT_ID, STUDENT_SUB

SCORE_PATH = "/api/lti/courses/42/line_items/7/scores?type_id=3"


class FakeLmsServer:
    """Records every request; answers from per-path queues of (status, body)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.answers: dict[str, list[tuple[int, dict | str]]] = {}
        self.next_links: dict[str, list[str | None]] = {}  # Link: rel="next" per answer
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.do_POST()

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                server.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                    }
                )
                queue = server.answers.get(self.path.split("?")[0], [])
                status, payload = queue.pop(0) if queue else (200, {})
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                links = server.next_links.get(self.path.split("?")[0], [])
                link = links.pop(0) if links else None
                if link:
                    self.send_header("Link", link)
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.stopped = False
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def answer(self, path: str, *answers):
        self.answers.setdefault(path, []).extend(answers)

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def lms_server():
    server = FakeLmsServer()
    yield server
    server.stop()


def forget_tokens(platform, scopes=AGS_SCOPES):
    # The token cache outlives a test (it may be Redis): forget a token from an earlier one.
    service_connector(platform=platform).forget_access_token(scopes)


@pytest.fixture
def wired(linked, lms_server):
    """The linked assignment, its line item and token endpoint on the local server."""
    linked.platform.auth_token_url = lms_server.url + "/login/oauth2/token"
    linked.platform.save()
    forget_tokens(linked.platform)
    linked.link.lineitem_url = lms_server.url + "/api/lti/courses/42/line_items/7?type_id=3"
    linked.link.save()
    lms_server.answer(
        "/login/oauth2/token",
        (200, {"access_token": "token-1", "token_type": "Bearer", "expires_in": 3600}),
    )
    return linked


def arm(linked) -> Passback:
    """An outbox row for the linked student, as a score change writes it."""
    from django.utils import timezone

    row, _ = Passback.objects.update_or_create(
        link=linked.link,
        user=linked.student,
        defaults={"status": PassbackStatus.PENDING, "changed_at": timezone.now(), "attempts": 0},
    )
    return row


def run_task(linked):
    return tasks.send_passback.apply(args=[arm(linked).pk]).get()


def score_of(request) -> dict:
    return json.loads(request["body"])


def test_passback_posts_the_exact_token_request_and_score(wired, lms_server, answer):
    answer(wired, "weights")  # inline mode: graded, then the outbox row is sent after commit

    token_request, score_request = lms_server.requests
    assert token_request["path"] == "/login/oauth2/token"
    assert token_request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    form = dict(urllib.parse.parse_qsl(token_request["body"]))
    assert set(form) == {"grant_type", "client_assertion_type", "client_assertion", "scope"}
    assert form["grant_type"] == "client_credentials"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert form["scope"] == " ".join(sorted(AGS_SCOPES))

    key = ToolKey.objects.get()
    public = jwt.PyJWK(selectors.public_jwk(key=key))
    assert jwt.get_unverified_header(form["client_assertion"])["kid"] == key.kid
    assertion = jwt.decode(
        form["client_assertion"],
        public,
        algorithms=["RS256"],
        audience=lms_server.url + "/login/oauth2/token",
    )
    assert (assertion["iss"], assertion["sub"]) == (CLIENT_ID, CLIENT_ID)
    assert assertion["exp"] - assertion["iat"] == 65
    assert abs(assertion["iat"] - time.time()) < 30
    assert assertion["jti"].startswith("lti-service-token-")

    assert score_request["path"] == SCORE_PATH
    assert score_request["headers"]["Content-Type"] == "application/vnd.ims.lis.v1.score+json"
    assert score_request["headers"]["Authorization"] == "Bearer token-1"
    score = score_of(score_request)
    timestamp = score.pop("timestamp")
    # The weights part (2 of the exercise's 4 part points) is solved; the item is worth 4.
    assert score == {
        "userId": STUDENT_SUB,
        "scoreGiven": 2.0,
        "scoreMaximum": 4.0,
        "activityProgress": "InProgress",
        "gradingProgress": "FullyGraded",
    }
    sent_at = datetime.fromisoformat(timestamp)
    assert timestamp.endswith("+00:00") and len(timestamp.split(".")[1]) == len("123+00:00")
    assert abs((datetime.now(UTC) - sent_at).total_seconds()) < 30
    row = Passback.objects.get()
    assert (row.status, row.attempts, row.last_error) == ("sent", 0, "")
    assert row.sent_score["scoreGiven"] == 2.0 and row.sent_score["timestamp"] == timestamp
    assert abs((row.changed_at - sent_at).total_seconds()) < 0.001


def test_grading_in_inline_mode_passes_each_new_total_back(wired, lms_server, answer):
    answer(wired, "weights")
    answer(wired, "output")
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH, SCORE_PATH]  # token reused
    first, second = (score_of(r) for r in lms_server.requests[1:])
    assert (first["scoreGiven"], first["activityProgress"]) == (2.0, "InProgress")
    assert (
        second["scoreGiven"],
        second["scoreMaximum"],
        second["activityProgress"],
        second["gradingProgress"],
    ) == (4.0, 4.0, "Completed", "FullyGraded")
    assert first["timestamp"] < second["timestamp"]
    assert Passback.objects.count() == 1  # one outbox row per student and link, re-armed


def test_wrong_answer_still_reports_the_total(wired, lms_server, answer):
    answer(wired, "weights", "[0.25, 0.25, 0.25, 0.25]")
    score = score_of(lms_server.requests[-1])
    assert (score["scoreGiven"], score["scoreMaximum"]) == (0.0, 4.0)


@pytest.mark.parametrize(
    "earned, possible, pending, manual, expected",
    [
        (2.0, 4.0, False, False, (2.0, 4.0, "FullyGraded")),
        (5.5, 4.0, False, False, (4.0, 4.0, "FullyGraded")),  # clamped to the maximum
        (-1.0, 4.0, False, False, (0.0, 4.0, "FullyGraded")),  # and to zero
        (1.0, 4.0, True, False, (1.0, 4.0, "Pending")),
        (1.0, 4.0, False, True, (1.0, 4.0, "PendingManual")),
        (1.0, 4.0, True, True, (1.0, 4.0, "PendingManual")),
    ],
)
def test_score_payload_clamps_and_reports_grading_progress(
    earned, possible, pending, manual, expected
):
    score = selectors.AssignmentScore(
        earned=earned, possible=possible, finished=False, pending=pending, pending_manual=manual
    )
    payload = passback.score_payload(
        sub="s", score=score, timestamp=datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    )
    assert (payload["scoreGiven"], payload["scoreMaximum"], payload["gradingProgress"]) == expected
    assert payload["timestamp"] == "2026-01-02T03:04:05.678+00:00"
    assert payload["activityProgress"] == "InProgress"


def test_short_lived_token_is_not_cached(wired, lms_server):
    lms_server.answers["/login/oauth2/token"] = [
        (200, {"access_token": "brief-1", "expires_in": 30}),
        (200, {"access_token": "brief-2", "expires_in": 30}),
    ]
    run_task(wired)
    run_task(wired)
    assert lms_server.paths() == [
        "/login/oauth2/token",
        SCORE_PATH,
        "/login/oauth2/token",
        SCORE_PATH,
    ]
    assert lms_server.requests[3]["headers"]["Authorization"] == "Bearer brief-2"


def test_tokens_of_two_registrations_sharing_an_issuer_are_not_shared(wired, lms_server):
    from lti.models import Platform

    run_task(wired)
    other = Platform.objects.get(pk=wired.platform.pk)
    other.client_id = "another-institution"
    assert service_connector(platform=wired.platform)._scope_key(
        AGS_SCOPES
    ) != service_connector(platform=other)._scope_key(AGS_SCOPES)


def test_revoked_token_is_replaced_once(wired, lms_server):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (401, {"error": "invalid_token"}))
    lms_server.answer("/login/oauth2/token", (200, {"access_token": "token-2", "expires_in": 3600}))
    assert run_task(wired) == "sent"
    assert lms_server.paths() == [
        "/login/oauth2/token",
        SCORE_PATH,
        "/login/oauth2/token",
        SCORE_PATH,
    ]
    assert lms_server.requests[3]["headers"]["Authorization"] == "Bearer token-2"


def test_a_refusal_fails_the_row_with_its_reason_and_is_not_retried(wired, lms_server):
    lms_server.answer(
        "/api/lti/courses/42/line_items/7/scores", (422, {"error": "user not in course"})
    )
    result = run_task(wired)
    assert result == 'failed: service answered 422: {"error": "user not in course"}'
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH]
    row = Passback.objects.get()
    assert (row.status, row.attempts, row.next_attempt_at) == ("failed", 1, None)
    assert row.last_error == 'service answered 422: {"error": "user not in course"}'


def test_server_errors_are_retried_with_backoff_then_succeed(wired, lms_server):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (503, "busy"), (502, "busy"))
    assert run_task(wired) == "sent"  # eager mode retries at once instead of after the backoff
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH, SCORE_PATH, SCORE_PATH]
    assert Passback.objects.get().status == "sent"


def test_a_server_error_records_the_attempt_and_its_backoff(wired, lms_server):
    from django.utils import timezone

    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (500, "oops"))
    row = arm(wired)
    with pytest.raises(ServiceTemporaryError, match="service answered 500"):
        passback.passback_send(passback_id=row.pk)
    row.refresh_from_db()
    assert (row.status, row.attempts, row.last_error, row.claimed_at) == (
        "pending",
        1,
        "service answered 500",
        None,
    )
    wait = (row.next_attempt_at - timezone.now()).total_seconds()
    assert 8 < wait <= 10
    assert [passback.backoff_seconds(n) for n in (1, 2, 3, 7, 8)] == [10, 20, 40, 600, 600]


def test_the_last_temporary_failure_gives_up_visibly(wired, lms_server):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (500, "oops"))
    row = arm(wired)
    Passback.objects.filter(pk=row.pk).update(attempts=passback.MAX_ATTEMPTS - 1)
    with pytest.raises(ServiceTemporaryError):
        passback.passback_send(passback_id=row.pk)
    row.refresh_from_db()
    assert (row.status, row.attempts, row.next_attempt_at) == ("failed", 8, None)


def test_unreachable_lms_is_a_temporary_error(wired, lms_server):
    lms_server.stop()
    with pytest.raises(ServiceTemporaryError, match="platform unreachable"):
        passback.passback_send(passback_id=arm(wired).pk)


def test_token_endpoint_refusal_is_not_retried(wired, lms_server):
    lms_server.answers["/login/oauth2/token"] = [(401, {"error": "invalid_client"})]
    assert run_task(wired) == 'failed: token endpoint answered 401: {"error": "invalid_client"}'
    assert lms_server.paths() == ["/login/oauth2/token"]


def test_a_row_already_sent_or_being_sent_is_not_sent_again(wired, lms_server):
    from django.utils import timezone

    row = arm(wired)
    assert passback.passback_send(passback_id=row.pk) == "sent"
    assert passback.passback_send(passback_id=row.pk) == "not pending"
    row = arm(wired)
    Passback.objects.filter(pk=row.pk).update(claimed_at=timezone.now())  # another sender
    assert passback.passback_send(passback_id=row.pk) == "not pending"
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH]


def test_nothing_is_sent_for_an_assignment_without_points(wired, lms_server):
    wired.item.delete()
    assert run_task(wired) == "failed: the assignment has no points"
    assert lms_server.requests == []


def test_line_item_is_found_by_resource_link_on_the_second_page(wired, lms_server):
    link = wired.link
    link.lineitem_url = ""
    link.lineitems_url = lms_server.url + "/api/lti/courses/42/line_items"
    link.save()
    page_two = lms_server.url + "/api/lti/courses/42/line_items?page=2"
    lms_server.answer(
        "/api/lti/courses/42/line_items",
        (200, [{"id": lms_server.url + "/li/other", "resourceLinkId": "other"}]),
        (200, [{"id": lms_server.url + "/li/mine", "resourceLinkId": "link-9"}]),
    )
    lms_server.next_links["/api/lti/courses/42/line_items"] = [f'<{page_two}>; rel="next"']
    assert run_task(wired) == "sent"
    assert [(r["method"], r["path"]) for r in lms_server.requests] == [
        ("POST", "/login/oauth2/token"),
        ("GET", "/api/lti/courses/42/line_items"),
        ("GET", "/api/lti/courses/42/line_items?page=2"),
        ("POST", "/li/mine/scores"),
    ]
    link.refresh_from_db()
    assert link.lineitem_url == lms_server.url + "/li/mine"


def test_missing_line_item_is_created_once_with_the_assignment_maximum(wired, lms_server):
    link = wired.link
    link.lineitem_url = ""
    link.lineitems_url = lms_server.url + "/api/lti/courses/42/line_items"
    link.save()
    created = {"id": lms_server.url + "/li/new", "scoreMaximum": 4.0}
    lms_server.answer("/api/lti/courses/42/line_items", (200, []), (201, created))
    assert run_task(wired) == "sent"
    assert run_task(wired) == "sent"
    methods = [(r["method"], r["path"]) for r in lms_server.requests]
    assert methods == [
        ("POST", "/login/oauth2/token"),
        ("GET", "/api/lti/courses/42/line_items"),
        ("POST", "/api/lti/courses/42/line_items"),
        ("POST", "/li/new/scores"),
        ("POST", "/li/new/scores"),  # the second send reuses the stored line item
    ]
    body = json.loads(lms_server.requests[2]["body"])
    assert body == {
        "scoreMaximum": 4.0,
        "label": "Week 3",
        "resourceId": f"attnquiz-assignment-{wired.assignment.pk}",
        "resourceLinkId": "link-9",
        "tag": "attnquiz",
    }
    assert lms_server.requests[2]["headers"]["Content-Type"] == (
        "application/vnd.ims.lis.v2.lineitem+json"
    )


def test_a_link_without_line_item_nor_management_records_no_row(linked, answer):
    answer(linked, "weights")
    assert Passback.objects.count() == 0


def test_the_sweeper_sends_due_rows_oldest_first_and_skips_the_rest(wired, lms_server, settings):
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from courses.services import enrolment_ensure
    from lti.models import LtiIdentity

    settings.LTI_PASSBACK_SWEEP_GRACE_SECONDS = 0
    now = timezone.now()
    other = get_user_model().objects.create(username="other-student")
    enrolment_ensure(course=wired.course, user=other, role="student")
    LtiIdentity.objects.create(platform=wired.platform, sub="lms-student-18", user=other)
    late = Passback.objects.create(
        link=wired.link, user=other, changed_at=now - timedelta(seconds=5), next_attempt_at=now
    )
    early = Passback.objects.create(
        link=wired.link,
        user=wired.student,
        changed_at=now - timedelta(seconds=9),
        next_attempt_at=now - timedelta(seconds=1),
    )
    Passback.objects.filter(pk=late.pk).update(next_attempt_at=now + timedelta(minutes=5))
    assert passback.passbacks_send_due() == {"sent": 1, "failed": 0, "retry": 0, "skipped": 0}
    Passback.objects.filter(pk=late.pk).update(next_attempt_at=now)
    assert passback.passbacks_send_due() == {"sent": 1, "failed": 0, "retry": 0, "skipped": 0}
    users = [score_of(r)["userId"] for r in lms_server.requests if r["path"] == SCORE_PATH]
    assert users == [STUDENT_SUB, "lms-student-18"]
    assert set(Passback.objects.values_list("status", flat=True)) == {"sent"}
    assert early.pk != late.pk


def test_a_deleted_line_item_is_replaced_by_the_links_own(wired, lms_server):
    link = wired.link
    link.lineitems_url = lms_server.url + "/api/lti/courses/42/line_items"
    link.save()
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (404, {"error": "gone"}))
    created = {"id": lms_server.url + "/li/new", "scoreMaximum": 4.0}
    lms_server.answer("/api/lti/courses/42/line_items", (200, []), (201, created))
    assert run_task(wired) == "sent"
    assert [(r["method"], r["path"]) for r in lms_server.requests][1:] == [
        ("POST", SCORE_PATH),
        ("GET", "/api/lti/courses/42/line_items"),
        ("POST", "/api/lti/courses/42/line_items"),
        ("POST", "/li/new/scores"),
    ]
    link.refresh_from_db()
    assert link.lineitem_url == lms_server.url + "/li/new"


def test_a_deleted_line_item_without_management_fails_with_the_reason(wired, lms_server):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (404, {"error": "gone"}))
    assert run_task(wired) == 'failed: service answered 404: {"error": "gone"}'


def test_pending_manual_grading_then_the_instructors_grade_reach_the_lms(
    wired, lms_server, answer, django_capture_on_commit_callbacks, django_user_model
):
    from courses.models import AssignmentItem
    from exercises.models import ExerciseVersion
    from exercises.services import variant_get_or_create_for_item
    from grading import services as grading_services
    from instructor.services import submission_grade_manually

    version = ExerciseVersion.objects.filter(exercise__slug="qkv-misconception").latest("number")
    item = AssignmentItem.objects.create(
        assignment=wired.assignment, exercise_version=version, points=1, position=1
    )
    variant = variant_get_or_create_for_item(item=item, student=wired.student)
    with django_capture_on_commit_callbacks(execute=True):
        submission = grading_services.submission_create(
            variant=variant, student=wired.student, part="explain",
            raw_answer="Each token's one embedding goes through all three learned projections.",
        )
    submission.refresh_from_db()
    assert submission.status == "manual"
    grader = django_user_model.objects.create(username="grader")
    with django_capture_on_commit_callbacks(execute=True):
        submission_grade_manually(submission=submission, grader=grader, score=1.0)
    pending, graded = (score_of(r) for r in lms_server.requests if r["path"] == SCORE_PATH)
    assert (pending["gradingProgress"], pending["scoreGiven"], pending["scoreMaximum"]) == (
        "PendingManual", 0.0, 5.0,
    )
    assert graded["gradingProgress"] == "FullyGraded"
    assert 0.0 < graded["scoreGiven"] <= 1.0 and graded["scoreMaximum"] == 5.0
    assert pending["timestamp"] < graded["timestamp"]
