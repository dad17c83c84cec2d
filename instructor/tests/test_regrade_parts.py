"""A regrade's "Parts" field takes only part keys the chosen exercises have: an unknown key
(a typo, or a part of an exercise not ticked) is a form error naming it and listing the
parts there are, and no job is made. The service refuses the same for the API and the
command line."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from instructor import services
from instructor.models import RegradeJob

SUM_YAML = """\
slug: sum-only
title: Sum of two numbers
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 9}
  b: {generator: int_range, min: 2, max: 9}
prompt: |
  Add ${{a}}$ and ${{b}}$.
parts:
  - key: sum
    type: numeric
    answer: "a + b"
    decimals: 0
    solution: |
      The sum is {{a + b}}.
"""


@pytest.fixture
def assignment(people):
    """Two exercises: 'product' with parts product and total, 'sum-only' with part sum."""
    return assignment_create(
        people.course, [published_version(source=product_yaml()), published_version(source=SUM_YAML)]
    )


def _regrade(client, data):
    client.login(username="ines", password=PASSWORD)
    return client.post(reverse("instructor:regrade_new", args=["attn", "week1"]), data)


def _error(response) -> str:
    page = response.content.decode()
    start = page.index('id="parts-error">') + len('id="parts-error">')
    return page[start:page.index("</span>", start)]


def test_unknown_parts_are_a_form_error_naming_them_escaped_and_no_job_is_made(client, assignment):
    response = _regrade(client, {"parts": "nonexistent,<b>x</b>"})
    assert response.status_code == 422
    assert _error(response) == (
        "No part called &#x27;nonexistent&#x27; or &#x27;&lt;b&gt;x&lt;/b&gt;&#x27; in this assignment. "
        "Its parts: product, total, sum."
    )
    assert "<b>x</b>" not in response.content.decode()
    assert not RegradeJob.objects.exists()


def test_one_unknown_among_known_parts_is_named_alone(client, assignment):
    response = _regrade(client, {"parts": "product, totl ,product"})
    assert _error(response) == "No part called &#x27;totl&#x27; in this assignment. Its parts: product, total, sum."
    assert not RegradeJob.objects.exists()


def test_a_part_of_an_exercise_not_ticked_is_refused_with_the_ticked_ones_parts(client, assignment):
    product = assignment.items.get(position=0)
    response = _regrade(client, {"items": [product.pk], "parts": "sum"})
    assert response.status_code == 422
    assert _error(response) == "No part called &#x27;sum&#x27; in the exercises ticked. Their parts: product, total."
    assert not RegradeJob.objects.exists()


def test_known_parts_start_the_dry_run_with_that_scope(client, assignment):
    sum_item = assignment.items.get(position=1)
    response = _regrade(client, {"items": [sum_item.pk], "parts": " sum "})
    job = RegradeJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("instructor:regrade", args=["attn", job.pk])
    assert (job.item_ids, job.parts, job.dry_run) == ([sum_item.pk], ["sum"], True)


def test_the_form_lists_the_assignments_parts(client, assignment):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:regrade_new", args=["attn", "week1"])).content.decode()
    assert (
        "Part keys separated by commas; empty means all parts. This assignment&#x27;s parts: product, total, sum."
    ) in page


def test_the_service_refuses_unknown_parts_for_every_caller(people, assignment):
    with pytest.raises(services.InstructorRefused) as refused:
        services.regrade_job_create(assignment=assignment, actor=people.instructor, parts=["nope", "product"])
    assert refused.value.message == "No part called 'nope' in this assignment. Its parts: product, total, sum."
    with pytest.raises(CommandError, match="No part called 'nope'"):
        call_command("regrade", assignment="attn/week1", part=["nope"])
    assert not RegradeJob.objects.exists()


def test_the_api_answers_unknown_parts_with_a_refusal_not_a_500(client, people, assignment):
    client.login(username="ines", password=PASSWORD)
    response = client.post(
        "/api/v1/courses/attn/assignments/week1/regrades/", {"parts": ["nope"]}, content_type="application/json"
    )
    assert response.status_code == 409
    assert "No part called 'nope' in this assignment. Its parts: product, total, sum." in response.content.decode()
    assert not RegradeJob.objects.exists()
