"""The limits every untrusted body passes: JSON depth before parsing, finite numbers, and no
NUL or lone surrogate stored by any model, whichever path wrote it."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from attnquiz.input_limits import (
    MAX_JSON_DEPTH, UnreadableJson, UnstorableText, json_depth_exceeds, json_loads_bounded,
    validate_storable_text,
)


@pytest.mark.parametrize("raw, too_deep", [
    (b"[" * 64 + b"]" * 64, False),
    (b"[" * 65 + b"]" * 65, True),
    (b'{"a":' * 65 + b"1" + b"}" * 65, True),
    (b'["' + b"[" * 100 + b'"]', False),  # brackets inside a string do not nest
    (b'["\\"' + b"[" * 100 + b'"]', False),  # nor after an escaped quote
    (b'["\\\\"' + b"[" * 100 + b'"]', True),  # an escaped backslash ends the string
    (b"[" * 200_000, True),
    (b"[1]" * 10_000, False),  # wide is fine
])
def test_depth_is_measured_on_the_raw_text(raw, too_deep):
    assert json_depth_exceeds(raw) is too_deep


@pytest.mark.parametrize("raw, message", [
    (b"[" * 1100 + b"]" * 1100, f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep."),
    (b"[1e400]", "The number 1e400 is too large."),
    (b"[NaN]", "NaN is not a JSON number."),
    (b'{"k\\u0000": 1}', "This text contains a NUL character (U+0000); remove it and send it again."),
    (b'["\\udc00"]', "This text contains a lone UTF-16 surrogate, which is not a character; remove it and send it again."),
    (b'{"answer": "a", "answer": ["b"]}', "The JSON gives the key 'answer' more than once in one object."),
    (b'[{"x": 1, "y": {"k": 1, "k": 2}}]', "The JSON gives the key 'k' more than once in one object."),
    (b"[" + b"9" * 301 + b"]", "A number in the JSON has more than 300 digits."),
    (b"[-" + b"9" * 5000 + b"]", "A number in the JSON has more than 300 digits."),
])
def test_the_bounded_loader_says_why_it_refuses(raw, message):
    with pytest.raises(UnreadableJson) as refused:
        json_loads_bounded(raw)
    assert str(refused.value) == message


def test_the_bounded_loader_reads_ordinary_json():
    assert json_loads_bounded(b'{"a": [1, 2.5, "\\ud83d\\ude00"], "b": null}') == {"a": [1, 2.5, "\U0001f600"], "b": None}
    assert json_loads_bounded(b"[" * 64 + b"]" * 64) is not None
    assert json_loads_bounded(b'[{"k": 1}, {"k": 2}, ' + b"9" * 300 + b"]") == [{"k": 1}, {"k": 2}, int("9" * 300)]


def test_no_model_stores_a_nul_or_a_lone_surrogate(db, django_user_model):
    from courses.models import Course

    with pytest.raises(UnstorableText) as refused:
        Course.objects.create(slug="c1", title="Attention\x00")
    assert refused.value.field == "title"
    user = django_user_model.objects.create(username="someone")
    user.first_name = "Ada\ud800"
    with pytest.raises(UnstorableText):
        user.save()
    validate_storable_text({"nested": ["fine", {"ok": "é"}]})  # no error


def test_a_nul_in_an_api_token_name_is_a_422_not_a_500(client, demo):
    from api.models import ApiToken

    assert client.login(username="student1", password="attention-demo")
    response = client.post(reverse("api:tokens"), {"name": "laptop\x00", "scope": "read", "lifetime_days": "30"})
    assert response.status_code == 422
    assert "The token&#x27;s name contains a NUL character (U+0000); choose another." in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_a_page_whose_save_is_refused_answers_400():
    # Forms refuse NUL themselves, beside the field; a write without a form meets the model guard.
    from attnquiz.input_limits import StorableTextMiddleware

    response = StorableTextMiddleware(lambda r: None).process_exception(
        type("R", (), {"path": "/teach/"})(), UnstorableText(reason="contains a NUL character (U+0000)", field="title"),
    )
    assert response.status_code == 400
    assert "The field “title” contains a NUL character (U+0000). Nothing was saved" in response.content.decode()


def test_the_answer_preview_refuses_deep_json_with_400(client, demo):
    assert client.login(username="student1", password="attention-demo")
    body = json.dumps({"type": "matrix", "options": {}, "answer": "1"})[:-1] + ', "x": ' + "[" * 1100 + "]" * 1100 + "}"
    response = client.post(reverse("preview"), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "Malformed preview request: The JSON is nested more than 64 levels deep."
