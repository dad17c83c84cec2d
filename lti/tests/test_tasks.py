"""Score passback against a real HTTP server on 127.0.0.1 playing the LMS's token and score endpoints."""

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

from lti import selectors, services, tasks
from lti.models import ToolKey

from .conftest import CLIENT_ID, STUDENT_SUB

SCORE_PATH = "/api/lti/courses/42/line_items/7/scores?type_id=3"


class FakeLmsServer:
    """Records every request; answers from per-path queues of (status, body)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.answers: dict[str, list[tuple[int, dict | str]]] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                queue = server.answers.get(self.path.split("?")[0], [])
                status, payload = queue.pop(0) if queue else (200, {})
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
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


@pytest.fixture
def wired(linked, lms_server):
    """The linked assignment, its line item and token endpoint on the local server."""
    linked.platform.auth_token_url = lms_server.url + "/login/oauth2/token"
    linked.platform.save()
    # The token cache outlives a test (it may be Redis): forget a token from an earlier one.
    cache.delete(services._token_cache_key(linked.platform, selectors.AGS_SCORE_SCOPE))
    linked.link.lineitem_url = lms_server.url + "/api/lti/courses/42/line_items/7?type_id=3"
    linked.link.save()
    lms_server.answer(
        "/login/oauth2/token",
        (200, {"access_token": "token-1", "token_type": "Bearer", "expires_in": 3600}),
    )
    return linked


def run_task(linked):
    return tasks.passback_score.apply(args=[linked.link.pk, linked.student.pk]).get()


def score_of(request) -> dict:
    return json.loads(request["body"])


def test_passback_posts_the_exact_token_request_and_score(wired, lms_server, answer, settings):
    settings.GRADING_MODE = "celery"  # grade here, but keep the passback for the task below
    from grading import services as grading_services

    submission = answer(wired, "weights")
    grading_services.submission_grade(submission_id=submission.pk)

    assert run_task(wired) == "sent"

    token_request, score_request = lms_server.requests
    assert token_request["path"] == "/login/oauth2/token"
    assert token_request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    form = dict(urllib.parse.parse_qsl(token_request["body"]))
    assert set(form) == {"grant_type", "client_assertion_type", "client_assertion", "scope"}
    assert form["grant_type"] == "client_credentials"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert form["scope"] == "https://purl.imsglobal.org/spec/lti-ags/scope/score"

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
    assert assertion["exp"] - assertion["iat"] == 300
    assert abs(assertion["iat"] - time.time()) < 30
    assert len(assertion["jti"]) == 32

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
    ) == (
        4.0,
        4.0,
        "Completed",
        "FullyGraded",
    )


def test_wrong_answer_still_reports_the_total(wired, lms_server, answer):
    answer(wired, "weights", "[0.25, 0.25, 0.25, 0.25]")
    score = score_of(lms_server.requests[-1])
    assert (score["scoreGiven"], score["scoreMaximum"]) == (0.0, 4.0)


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


def test_a_refusal_is_logged_not_retried(wired, lms_server):
    lms_server.answer(
        "/api/lti/courses/42/line_items/7/scores", (422, {"error": "user not in course"})
    )
    result = run_task(wired)
    assert result == 'refused: score endpoint answered 422: b\'{"error": "user not in course"}\''
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH]


def test_server_errors_are_retried_then_succeed(wired, lms_server, monkeypatch):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (503, "busy"), (502, "busy"))
    assert run_task(wired) == "sent"  # eager mode retries at once instead of after the backoff
    assert lms_server.paths() == ["/login/oauth2/token", SCORE_PATH, SCORE_PATH, SCORE_PATH]


def test_server_errors_raise_a_temporary_error(wired, lms_server):
    lms_server.answer("/api/lti/courses/42/line_items/7/scores", (500, "oops"))
    with pytest.raises(services.PassbackTemporaryError, match="score endpoint answered 500"):
        services.score_passback(resource_link_id=wired.link.pk, user_id=wired.student.pk)
    assert tasks.passback_score.autoretry_for == (services.PassbackTemporaryError,)
    assert tasks.passback_score.max_retries == 5


def test_unreachable_lms_is_a_temporary_error(wired, lms_server):
    lms_server.stop()
    with pytest.raises(services.PassbackTemporaryError, match="token endpoint unreachable"):
        services.score_passback(resource_link_id=wired.link.pk, user_id=wired.student.pk)


def test_token_endpoint_refusal_is_not_retried(wired, lms_server):
    lms_server.answers["/login/oauth2/token"] = [(401, {"error": "invalid_client"})]
    assert (
        run_task(wired) == 'refused: token endpoint answered 401: b\'{"error": "invalid_client"}\''
    )
    assert lms_server.paths() == ["/login/oauth2/token"]


def test_nothing_is_sent_for_a_link_without_points_or_line_item(wired, lms_server):
    wired.item.delete()
    assert run_task(wired) == "skipped: the assignment has no points"
    wired.link.lineitem_url = ""
    wired.link.save()
    assert run_task(wired) == "skipped: link gone, unmapped or without a line item"
    assert lms_server.requests == []


@pytest.mark.parametrize(
    "lineitem, expected",
    [
        (
            "https://lms.example/api/lti/courses/1/line_items/7",
            "https://lms.example/api/lti/courses/1/line_items/7/scores",
        ),
        ("https://lms.example/li/7/", "https://lms.example/li/7/scores"),
        (
            "https://lms.example/mod/lti/services.php/2/lineitems/5/lineitem?type_id=3",
            "https://lms.example/mod/lti/services.php/2/lineitems/5/lineitem/scores?type_id=3",
        ),
    ],
)
def test_scores_url_keeps_the_query_string(lineitem, expected):
    assert services.scores_url(lineitem) == expected
