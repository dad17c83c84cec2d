"""A reloaded exercise page holds the student's last answer in each typed box (a numeric or
symbolic input, a derivation's or explanation's textarea) and its choice, as the page did
right after sending it: escaped, only their own answer to that part of that variant, and
read with the page's one query of answers."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.models import AssignmentItem, ReleaseMoment
from exercises.models import Variant
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus

SCORE_VARIANCE = "score-variance"
# (a) derivation, (b) symbolic, (c) derivation, (d) symbolic, (e) numeric
PARTS = ["unit_variance", "general_variance", "general_derivation", "correct_scale", "textbook_std"]
EQUAL_KEYS = "equal-keys"  # (a) a choice, (d) free text
DERIVATION = "E[q·k] = 0\nVar(q·k) = d_k"


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def student_client(client, student):
    client.force_login(student)
    return client


def item_of(demo, slug: str) -> AssignmentItem:
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)


def page(client, item) -> str:
    response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    return response.content.decode()


def input_tag(html: str, part: str) -> str:
    tag = re.search(r'<input id="answer-%s" [^>]*>' % part, html, re.S)
    assert tag, html
    return tag[0]


def input_value(html: str, part: str) -> str | None:
    """The value the part's input holds (None: no value attribute), as a browser reads it."""
    value = re.search(r' value="([^"]*)"', input_tag(html, part))
    return html_lib.unescape(value[1]) if value else None


def textarea_body(html: str, part: str) -> str:
    """The text between the part's textarea tags, as sent (still escaped)."""
    body = re.search(r'<textarea id="answer-%s" [^>]*>(.*?)</textarea>' % part, html, re.S)
    assert body, html
    return body[1]


def textarea_value(html: str, part: str) -> str:
    """What the textarea holds as a browser reads it: one newline right after the opening
    tag is dropped, the rest unescaped."""
    body = textarea_body(html, part)
    return html_lib.unescape(body[1:] if body.startswith("\n") else body)


def stored(variant, part: str, raw_answer, *, attempt: int = 1, student=None, **fields) -> Submission:
    fields.setdefault("status", SubmissionStatus.GRADED)
    return Submission.objects.create(
        variant=variant, student=student or variant.student, part=part, raw_answer=raw_answer,
        attempt=attempt, **fields,
    )


def send(client, variant, part: str, answer, capture) -> None:
    with capture(execute=True):
        response = client.post(reverse("submit", args=[variant.pk, part]), {"answer": answer})
    assert response.status_code in (200, 302), response.content.decode()


def test_without_attempts_every_box_is_empty(student_client, demo):
    html = page(student_client, item_of(demo, SCORE_VARIANCE))
    assert [input_value(html, part) for part in ("general_variance", "correct_scale", "textbook_std")] == [
        None, None, None,
    ]
    assert [textarea_body(html, part) for part in ("unit_variance", "general_derivation")] == ["\n", "\n"]


def test_a_wrong_numeric_answer_comes_back_in_its_box_unmarked_and_the_others_stay_empty(
        student_client, demo, student, django_capture_on_commit_callbacks):
    item = item_of(demo, SCORE_VARIANCE)
    variant = variant_get_or_create_for_item(item=item, student=student)
    send(student_client, variant, "textbook_std", "12.5", django_capture_on_commit_callbacks)
    answer = Submission.objects.get(variant=variant, part="textbook_std")
    assert (answer.status, answer.correct) == (SubmissionStatus.GRADED, False)
    html = page(student_client, item)
    assert input_value(html, "textbook_std") == "12.5"
    # The verdict is the result's to tell (under the review policy), as right after sending:
    # aria-invalid on a typed box means "cannot be read", which the live preview sets.
    assert "aria-invalid" not in input_tag(html, "textbook_std")
    assert "is-wrong" not in input_tag(html, "textbook_std")
    assert "Not correct" in html
    assert [input_value(html, part) for part in ("general_variance", "correct_scale")] == [None, None]
    assert [textarea_value(html, part) for part in ("unit_variance", "general_derivation")] == ["", ""]


def test_symbolic_and_derivation_answers_come_back_as_typed(
        student_client, demo, student, django_capture_on_commit_callbacks):
    item = item_of(demo, SCORE_VARIANCE)
    variant = variant_get_or_create_for_item(item=item, student=student)
    send(student_client, variant, "general_variance", "sigma_q^2 * d_k", django_capture_on_commit_callbacks)
    stored(variant, "unit_variance", DERIVATION)
    stored(variant, "general_derivation", "\nleading newline kept")
    html = page(student_client, item)
    assert input_value(html, "general_variance") == "sigma_q^2 * d_k"
    assert textarea_value(html, "unit_variance") == DERIVATION
    assert textarea_value(html, "general_derivation") == "\nleading newline kept"


def test_the_last_answer_is_the_one_that_comes_back(student_client, demo, student):
    item = item_of(demo, SCORE_VARIANCE)
    variant = variant_get_or_create_for_item(item=item, student=student)
    stored(variant, "textbook_std", "3", attempt=1)
    stored(variant, "textbook_std", "4", attempt=2)
    stored(variant, "textbook_std", "5", attempt=3, status=SubmissionStatus.QUEUED)  # not graded yet
    assert input_value(page(student_client, item), "textbook_std") == "5"


def test_the_choice_and_the_explanation_come_back(student_client, demo, student):
    item = item_of(demo, EQUAL_KEYS)
    variant = variant_get_or_create_for_item(item=item, student=student)
    stored(variant, "equal_pair", "13")
    stored(variant, "why_equal", "Equal keys give equal scores.\nSo equal weights.", status=SubmissionStatus.QUEUED)
    html = page(student_client, item)
    assert re.findall(r'name="answer" value="(\d\d)"( checked)?>', html) == [
        ("01", ""), ("02", ""), ("03", ""), ("12", ""), ("13", " checked"), ("23", ""),
    ]
    assert textarea_value(html, "why_equal") == "Equal keys give equal scores.\nSo equal weights."


def test_a_hostile_stored_answer_comes_back_inert(student_client, demo, student):
    item = item_of(demo, SCORE_VARIANCE)
    variant = variant_get_or_create_for_item(item=item, student=student)
    hostile_text = "</textarea><script>alert(1)</script>"
    hostile_attribute = '" autofocus onfocus="alert(1)"><script>alert(2)</script>'
    stored(variant, "unit_variance", hostile_text)
    stored(variant, "textbook_std", hostile_attribute)
    html = page(student_client, item)
    assert textarea_body(html, "unit_variance") == (
        "\n&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    )
    assert input_tag(html, "textbook_std").endswith(
        ' value="&quot; autofocus onfocus=&quot;alert(1)&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;">'
    )
    assert input_value(html, "textbook_std") == hostile_attribute
    assert "<script>alert" not in html and "onfocus=\"alert" not in html


def test_only_the_students_own_answer_to_that_part_of_that_variant_comes_back(
        student_client, demo, student, django_user_model):
    item = item_of(demo, SCORE_VARIANCE)
    other = django_user_model.objects.get(username="student2")
    stored(variant_get_or_create_for_item(item=item, student=other), "textbook_std", "their own")
    practice = variant_create_practice(item=item, student=student, named=None)
    stored(practice, "textbook_std", "practised")
    variant = variant_get_or_create_for_item(item=item, student=student)
    stored(variant, "correct_scale", "sqrt(d_k)")
    html = page(student_client, item)
    assert input_value(html, "textbook_std") is None
    assert input_value(html, "correct_scale") == "sqrt(d_k)"
    # A row of someone else on the variant (none is made so; a guard, not a path) is not theirs.
    stored(variant, "textbook_std", "not mine", student=other)
    assert input_value(page(student_client, item), "textbook_std") is None
    practice_html = student_client.get(reverse("practice", args=[practice.pk])).content.decode()
    assert input_value(practice_html, "textbook_std") == "practised"


def test_while_correctness_is_hidden_the_answer_comes_back_without_a_verdict(
        student_client, demo, student, django_capture_on_commit_callbacks):
    item = item_of(demo, SCORE_VARIANCE)
    item.assignment.show_correctness = ReleaseMoment.ON_RELEASE
    item.assignment.save()
    variant = variant_get_or_create_for_item(item=item, student=student)
    send(student_client, variant, "textbook_std", "12.5", django_capture_on_commit_callbacks)
    html = page(student_client, item)
    assert input_value(html, "textbook_std") == "12.5"
    assert "aria-invalid" not in input_tag(html, "textbook_std")
    assert "is-wrong" not in html and "Not correct" not in html and "Answer graded" in html


def statements_run(captured) -> list[str]:
    return [
        query["sql"] for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT"))
    ]


@pytest.mark.parametrize("answered", [0, len(PARTS)])
def test_the_answers_come_back_without_a_query_per_part(student_client, demo, student, answered):
    item = item_of(demo, SCORE_VARIANCE)
    variant = variant_get_or_create_for_item(item=item, student=student)
    for part in PARTS[:answered]:
        stored(variant, part, "d_k")
    page(student_client, item)  # the first visit's reads are another count
    # the session's user; the variant with its item, assignment, course, version and the
    # accommodation; the role; every part's attempts; with graded answers, the student's
    # regrade requests about the variant's answers (one read for all parts)
    with CaptureQueriesContext(connection) as captured:
        html = page(student_client, item)
    expected = 5 if answered else 4
    assert len(statements_run(captured)) == expected, "\n".join(statements_run(captured))
    assert html.count('value="d_k"') + html.count(">\nd_k</textarea>") == answered
    assert Variant.objects.filter(student=student, assignment_item=item).count() == 1
