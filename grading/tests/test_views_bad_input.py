"""Bad requests to the student endpoints get a clear answer and lose nothing; never a 500."""

import json

import pytest
from django.urls import reverse

from grading.models import Submission

LONG = "1" * 30_000


def submit_url(variant, part="weights"):
    return reverse("submit", args=[variant.pk, part])


@pytest.fixture
def logged_in(client, variant):
    assert client.login(username="student1", password="attention-demo")
    return client


@pytest.mark.parametrize(
    ("form", "status", "message"),
    [
        ({}, 422, "No answer was entered."),
        ({"answer": ""}, 422, "The answer is empty"),
        ({"answer": LONG}, 422, "That answer is too long"),
        ({"answer": "[1, 2, 3, nan]"}, 422, ""),
        ({"answer": "\x00\x01"}, 422, ""),
        ({"answer": "__import__('os').system('true')"}, 422, ""),
        ({"cell-0-0": "1", "cell-64-0": "2"}, 422, "at most 64 rows and columns"),
        ({"cell-0-0": "0.1", "cell-0-1": "x", "cell-0-2": "0.2", "cell-0-3": "0.3"}, 422, ""),
        ({"cell-0-0": "1e999", "cell-0-1": "0", "cell-0-2": "0", "cell-0-3": "0"}, 422, ""),
    ],
)
def test_bad_answers_are_explained_and_cost_no_attempt(logged_in, variant, form, status, message):
    response = logged_in.post(submit_url(variant), form, HTTP_HX_REQUEST="true")
    assert response.status_code == status
    html = response.content.decode()
    assert "did not use an attempt" in html
    assert message in html
    assert Submission.objects.count() == 0


def test_unknown_part_is_explained(logged_in, variant):
    response = logged_in.post(submit_url(variant, "no-such-part"), {"answer": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "has no part" in response.content.decode()


def test_get_on_submit_is_refused_politely(logged_in, variant):
    assert logged_in.get(submit_url(variant)).status_code == 405


@pytest.mark.parametrize(
    "body",
    [
        "",
        "[]",
        "null",
        '{"type": 5}',
        '{"type": "symbolic", "options": []}',
        '{"type": "symbolic", "answer": "x", "options": {"symbols": 5}}',
        '{"type": "symbolic", "answer": "x", "options": {"symbols": {"x": "imaginary-ish"}}}',
        '{"type": "matrix_expression", "answer": "Q", "options": {"matrices": "nope"}}',
        '{"type": "derivation", "answer": ["a"], "options": {"random_variables": 3}}',
        '{"type": "numeric", "answer": {"a": 1}}',
        "{" * 10_000,
    ],
)
def test_preview_never_fails_on_a_malformed_request(logged_in, body):
    response = logged_in.post(reverse("preview"), data=body, content_type="application/json")
    assert response.status_code in (200, 400)
    payload = response.json()
    assert payload["latex"] is None
    assert payload["error"]


def test_result_of_a_missing_submission_is_404(logged_in):
    assert logged_in.get(reverse("submission", args=[10**9])).status_code == 404
    assert logged_in.get(reverse("submission", args=[10**9]) + "?wait=1").status_code == 404


def test_preview_accepts_a_good_request(logged_in):
    body = json.dumps({"type": "symbolic", "answer": "2 d_k", "options": {"symbols": {"d_k": "positive"}}})
    response = logged_in.post(reverse("preview"), data=body, content_type="application/json")
    assert response.json() == {"latex": "2 d_{k}", "error": None}


def test_a_format_error_reads_as_a_sentence_before_the_note_on_attempts(logged_in, variant):
    form = {"cell-0-0": "", "cell-0-1": "0.2", "cell-0-2": "0.3", "cell-0-3": "0.4"}
    html = logged_in.post(submit_url(variant), form, HTTP_HX_REQUEST="true").content.decode()
    assert "⚠</span> The first row&#x27;s first entry is empty. <small>This did not use an attempt.</small>" in html


def test_a_grid_with_several_unreadable_cells_names_every_one(logged_in, variant):
    form = {"cell-0-0": "a", "cell-0-1": "", "cell-0-2": "0.3", "cell-0-3": "1e999"}
    response = logged_in.post(submit_url(variant), form, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    html = response.content.decode()
    assert ("⚠</span> 3 entries cannot be read: the first row&#x27;s first entry (&#x27;a&#x27;), the first row&#x27;s "
            "second entry (empty) and the first row&#x27;s fourth entry (&#x27;1e999&#x27;). The first row&#x27;s first "
            "entry: could not read &#x27;a&#x27; as a number: it contains letters; type a number such as 0.25 or 1/4. "
            "<small>This did not use an attempt.</small>") in html
    assert Submission.objects.count() == 0
