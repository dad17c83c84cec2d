"""An answer sent without JavaScript that is not taken (a format error, a refusal) comes back
on the exercise page once: its part's inputs hold what was typed, the error beside them;
the next page shows the stored latest answer again."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.http import QueryDict
from django.urls import reverse

from authoring.tests.factories import (
    assignment_create, people_create, product_yaml, published_version, variant_for,
)
from courses.models import AssignmentItem, AssignmentKind
from exams import services as exam_services
from exercises.models import Variant
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.refused_answers import (
    MAX_KEPT_ANSWERS, SESSION_KEY, RefusedAnswer, refused_answer_keep, refused_answers_take,
)

WORKED_EXAMPLE = "attention-weights-one-query"  # part (b) "output": a 1 × 4 grid
SCORE_VARIANCE = "score-variance"  # (e) "textbook_std": numeric, (a) "unit_variance": a derivation
EQUAL_KEYS = "equal-keys"  # (a) "equal_pair": a choice


def form(text: str) -> QueryDict:
    return QueryDict(text)


# --- keeping and taking, on a plain dict as the session ---


def test_a_kept_grid_is_taken_once_with_its_cells_as_typed_and_nothing_else_of_the_form():
    session = {}
    post = form("csrfmiddlewaretoken=t&submission_key=abcdefgh12&cell-0-0=0.1&cell-0-1=1,,2&cell-0-2=&cell-1-3=+4 ")
    assert refused_answer_keep(
        session, variant_id=7, part="output", post=post, error="cell 2 cannot be read", unreadable=True,
        max_bytes=20_000,
    )
    assert session[SESSION_KEY] == {
        "7:output": {
            "error": "cell 2 cannot be read", "unreadable": True,
            "cells": {"0-0": "0.1", "0-1": "1,,2", "1-3": " 4 "}, "answers": [],
        },
    }
    assert refused_answers_take(session, variant_id=7) == {
        "output": RefusedAnswer(
            error="cell 2 cannot be read", unreadable=True,
            cells={(0, 0): "0.1", (0, 1): "1,,2", (1, 3): " 4 "}, answers=[],
        ),
    }
    assert session == {}
    assert refused_answers_take(session, variant_id=7) == {}


def test_texts_and_choices_are_kept_as_sent():
    session = {}
    refused_answer_keep(session, variant_id=3, part="a", post=form("answer=1..2"), error="e",
                        unreadable=True, max_bytes=20_000)
    refused_answer_keep(session, variant_id=3, part="b", post=form("answer=x&answer=y&multiple=1"),
                        error="f", unreadable=False, max_bytes=20_000)
    taken = refused_answers_take(session, variant_id=3)
    assert taken == {
        "a": RefusedAnswer(error="e", unreadable=True, answers=["1..2"]),
        "b": RefusedAnswer(error="f", unreadable=False, answers=["x", "y"]),
    }
    assert (taken["a"].text, taken["b"].text) == ("1..2", "")


def test_taking_one_variants_answers_leaves_the_others():
    session = {}
    for variant_id in (1, 2):
        refused_answer_keep(session, variant_id=variant_id, part="p", post=form("answer=v"), error="e",
                            unreadable=True, max_bytes=20_000)
    assert list(refused_answers_take(session, variant_id=1)) == ["p"]
    assert list(session[SESSION_KEY]) == ["2:p"]
    assert refused_answers_take(session, variant_id=12) == {}  # "1" is not a prefix of "12:"


def test_an_answer_larger_than_the_limit_is_not_kept():
    session = {}
    assert not refused_answer_keep(session, variant_id=1, part="p", post=form("answer=" + "1" * 200),
                                   error="too long", unreadable=True, max_bytes=200)
    assert session == {}


def test_only_the_newest_few_answers_are_kept():
    session = {}
    for variant_id in range(MAX_KEPT_ANSWERS + 2):
        refused_answer_keep(session, variant_id=variant_id, part="p", post=form("answer=v"), error="e",
                            unreadable=True, max_bytes=20_000)
    assert list(session[SESSION_KEY]) == [f"{n}:p" for n in range(2, MAX_KEPT_ANSWERS + 2)]


def test_a_malformed_entry_reads_as_nothing_typed():
    session = {SESSION_KEY: {"5:p": "junk", "5:q": {"cells": {"a-b": "1", "0-1": 2}, "answers": "x"}}}
    assert refused_answers_take(session, variant_id=5) == {
        "p": RefusedAnswer(error=""), "q": RefusedAnswer(error=""),
    }


# --- the pages, without JavaScript (no HX-Request header) ---


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def student_client(client, student):
    client.force_login(student)
    return client


def item_of(demo, slug: str) -> AssignmentItem:
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)


def own_variant(demo, student, slug: str) -> Variant:
    return variant_get_or_create_for_item(item=item_of(demo, slug), student=student)


def stored(variant, part: str, raw_answer) -> Submission:
    return Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=1,
        status=SubmissionStatus.GRADED, score=0.0, correct=False,
    )


def send_without_javascript(client, variant, part: str, data: dict) -> str:
    """Post as a plain form does and follow the redirect: the page it lands on."""
    response = client.post(reverse("submit", args=[variant.pk, part]), data)
    assert response.status_code == 302
    assert response["Location"].endswith(f"#part-{part}")
    page = client.get(response["Location"].split("#")[0])
    assert page.status_code == 200
    return page.content.decode()


def grid_values(html: str, part: str) -> list[str | None]:
    grid = re.search(r'<div class="matrix-grid" id="grid-%s".*?</div>\s*</div>' % part, html, re.S)
    assert grid, html
    values = []
    for tag in re.findall(r"<input [^>]*>", grid[0]):
        value = re.search(r' value="([^"]*)"', tag)
        values.append(html_lib.unescape(value[1]) if value else None)
    return values


def input_value(html: str, part: str) -> str | None:
    tag = re.search(r'<input id="answer-%s" [^>]*>' % part, html, re.S)
    assert tag, html
    value = re.search(r' value="([^"]*)"', tag[0])
    return html_lib.unescape(value[1]) if value else None


def textarea_value(html: str, part: str) -> str:
    body = re.search(r'<textarea id="answer-%s" [^>]*>(.*?)</textarea>' % part, html, re.S)
    assert body, html
    return html_lib.unescape(body[1][1:] if body[1].startswith("\n") else body[1])


def result_text(html: str, part: str) -> str:
    result = re.search(r'<div class="result" id="result-%s"[^>]*>(.*?)</div>\s*</section>' % part, html, re.S)
    assert result, html
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", result[1])).split())


def test_a_grid_that_cannot_be_read_comes_back_as_typed_with_its_error_once(student_client, demo, student):
    variant = own_variant(demo, student, WORKED_EXAMPLE)
    stored(variant, "output", [["1", "2", "3", "4"]])
    html = send_without_javascript(
        student_client, variant, "output",
        {"cell-0-0": "0.5", "cell-0-1": "1,,2", "cell-0-2": "", "cell-0-3": "<b>4</b>"},
    )
    assert grid_values(html, "output") == ["0.5", "1,,2", None, "<b>4</b>"]
    assert "&lt;b&gt;4&lt;/b&gt;" in html and "<b>4</b>" not in html
    error = result_text(html, "output")
    assert error.startswith("⚠ Part (b): ") and error.endswith("This did not use an attempt.")
    assert "second entry" in error, error
    assert 'data-result="invalid"' in html
    assert Submission.objects.filter(variant=variant, part="output").count() == 1  # nothing stored
    # Shown once: the next page holds the stored latest answer again, without the error.
    html = student_client.get(reverse("exercise", args=[variant.assignment_item_id])).content.decode()
    assert grid_values(html, "output") == ["1", "2", "3", "4"]
    assert "Part (b): " not in html
    assert SESSION_KEY not in student_client.session


def test_a_text_answer_that_cannot_be_read_comes_back_as_typed_and_the_other_parts_keep_theirs(
        student_client, demo, student):
    variant = own_variant(demo, student, SCORE_VARIANCE)
    stored(variant, "textbook_std", "12.5")
    stored(variant, "unit_variance", "E[q·k] = 0")
    html = send_without_javascript(student_client, variant, "textbook_std", {"answer": "1..2"})
    assert input_value(html, "textbook_std") == "1..2"
    assert textarea_value(html, "unit_variance") == "E[q·k] = 0"
    error = result_text(html, "textbook_std")
    assert error.startswith("⚠ Part (e): ") and error.endswith("This did not use an attempt."), error
    assert "Part (e): " not in result_text(html, "unit_variance")
    html = student_client.get(reverse("exercise", args=[variant.assignment_item_id])).content.decode()
    assert input_value(html, "textbook_std") == "12.5"
    assert "Part (e): " not in html


def test_a_derivation_refused_comes_back_in_its_textarea(student_client, demo, student):
    variant = own_variant(demo, student, SCORE_VARIANCE)
    derivation = "E[q·k] = 0\nVar(q·k) = ((("
    html = send_without_javascript(student_client, variant, "unit_variance", {"answer": derivation})
    assert textarea_value(html, "unit_variance") == derivation
    assert result_text(html, "unit_variance").startswith("⚠ Part (a): ")
    assert not Submission.objects.filter(variant=variant, part="unit_variance").exists()


def test_an_unchanged_answer_is_refused_beside_its_part_holding_the_choice(student_client, demo, student):
    variant = own_variant(demo, student, EQUAL_KEYS)
    stored(variant, "equal_pair", "13")
    html = send_without_javascript(student_client, variant, "equal_pair", {"answer": "13"})
    assert re.findall(r'name="answer" value="([^"]+)" checked', html) == ["13"]
    error = result_text(html, "equal_pair")
    assert error.startswith("⚠ Part (a): ") and error.endswith("This did not use an attempt."), error
    assert 'data-result="refused"' in html
    assert Submission.objects.filter(variant=variant, part="equal_pair").count() == 1


def test_a_practice_page_holds_the_refused_answer_too(student_client, demo, student):
    practice = variant_create_practice(item=item_of(demo, WORKED_EXAMPLE), student=student)
    html = send_without_javascript(
        student_client, practice, "output", {"cell-0-0": "x", "cell-0-1": "", "cell-0-2": "3", "cell-0-3": "4"}
    )
    assert "practice — never counts toward your grades" in html
    assert grid_values(html, "output") == ["x", None, "3", "4"]
    assert result_text(html, "output").startswith("⚠ Part (b): ")


def test_the_htmx_path_keeps_nothing(student_client, demo, student):
    variant = own_variant(demo, student, WORKED_EXAMPLE)
    response = student_client.post(
        reverse("submit", args=[variant.pk, "output"]), {"cell-0-0": "1,,2"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert SESSION_KEY not in student_client.session


def test_an_answer_too_long_to_keep_is_explained_at_the_top(student_client, demo, student):
    variant = own_variant(demo, student, SCORE_VARIANCE)
    html = send_without_javascript(student_client, variant, "textbook_std", {"answer": "1" * 30_000})
    assert "That answer is too long (more than 20 kB)." in html
    assert input_value(html, "textbook_std") is None
    assert SESSION_KEY not in student_client.session


def test_an_error_for_a_part_the_page_lacks_is_shown_at_the_top(student_client, demo, student):
    variant = own_variant(demo, student, SCORE_VARIANCE)
    html = send_without_javascript(student_client, variant, "no_such_part", {"answer": "1"})
    assert "This exercise has no part &#x27;no_such_part&#x27;." in html


def test_an_exam_page_holds_the_refused_answer_too(db, client, clock):
    people = people_create()
    exam = assignment_create(
        people.course, [published_version(source=product_yaml())], kind=AssignmentKind.EXAM,
        time_limit_minutes=30, is_published=True,
    )
    exam_services.attempt_start(assignment=exam, student=people.student)
    variant = variant_for(exam.items.get(), people.student, params={"a": 3, "b": 4})
    client.force_login(people.student)
    html = send_without_javascript(client, variant, "product", {"answer": "1 2 ,3"})
    assert "Exam in progress" in html
    assert input_value(html, "product") == "1 2 ,3"
    assert input_value(html, "total") is None
    assert result_text(html, "product").startswith("⚠ Part (a): ")
    assert not Submission.objects.filter(variant=variant).exists()
