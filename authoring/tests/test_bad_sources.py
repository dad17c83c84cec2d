"""Hostile or broken exercise sources: a clear, line-precise message, nothing saved, never a 500."""

import pytest
from django.urls import reverse

from exercises.models import Exercise

BAD_SOURCES = [
    ("", None),
    ("{{{{", "line"),
    ("- just\n- a list\n", None),
    ("slug: x\n", None),
    ("!!python/object/apply:os.system ['true']\n", None),
    ("a: &a [*a, *a]\n", "anchors and aliases"),
    ("a: &a [1, 2]\nb: [*a, *a, *a]\n", "anchors and aliases"),
    ("slug: ok\ntitle: t\nversion: 1\nprompt: p\nparameters:\n  X: {generator: derived, expr: \"__import__('os')\"}\nparts: []\n", "line 6"),
    ("\x00\x01binary", None),
]


@pytest.mark.parametrize(("source", "expected_fragment"), BAD_SOURCES)
def test_bad_source_is_explained_and_nothing_is_saved(client, demo, source, expected_fragment):
    assert client.login(username="instructor", password="attention-demo")
    before = Exercise.objects.count()
    response = client.post(reverse("authoring:new", args=["attention-101"]), {"source": source})
    assert response.status_code in (200, 422)
    html = response.content.decode()
    if expected_fragment:
        assert expected_fragment in html
    assert Exercise.objects.count() == before
