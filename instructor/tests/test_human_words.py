"""Pages name things as people do: parts by their label ((a), (b)…), misconceptions by
their description. The student pages of the demo course are rendered and their visible
text searched for the bank's part keys and misconception codes."""

import re
from html import unescape

import pytest
from django.urls import reverse
from django.utils import timezone

from courses.services import DEMO_PASSWORD
from exercises.specs import version_spec
from grading.core.misconceptions import MISCONCEPTION_LABELS
from review.models import ReviewCard

SCRIPT_OR_STYLE = re.compile(r"<(script|style|template)\b.*?</\1>", re.S | re.I)
TAG = re.compile(r"<[^>]+>")


def visible_text(html: str) -> str:
    return unescape(TAG.sub(" ", SCRIPT_OR_STYLE.sub(" ", html)))


def bank_part_keys(assignment) -> set[str]:
    keys = set()
    for item in assignment.items.select_related("exercise_version"):
        keys |= {part.key for part in version_spec(item.exercise_version).parts}
    # Keys that are also plain English words would match ordinary sentences.
    return {key for key in keys if "_" in key}


def test_the_due_for_review_block_names_the_part_by_its_label(client, demo):
    from django.contrib.auth import get_user_model

    student = get_user_model().objects.get(username="student1")
    item = demo.assignment.items.select_related("exercise_version__exercise").get(
        exercise_version__exercise__slug="equal-keys"
    )
    spec = version_spec(item.exercise_version)
    key = spec.parts[2].key
    ReviewCard.objects.create(
        student=student, course=demo.course, exercise=item.exercise_version.exercise, part=key,
        origin_item=item, due_at=timezone.now(),
    )
    client.login(username="student1", password=DEMO_PASSWORD)
    text = visible_text(client.get("/").content.decode())
    assert "Due for review" in text
    assert "part (c)" in text and key not in text


def test_student_pages_show_no_part_key_or_misconception_code(client, demo):
    client.login(username="student1", password=DEMO_PASSWORD)
    keys = bank_part_keys(demo.assignment)
    codes = set(MISCONCEPTION_LABELS)
    pages = ["/"] + [reverse("exercise", args=[item.pk]) for item in demo.assignment.items.all()]
    found = {}
    for url in pages:
        text = visible_text(client.get(url).content.decode())
        seen = sorted(word for word in keys | codes if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text))
        if seen:
            found[url] = seen
    assert found == {}


def test_analytics_name_parts_and_misconceptions_in_words(client, people):
    from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for

    version = published_version(source=product_yaml())
    assignment = assignment_create(people.course, [version])
    variant = variant_for(assignment.items.get(), people.student, params={"a": 3, "b": 4})
    submission_add(variant, "product", "13", awarded=0.0, misconception="no_scaling")
    client.login(username="ines", password=PASSWORD)
    text = visible_text(client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode())
    assert "left out √d_k" in text and "no_scaling" not in text
    assert "Part (a): wrong answers" in text and "part (b)" in text
