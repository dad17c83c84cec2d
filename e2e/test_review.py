"""Spaced review in the browser: a student leaves √d_k out twice, is told it is the second
time, sees the skill map mark scaling shaky, finds the part due the next (simulated) day on
their home page, and the review's fresh practice variant is one where the slip is
unmistakable. Screenshot: test-artifacts/review-due.png.

The clock: the live server runs in another thread and its worker in another process, so
no patch of timezone.now reaches both. The next day is simulated in the database instead:
every stored moment of the student's review history (the card's due date and last review,
its reviews) is moved one day back, which to the scheduler is the same as a day passing.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.a11y import check_page
from e2e.conftest import log_in
from e2e.test_layout_and_accessibility import assert_page_ok
from e2e.skills import answer_weights, skill_line, wait_for_mastery
from e2e.test_student_journey import WORKED_EXAMPLE, item_for, weights_for_variant
from exercises.models import Variant

pytestmark = pytest.mark.browser

TOLERANCE = 0.5e-4  # the weights part is graded to 4 decimals


def wait_for_reviews(student, count: int, timeout: float = 30.0):
    from review.models import ReviewCard

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        card = ReviewCard.objects.filter(student=student, part="weights").first()
        if card is not None and card.reviews >= count:
            return card
        time.sleep(0.1)
    from grading.harness import CeleryWorker

    raise AssertionError(
        f"the worker did not record {count} reviews in {timeout} s\n"
        f"the worker said:\n{CeleryWorker.running_log_tail()}"
    )


def a_day_passes(card) -> None:
    """Move the card's stored history one day back (see the module docstring)."""
    import fsrs

    from review.models import ReviewCard, ReviewEntry

    stored = fsrs.Card.from_dict(card.card)
    stored.due -= timedelta(days=1)
    stored.last_review -= timedelta(days=1)
    ReviewCard.objects.filter(pk=card.pk).update(card=stored.to_dict(), due_at=stored.due)
    for entry in ReviewEntry.objects.filter(card=card):
        ReviewEntry.objects.filter(pk=entry.pk).update(reviewed_at=entry.reviewed_at - timedelta(days=1))


def test_a_repeated_slip_comes_back_the_next_day_as_a_variant_that_exposes_it(
    student_page, demo_site, watch, artifacts, django_user_model
):
    from review.services import review_settings_update

    review_settings_update(course=demo_site.course, enabled=True, feeding_assignments=[demo_site.assignment])
    page = student_page
    student = django_user_model.objects.get(username="student1")
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student=student)
    for attempt in (1, 2):
        result = answer_weights(page, variant, scaled=False, attempt=attempt)
        slip = result.locator("p.misconception")
        expect(slip).to_contain_text("not divided by √d_k")
    expect(slip).to_contain_text("This is the second time the √d_k was left out.")
    card = wait_for_reviews(student, 2)
    # Again, again: due one whole day after the second slip (the scheduler's least interval).
    assert card.due_at == card.entries.last().reviewed_at + timedelta(days=1)

    wait_for_mastery(username="student1", skill="scaling", attempts=2)

    page.goto(reverse("dashboard"))
    expect(skill_line(page, "scaling")).to_contain_text("scaling by √d_k: shaky")
    expect(page.get_by_role("heading", name="Due for review")).to_have_count(0)  # not yet: tomorrow
    a_day_passes(card)
    page.reload()
    expect(skill_line(page, "scaling")).to_contain_text("shaky")
    due = page.get_by_role("region", name="Due for review")
    expect(due).to_contain_text("Attention weights and context vector for one query — part (a)")  # the part by its label, not its key
    expect(due).to_contain_text("Practice never counts toward your grades.")
    page.screenshot(path=artifacts / "review-due.png", full_page=True)
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="dashboard-review-due"))

    button = due.get_by_role("button", name=re.compile("Review now: Attention weights"))
    button.focus()
    page.keyboard.press("Enter")  # keyboard users start the review too
    page.wait_for_url(re.compile(r"/practice/(\d+)/$"))
    expect(page.locator(".practice-badge")).to_contain_text("never counts toward your grades")
    shown = Variant.objects.get(pk=int(re.search(r"/practice/(\d+)/$", page.url).group(1)))
    assert shown.student == student and shown.context.startswith(f"practice:{item.pk}:")
    assert shown.seed != variant.seed
    # The slip's answer on the variant shown, recomputed from its definition, misses the
    # right one by far more than the tolerance.
    gap = np.max(np.abs(np.array(weights_for_variant(shown, scaled=False)) - np.array(weights_for_variant(shown, scaled=True))))
    assert gap > 10 * TOLERANCE, gap
    # What the page shows is that variant: its query row is named in the prompt.
    expect(page.locator("main")).to_contain_text(f"Work with the query of token {shown.params['q']}")


def test_the_instructor_turns_review_off_from_the_keyboard(page, demo_site, watch, artifacts):
    from review.models import ReviewSettings

    log_in(page, "instructor")
    page.goto(reverse("courses:settings", args=[demo_site.course.slug]))
    page.get_by_role("navigation", name="Course").get_by_role("link", name="Spaced review").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("spaced review")
    expect(page.locator("main")).to_contain_text("Practice never counts toward grades.")
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="review-settings"))
    toggle = page.get_by_label("Spaced review on")
    expect(toggle).to_be_checked()
    toggle.focus()
    page.keyboard.press("Space")
    page.get_by_label(demo_site.assignment.title).check()
    page.get_by_role("button", name="Save").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Saved the review settings.")
    stored = ReviewSettings.objects.get(course=demo_site.course)
    assert stored.enabled is False
    assert list(stored.feeding_assignments.all()) == [demo_site.assignment]
