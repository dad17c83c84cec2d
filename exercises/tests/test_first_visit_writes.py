"""A student's first visit to an exercise stores their variant with one statement and reads
no answers (none can name a variant made by this request); a visit after that reads them.
At the start of an exam every student makes this visit to every exercise at once."""

from __future__ import annotations

import re

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.models import AssignmentItem
from exercises import services
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus

WEIGHTS = "attention-weights-one-query"


def item_of(demo, slug: str) -> AssignmentItem:
    return AssignmentItem.objects.select_related("assignment__course", "exercise_version__exercise").get(
        assignment=demo.assignment, exercise_version__exercise__slug=slug
    )


def visit(client, item) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    return response.content.decode(), [query["sql"] for query in captured.captured_queries]


def statements(sqls: list[str], *starts: str) -> list[str]:
    return [sql for sql in sqls if sql.upper().startswith(starts)]


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.mark.django_db(transaction=True)
def test_the_first_visit_inserts_once_outside_a_transaction_and_reads_no_answers(client, student, demo):
    item = item_of(demo, WEIGHTS)
    client.force_login(student)
    _, first = visit(client, item)
    assert len(statements(first, "INSERT INTO \"EXERCISES_VARIANT\"")) == 1
    assert statements(first, "BEGIN", "COMMIT", "SAVEPOINT") == []
    assert statements(first, 'SELECT "GRADING_SUBMISSION"') == []
    variant = Variant.objects.get(student=student, assignment_item=item)
    Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer="[0.5, 0.5]", attempt=1,
        status=SubmissionStatus.GRADED, correct=False, awarded=0.0,
    )
    html, again = visit(client, item)
    assert statements(again, "INSERT") == []
    assert len(statements(again, 'SELECT "GRADING_SUBMISSION"')) == 1
    assert "[0.5, 0.5]" in html


@pytest.mark.django_db(transaction=True)
def test_a_lost_race_outside_a_transaction_returns_the_stored_variant_and_the_connection_still_works(
        student, demo, monkeypatch):
    item = item_of(demo, WEIGHTS)
    stored = services.variant_create_for_item(item=item, student=student)
    # The other tab's insert landed between this request's miss and its own insert.
    made = services.variant_create_for_item(item=item, student=student)
    assert made.pk == stored.pk
    assert not connection.in_atomic_block
    assert Variant.objects.filter(student=student, assignment_item=item).count() == 1


def test_a_lost_race_inside_a_callers_transaction_leaves_that_transaction_usable(student, demo):
    item = item_of(demo, WEIGHTS)
    with transaction.atomic():
        stored = services.variant_create_for_item(item=item, student=student)
        made = services.variant_create_for_item(item=item, student=student)
        assert made.pk == stored.pk
        # The refused INSERT was rolled back to its savepoint: the transaction goes on.
        assert Variant.objects.filter(student=student).count() == 1


def test_a_duplicate_is_refused_by_the_database_not_by_a_read_first(student, demo):
    item = item_of(demo, WEIGHTS)
    stored = services.variant_create_for_item(item=item, student=student)
    with pytest.raises(IntegrityError), transaction.atomic():
        Variant.objects.create(
            exercise_version=stored.exercise_version, student=student, context=stored.context,
            seed=stored.seed, params=stored.params, assignment_item=item,
        )


def test_the_first_visit_page_shows_every_part_unanswered_with_all_its_attempts(client, student, demo):
    item = item_of(demo, WEIGHTS)
    client.force_login(student)
    first, _ = visit(client, item)
    again, _ = visit(client, item)
    # The same page either way: nothing answered, no history, the same attempts left.
    assert per_request_values_blanked(first) == per_request_values_blanked(again)
    assert "attempt 1" not in first.lower()


def per_request_values_blanked(html: str) -> str:
    """The page without what differs on every request (the CSP nonce, the CSRF token)."""
    html = re.sub(r'nonce="[^"]*"', 'nonce=""', html)
    return re.sub(r'[A-Za-z0-9]{64}', "<token>", html)
