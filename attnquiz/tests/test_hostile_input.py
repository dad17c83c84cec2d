"""Every entry point that reads user input answers hostile bodies with a 4xx and a message.

The corpus: deep nesting, huge numbers, invalid UTF-8, lone surrogates, NUL, 1 MB and
20 MB bodies. Fed to the answer submit (each answer type), the live answer preview, the
authoring check, create, edit and import, and the sign-in form.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from courses.models import AssignmentItem
from exercises.services import variant_get_or_create_for_item

FORM = "application/x-www-form-urlencoded"
ONE_MB = 1_000_000

HOSTILE_TEXT = {
    "deep parentheses": "(" * 5000 + "d_k" + ")" * 5000,
    "deep brackets": "[" * 5000 + "]" * 5000,
    "deep braces": "{" * 3000 + "}" * 3000,
    "huge integer": "9" * 10_000,
    "huge exponent": "d_k^500",
    "power tower": "10^10^10^10^10",
    "float overflow": "1e999999",
    "NUL and controls": "\x00\x01\x02",
    "just under 20 kB of digits": "1" * 19_990,
}
# Raw form bodies: what a browser would never send but a script can.
HOSTILE_FORM_BODIES = {
    "invalid UTF-8": b"answer=\xff\xfe\xfd",
    "percent-encoded invalid UTF-8": b"answer=%ff%fe%fd",
    "percent-encoded lone surrogate": b"answer=%ED%A0%80x",
    "1 MB answer": b"answer=" + b"1" * ONE_MB,
    "20 MB answer": b"answer=" + b"1" * (20 * ONE_MB),
}

PARTS_BY_TYPE = {
    "matrix": ("attention-weights-one-query", "weights"),
    "matrix_expression": ("attention-as-matrix-expression", "formula"),
    "choice": ("equal-keys", "equal_pair"),
    "free_text": ("equal-keys", "why_equal"),
    "numeric": ("multi-head-dimensions", "per_head_dk"),
    "symbolic": ("multi-head-dimensions", "scale_formula"),
    "derivation": ("score-variance", "unit_variance"),
}


def form_body(text: str) -> bytes:
    from urllib.parse import urlencode

    return urlencode({"answer": text}).encode()


def assert_clear_refusal(response, *, json_body: bool = False) -> None:
    assert response.status_code < 500, response.content[:300]
    if json_body:
        payload = response.json()
        assert response.status_code == 200 or payload["error"], payload
    else:
        assert response.content.strip(), "an empty answer is not a message"
    if response.status_code == 413:
        text = response.json()["error"] if json_body else response.content.decode()
        assert "too large" in text or "too long" in text


@pytest.fixture
def student_client(client, demo):
    assert client.login(username="student1", password="attention-demo")
    return client


def variant_for(demo, student, slug):
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)
    return variant_get_or_create_for_item(item=item, student=student)


@pytest.mark.parametrize("answer_type", sorted(PARTS_BY_TYPE))
def test_submit_answers_every_hostile_body_with_a_message(student_client, demo, answer_type, django_user_model):
    slug, part = PARTS_BY_TYPE[answer_type]
    variant = variant_for(demo, django_user_model.objects.get(username="student1"), slug)
    demo.assignment.attempts_per_part = 0
    demo.assignment.save()
    url = reverse("submit", args=[variant.pk, part])
    bodies = {name: form_body(text) for name, text in HOSTILE_TEXT.items()} | HOSTILE_FORM_BODIES
    for name, body in bodies.items():
        response = student_client.generic("POST", url, body, content_type=FORM, HTTP_HX_REQUEST="true")
        assert_clear_refusal(response), name
    oversized = student_client.generic(
        "POST", url, HOSTILE_FORM_BODIES["20 MB answer"], content_type=FORM, HTTP_HX_REQUEST="true"
    )
    assert oversized.status_code == 413
    assert "attnquiz accepts at most 1,000 kB in one form or request" in oversized.content.decode()


def test_the_matrix_expression_answer_d_k_to_the_500_is_graded_or_refused_not_a_500(
    student_client, demo, django_user_model
):
    variant = variant_for(demo, django_user_model.objects.get(username="student1"), "attention-as-matrix-expression")
    response = student_client.post(
        reverse("submit", args=[variant.pk, "formula"]), {"answer": "d_k^500"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code in (200, 422)
    assert 'data-result="pending"' in html or 'data-result="graded"' in html or "did not use an attempt" in html


UNREADABLE, CHECKER_FAULT = "We could not read that answer ", "We could not check that answer"


def test_a_parser_exception_of_any_class_is_a_422_that_says_whose_fault_it_is(
    student_client, demo, django_user_model, monkeypatch
):
    """What an answer too big or too deep raises is the answer's fault; any other class is
    a fault in the checker, which must not read as the student's input error. Never a 500."""
    from grading.core import answers

    variant = variant_for(demo, django_user_model.objects.get(username="student1"), "attention-as-matrix-expression")
    for exception, message in (
        (OverflowError("x"), UNREADABLE), (RecursionError(), UNREADABLE), (MemoryError(), UNREADABLE),
        (UnicodeEncodeError("utf-8", "", 0, 1, "x"), UNREADABLE), (KeyError("k"), CHECKER_FAULT),
        (AttributeError("shape"), CHECKER_FAULT),
    ):
        def explode(*args, **kwargs):
            raise exception

        monkeypatch.setattr(answers, "parse", explode)
        response = student_client.post(
            reverse("submit", args=[variant.pk, "formula"]), {"answer": "Q K^T"}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 422, exception
        assert message in response.content.decode(), exception
        preview = student_client.generic(
            "POST", reverse("preview"), b'{"type": "symbolic", "answer": "x"}', content_type="application/json"
        )
        assert (preview.status_code, preview.json()["error"][:30]) == (422, message[:30]), exception


def nested_json(depth: int) -> bytes:
    return ('{"type": "symbolic", "answer": ' + "[" * depth + "]" * depth + "}").encode()


PREVIEW_BODIES = {
    "deep JSON nesting": nested_json(100_000),
    "deep JSON nesting under the size cap": nested_json(9_000),
    "invalid UTF-8": b'{"type": "numeric", "answer": "\xff\xfe"}',
    "lone surrogate": b'{"type": "symbolic", "answer": "\\ud800 x"}',
    "lone surrogate in a type": b'{"type": "\\udfff", "answer": "1"}',
    "huge number": b'{"type": "numeric", "answer": ' + b"9" * 10_000 + b"}",
    "huge float": b'{"type": "numeric", "answer": 1e999999}',
    "not an object": b"[1, 2, 3]",
    "1 MB": b'{"type": "numeric", "answer": "' + b"1" * ONE_MB + b'"}',
    "20 MB": b'{"type": "numeric", "answer": "' + b"1" * (20 * ONE_MB) + b'"}',
}


def test_the_answer_preview_answers_every_hostile_body_with_a_message(student_client):
    url = reverse("preview")
    for name, body in PREVIEW_BODIES.items():
        response = student_client.generic("POST", url, body, content_type="application/json")
        assert_clear_refusal(response, json_body=True), name
    for answer_type in sorted(PARTS_BY_TYPE):
        for name, text in HOSTILE_TEXT.items():
            body = json.dumps({"type": answer_type, "answer": text}).encode()
            response = student_client.generic("POST", url, body, content_type="application/json")
            assert_clear_refusal(response, json_body=True), (answer_type, name)


HOSTILE_SOURCES = {
    "5,000 nested brackets": "slug: x\nparameters: " + "[" * 5000 + "]" * 5000 + "\n",
    "5,000 nested braces": "a: " + "{" * 5000 + "}" * 5000,
    "a 10,000-digit number": "slug: x\nversion: " + "9" * 10_000 + "\n",
    "infinite redraws": "gates:\n  max_attempts: .inf\n",
    "a billion redraws": "gates:\n  max_attempts: 1000000000\n",
    "NUL": "slug: \x00\n",
    "deep expression": "parameters:\n  a: {generator: derived, expr: \"" + "-" * 1500 + "1\"}\n",
}


@pytest.fixture
def instructor_client(client, demo):
    assert client.login(username="instructor", password="attention-demo")
    return client


@pytest.fixture
def draft(demo, django_user_model):
    from authoring.services import exercise_create
    from authoring.tests.factories import product_yaml

    return exercise_create(
        course=demo.course, actor=django_user_model.objects.get(username="instructor"), source=product_yaml()
    )


def test_authoring_answers_every_hostile_source_with_a_message(instructor_client, demo, draft):
    from exercises.models import Exercise

    course = demo.course.slug
    check = reverse("authoring:check", args=[course])
    new = reverse("authoring:new", args=[course])
    edit = reverse("authoring:edit", args=[course, draft.exercise.slug, draft.number])
    importer = reverse("authoring:import", args=[course])
    exercises_before = Exercise.objects.count()
    for name, source in HOSTILE_SOURCES.items():
        for url in (check, new, edit):
            response = instructor_client.post(url, {"source": source, "seed": "0"})
            assert_clear_refusal(response), (name, url)
            html = response.content.decode()
            assert 'role="alert"' in html or 'class="bad"' in html or 'class="errors"' in html, (name, url)
        upload = SimpleUploadedFile("hostile.yaml", source.encode("utf-8", "surrogatepass"))
        assert_clear_refusal(instructor_client.post(importer, {"file": upload})), name
    for name, body in {"invalid UTF-8": b"\xff\xfe\xfd: 1\n", "lone surrogate": b"a: \xed\xa0\x80\n"}.items():
        upload = SimpleUploadedFile("hostile.yaml", body)
        response = instructor_client.post(importer, {"file": upload})
        assert response.status_code == 422
        assert "not UTF-8 text" in response.content.decode(), name
    for name, body in HOSTILE_FORM_BODIES.items():
        for url in (check, new, edit):
            body = body.replace(b"answer=", b"source=")
            assert_clear_refusal(instructor_client.generic("POST", url, body, content_type=FORM)), (name, url)
    assert Exercise.objects.count() == exercises_before
    draft.refresh_from_db()
    assert "slug: product" in draft.source


def test_sign_in_answers_every_hostile_body_with_a_message(client, demo, settings):
    settings.AXES_ENABLED = True
    url = reverse("login")
    for name, text in HOSTILE_TEXT.items():
        response = client.post(url, {"username": text, "password": text})
        assert_clear_refusal(response), name
    for name, body in HOSTILE_FORM_BODIES.items():
        body = body.replace(b"answer=", b"username=") + b"&password=x"
        assert_clear_refusal(client.generic("POST", url, body, content_type=FORM)), name
