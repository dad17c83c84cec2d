"""The pending marker of a result: without JavaScript nothing polls it, so on the
exercise page it links to the page again (round 3 walk, JavaScript off)."""

from __future__ import annotations

from types import SimpleNamespace

from django.template.loader import render_to_string
from django.test import RequestFactory


def pending_html(*, path: str, in_page: bool) -> str:
    submission = SimpleNamespace(pk=7, part="weights", attempt=2, raw_answer={"cells": ["1"]})
    request = RequestFactory().get(path)
    return render_to_string(
        "grading/_result.html",
        {"submission": submission, "pending": True, "in_page": in_page, "request": request},
    )


def test_on_the_page_the_pending_marker_links_back_to_the_part():
    html = pending_html(path="/exercises/12/", in_page=True)
    assert "Grading your answer…" in html
    assert (
        '<noscript> <a href="/exercises/12/#part-weights">Reload the page to see your grade</a>.</noscript>'
        in html
    )


def test_a_practice_page_links_to_itself():
    html = pending_html(path="/practice/40/", in_page=True)
    assert '<a href="/practice/40/#part-weights">' in html


def test_the_fragment_sent_to_htmx_has_no_link():
    html = pending_html(path="/grading/variants/3/parts/weights/submit/", in_page=False)
    assert "Grading your answer…" in html
    assert "<noscript>" not in html
    assert "Reload the page" not in html
