"""A body sent with "Transfer-Encoding: chunked" has no Content-Length, and Django read it as
empty: a chunked answer was refused as "field required", a chunked form page lost its fields.
gunicorn de-chunks it and sets ``wsgi.input_terminated``; the body is then read, bounded by
DATA_UPLOAD_MAX_MEMORY_SIZE. A server that does not end the stream gets 411, nothing read.

The test client sends a request as gunicorn hands it to the app (below); the last test runs a
real gunicorn."""

from __future__ import annotations

import http.client
import io
import json
import socket

import pytest
from django.db import connection
from django.test import Client

from api.models import ApiToken
from api.tests.conftest import bearer
from grading.models import Submission


class ChunkedClient(Client):
    """Sends each body as gunicorn passes a chunked one on: de-chunked in ``wsgi.input``,
    ``Transfer-Encoding: chunked``, no CONTENT_LENGTH, and ``wsgi.input_terminated`` unless
    ``terminated=False`` (a server that hands over the raw stream, as runserver's)."""

    def __init__(self, *, terminated: bool = True, **defaults):
        super().__init__(**defaults)
        self.terminated = terminated

    def _base_environ(self, **request):
        environ = super()._base_environ(**request)
        if environ["REQUEST_METHOD"] != "POST":
            return environ
        if "CONTENT_LENGTH" in environ:  # the test client's body (none for a POST without data)
            environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(int(environ.pop("CONTENT_LENGTH"))))
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        if self.terminated:
            environ["wsgi.input_terminated"] = True
        return environ


RELEASE = "/api/v1/courses/attn/assignments/week1/release/"


def submit_url(world) -> str:
    return f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"


def post_json(client, url, data):
    return client.post(url, json.dumps(data), content_type="application/json")


def test_a_chunked_answer_is_read_and_stored(world):
    student = ChunkedClient(**bearer(world.tokens["student"]))
    student.get(f"/api/v1/exercises/{world.item.pk}/")
    response = post_json(student, submit_url(world), {"answer": "7"})
    assert response.status_code == 202
    submission = Submission.objects.get()
    assert (response.json()["id"], submission.part, submission.raw_answer) == (submission.pk, "product", "7")


def test_a_chunked_release_runs_with_its_action(world):
    response = post_json(ChunkedClient(**bearer(world.tokens["instructor"])), RELEASE, {"action": "release"})
    assert response.status_code == 200
    world.assignment.refresh_from_db()
    assert world.assignment.grades_released_at is not None


def test_a_chunked_body_at_the_limit_is_read_and_one_byte_more_is_413(world, settings):
    body = json.dumps({"answer": "7"})
    student = ChunkedClient(**bearer(world.tokens["student"]))
    student.get(f"/api/v1/exercises/{world.item.pk}/")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) - 1
    refused = student.post(submit_url(world), body, content_type="application/json")
    assert refused.status_code == 413
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json() == {
        "type": "urn:attnquiz:problem:too-large", "title": "Request Entity Too Large", "status": 413,
        "detail": "attnquiz accepts at most 0 kB in one form or request (files are uploaded separately). "
                  "Nothing was saved; shorten it and send it again.",
    }
    assert Submission.objects.count() == 0
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body)
    assert student.post(submit_url(world), body, content_type="application/json").status_code == 202
    assert Submission.objects.get().raw_answer == "7"


def test_a_chunked_body_the_server_does_not_end_is_411_and_not_read(world):
    student = ChunkedClient(terminated=False, **bearer(world.tokens["student"]))
    response = post_json(student, submit_url(world), {"answer": "7"})
    assert response.status_code == 411
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "urn:attnquiz:problem:length-required", "title": "Length Required", "status": 411,
        "detail": "This server needs a Content-Length for a request with a body. "
                  "Nothing was done; send it again with its length (not chunked).",
    }
    assert Submission.objects.count() == 0


def test_a_chunked_form_body_to_a_rest_endpoint_is_still_415(world):
    instructor = ChunkedClient(**bearer(world.tokens["instructor"]))
    response = instructor.post(RELEASE, "action=release", content_type="application/x-www-form-urlencoded")
    assert (response.status_code, response.json()["type"]) == (415, "urn:attnquiz:problem:unsupported-media-type")
    world.assignment.refresh_from_db()
    assert world.assignment.grades_released_at is None


def test_a_page_reads_a_chunked_form(world):
    client = ChunkedClient()
    client.force_login(world.people.student)
    response = client.post("/api/tokens/", {"name": "laptop", "scope": "read", "lifetime_days": "30"})
    assert response.status_code == 201  # the token made, shown once
    assert list(ApiToken.objects.filter(name="laptop").values_list("user__username", "scope")) == [
        ("sam", "read"),
    ]


def test_a_page_refuses_a_chunked_form_the_server_does_not_end_with_411(world):
    client = ChunkedClient(terminated=False)
    client.force_login(world.people.student)
    response = client.post("/api/tokens/", {"name": "laptop", "scope": "read", "lifetime_days": "30"})
    assert response.status_code == 411
    assert not ApiToken.objects.filter(name="laptop").exists()
    page = client.post("/login/", {"username": "sam", "password": "x"})
    assert page.status_code == 411 and "<title>A request without a length" in page.content.decode()


class BrokenChunks(io.RawIOBase):
    """gunicorn's reader meeting a malformed chunk: it raises its own parse error."""

    def read(self, size=-1):
        raise ValueError("Invalid chunk size: b'zz'")


def test_a_malformed_chunked_body_is_400_and_nothing_is_done(world):
    student = ChunkedClient(**bearer(world.tokens["student"]))
    response = student.generic("POST", submit_url(world), b"", content_type="application/json",
                               **{"wsgi.input": BrokenChunks()})
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "The chunked body was malformed or cut off. Nothing was done; send it again."
    )
    assert Submission.objects.count() == 0


def test_a_request_with_a_length_is_read_as_before(world):
    body = {"action": "release"}
    response = post_json(Client(**bearer(world.tokens["instructor"])), RELEASE, body)
    assert response.status_code == 200


# --- A real gunicorn: its de-chunking reader and its environ (no data needed: nothing is stored) ---

GUNICORN_LIMIT = 64  # DATA_UPLOAD_MAX_MEMORY_SIZE of the gunicorn below


@pytest.fixture
def gunicorn_web(db, settings):
    pytest.importorskip("gunicorn")
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (make test provides it)")
    from grading.harness import Gunicorn, database_url, stack_env

    env = stack_env(
        database_url=database_url(connection.settings_dict, vendor=connection.vendor),
        redis_url=settings.REDIS_URL, secret_key=settings.SECRET_KEY,
        variant_seed_secret=settings.VARIANT_SEED_SECRET,
    )
    env["DATA_UPLOAD_MAX_MEMORY_SIZE"] = str(GUNICORN_LIMIT)
    web = Gunicorn(env=env, workers=1, threads=1)
    web.start()
    yield web
    web.kill()  # nothing to finish: a graceful stop only adds seconds


def chunked_post(web, content_type: str, pieces: list[bytes]) -> tuple[int, dict]:
    connection_ = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
    try:  # an iterable body: http.client sends it with Transfer-Encoding: chunked, no length
        connection_.request("POST", RELEASE, body=iter(pieces), headers={"Content-Type": content_type},
                            encode_chunked=True)
        response = connection_.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection_.close()


def test_behind_gunicorn_a_chunked_body_is_read_and_bounded_and_bad_framing_is_400(gunicorn_web):
    # Read and parsed: the form's fields are seen, so the REST API refuses it (read as empty,
    # it went on to the view, and this anonymous request was a 401).
    status, body = chunked_post(gunicorn_web, "application/x-www-form-urlencoded", [b"action=", b"release"])
    assert (status, body["type"]) == (415, "urn:attnquiz:problem:unsupported-media-type")
    # Bounded: one byte over the limit, in small chunks, is a 413; at the limit it is read
    # and goes on to the view (a 401: this request has no token).
    def json_of_length(length: int) -> list[bytes]:
        return [b"{", b'"action": "' + b"r" * (length - 14) + b'"', b"}"]

    assert [len(b"".join(json_of_length(n))) for n in (GUNICORN_LIMIT, GUNICORN_LIMIT + 1)] == [64, 65]
    status, body = chunked_post(gunicorn_web, "application/json", json_of_length(GUNICORN_LIMIT + 1))
    assert (status, body["type"]) == (413, "urn:attnquiz:problem:too-large")
    status, body = chunked_post(gunicorn_web, "application/json", json_of_length(GUNICORN_LIMIT))
    assert (status, body["type"]) == (401, "urn:attnquiz:problem:not-authenticated")

    with socket.create_connection(("127.0.0.1", gunicorn_web.port), timeout=10) as raw:
        raw.sendall(
            b"POST " + RELEASE.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
        )
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"The chunked body was malformed or cut off." in answer
