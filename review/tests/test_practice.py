"""Review's practice: variants that probe the student's own slip, the repeat note in the
feedback, and practice never counting toward grades."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from django.urls import reverse

from exercises import engine
from exercises import services as exercise_services
from exercises.selectors import assignment_summaries, exercise_status
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.core.separation import slip_separation


def separation_of(variant, part="weights", misconception="no_scaling"):
    spec = engine.spec_from_json(variant.exercise_version.spec)
    options = engine.part_options(spec, variant.params, part)
    return slip_separation(diagnose=options["diagnose"], options=options, misconception=misconception)


def test_the_third_slip_says_so_in_the_misconception_message(answer, item, student):
    variant = variant_get_or_create_for_item(item=item, student=student)
    first = answer(variant, "slip")
    assert first.misconception == "no_scaling"
    assert "time" not in first.feedback["misconception_message"]
    second = answer(variant_create_practice(item=item, student=student), "slip")
    assert second.feedback["misconception_message"].endswith("This is the second time the √d_k was left out.")
    third = answer(variant_create_practice(item=item, student=student), "slip")
    note = "This is the third time the √d_k was left out."
    assert third.feedback["misconception_message"] == (
        "It looks as if the scores were not divided by √d_k before the softmax. " + note
    )
    # The message carries it at the same place, so the result page's split still works.
    assert third.feedback["message"].endswith(third.feedback["misconception_message"])
    right = answer(variant_create_practice(item=item, student=student), "right")
    assert right.feedback["misconception_message"] == ""


def test_after_a_slip_the_next_practice_variant_makes_it_unmistakable(answer, item, student, monkeypatch):
    monkeypatch.setattr(engine, "practice_seed", lambda: 12345)
    plain = variant_create_practice(item=item, student=student)
    assert plain.seed == 12345  # no slip yet: the fresh seed as it came
    answer(plain, "slip")
    targeted = variant_create_practice(item=item, student=student)
    assert separation_of(targeted) >= 10
    spec = engine.spec_from_json(targeted.exercise_version.spec)
    assert targeted.params == engine.draw_variant(spec, targeted.seed).params  # an ordinary, gated draw


def test_without_a_separating_variant_practice_falls_back_and_says_so(answer, item, student, monkeypatch, caplog):
    answer(variant_get_or_create_for_item(item=item, student=student), "slip")
    monkeypatch.setattr(engine, "practice_seed", lambda: 777)
    monkeypatch.setattr(exercise_services, "draw_targeted_variant", lambda *args, **kwargs: None)
    with caplog.at_level(logging.INFO, logger="exercises.services"):
        practice = variant_create_practice(item=item, student=student)
    assert practice.seed == 777
    assert "separates no_scaling on part weights; practice gets a plain variant" in caplog.text


def test_practice_never_counts_toward_grades(answer, demo, item, student, client):
    for _ in range(2):
        practice = variant_create_practice(item=item, student=student)
        answer(practice, "right")
    status = exercise_status(item=item, student=student)
    assert (status["state"], status["score"], status["solved_parts"]) == ("not started", 0.0, 0)
    summary = next(s for s in assignment_summaries(course=demo.course, role="student", student=student)
                   if s["assignment"] == demo.assignment)
    assert (summary["score_percent"], summary["solved"]) == (0, 0)
    # The practice answers made a due card; the dashboard says practice never counts.
    from review.models import ReviewCard

    ReviewCard.objects.update(due_at="2000-01-01T00:00:00Z")
    client.force_login(student)
    page = client.get(reverse("dashboard")).content.decode()
    assert "Due for review" in page
    assert "Practice never counts toward your grades." in page


def test_a_regrade_keeps_the_repeat_note(answer, item, student, demo, django_user_model):
    from grading.core.grades import Grade
    from grading.core.misconceptions import MISCONCEPTIONS
    from instructor.models import RegradeJob
    from instructor.services import _Outcome

    variant = variant_get_or_create_for_item(item=item, student=student)
    answer(variant, "slip")
    second = answer(variant, "wrong")  # graded wrong, no diagnosis ...
    assert second.feedback["misconception_message"] == ""
    # ... and a regrade (say, a fixed diagnosis) finds the slip in it: the second time.
    message = MISCONCEPTIONS["no_scaling"]
    grade = Grade(score=0.0, correct=False, feedback=f"Not quite. {message}", misconception="no_scaling")
    job = RegradeJob.objects.create(assignment=demo.assignment, created_by=django_user_model.objects.get(username="instructor"), dry_run=False)
    _Outcome(score=0.0, awarded=0.0, correct=False, grade=grade).write_to(second, job=job)
    note = "This is the second time the √d_k was left out."
    assert second.feedback["misconception_message"] == f"{message} {note}"
    assert second.feedback["message"] == f"Not quite. {message} {note}"
