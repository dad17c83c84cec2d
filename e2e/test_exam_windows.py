"""Browser test of an exam as a lecturer runs it, where each student has their own window.

A 10-minute exam (the exam preset) in a course on Berlin time; student2 has 50 % extra
time. student1 starts and finishes; the instructor releases the grades while the exam is
still open, through the confirmation that says who is where. student3 starts *after* the
release and sees only "Answer saved" until their own attempt ends, then what the policy
shows. student2's start page shows their own 15 minutes; while their exercise page is
open the proctor extends their time, and the page's countdown moves within 10 s without a
reload (and the proctor row says the page has it). An ended attempt shows no clock, and
every time on the students' pages carries its zone.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from e2e.conftest import guarded_context, log_in

# A time as course_time_short shows it: the day comes too once it is not today (near midnight).
SHORT_TIME = r"(?:\w{3} \d{1,2} \w{3}, )?\d\d:\d\d"

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"
SHOTS = Path("/work/shots")
# A clock time (18:25) not followed by a zone label; the countdown (a duration) is taken out first.
UNLABELLED_TIME = re.compile(r"\b\d{1,2}:\d\d\b(?!:\d)(?! (?:CET|CEST|UTC)\b)")


def reference_row(variant, part: str) -> list[float]:
    from exercises import engine

    spec = engine.spec_from_json(variant.exercise_version.spec)
    return np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float).ravel().tolist()


def fill_grid(page, part: str, values) -> None:
    cells = page.locator(f"#grid-{part} input")
    for index, value in enumerate(values):
        cells.nth(index).fill(f"{value:.4f}")


def wait_graded(usernames, parts: int) -> None:
    from grading.models import Submission

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answers = Submission.objects.filter(student__username__in=usernames)
        if answers.count() == parts and not answers.exclude(status="graded").exists():
            return
        time.sleep(0.1)
    raise AssertionError("the answers were not graded within 30 s")


def unlabelled_times(page) -> list[str]:
    text = page.evaluate(
        """() => { const main = document.querySelector('main').cloneNode(true);
                   main.querySelectorAll('[data-countdown-text]').forEach(e => e.remove());
                   return main.innerText; }"""
    )
    return UNLABELLED_TIME.findall(text)


def answer_weights_right(student, item) -> None:
    from exercises.models import Variant

    student.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username=student.username)
    fill_grid(student, "weights", reference_row(variant, "weights"))
    student.locator("#form-weights button[type=submit]").click()
    student.locator("#result-weights").get_by_text("Answer saved").wait_for(timeout=10_000)


def test_release_while_open_own_clocks_and_live_extensions(page, chromium, live_server, watch, demo_site):
    from exams.models import Accommodation
    from exams.services_accommodations import accommodation_extend
    from courses.models import ReleaseMoment

    course = demo_site.course
    course.time_zone = "Europe/Berlin"
    course.save()
    exam = demo_site.assignment
    exam.kind, exam.time_limit_minutes = "exam", 10
    for name in ("show_correctness", "show_score", "show_misconception", "show_hints", "show_heatmap"):
        setattr(exam, name, ReleaseMoment.ON_RELEASE)
    exam.show_solutions = ReleaseMoment.NEVER
    exam.save()
    item = exam.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    users = {e.user.username: e.user for e in course.enrolments.select_related("user")}
    Accommodation.objects.create(assignment=exam, student=users["student2"], time_factor=1.5)
    overview = reverse("assignment", args=[course.slug, exam.slug])
    students = {}
    for username in ("student1", "student2", "student3"):
        context, student = guarded_context(chromium, live_server, watch)
        student.username = username
        students[username] = (context, student)
        log_in(student, username)

    # student2's start page tells them their own limit, and when they would finish.
    _, second = students["student2"]
    second.goto(overview)
    start_text = second.locator("#attempt").inner_text()
    assert "your own time limit of 15 minutes" in start_text
    assert "The clock starts when you press Start" in start_text
    assert re.search(rf"finish at the latest at {SHORT_TIME} CET", start_text)
    assert unlabelled_times(second) == []
    SHOTS.mkdir(exist_ok=True)
    second.screenshot(path=str(SHOTS / "i21-start-accommodated.png"), full_page=True)

    # student1 sits the exam and finishes: no clock, no attempts left, a labelled time.
    _, first = students["student1"]
    first.goto(overview)
    first.get_by_role("button", name="Start the exam").click()
    answer_weights_right(first, item)
    first.goto(reverse("exams:finish", args=[course.slug, exam.slug]))
    first.get_by_role("button", name="Finish attempt").click()
    first.wait_for_url(re.compile(re.escape(overview) + "$"))
    assert re.search(rf"Finished at {SHORT_TIME} CET \(by you\)", first.locator("#attempt").inner_text())
    assert first.locator("#clock").count() == 0
    assert "per part" not in first.locator("table.items").inner_text()
    first.goto(reverse("exercise", args=[item.pk]))
    assert first.locator("#clock").count() == 0 and first.locator("[data-attempts-left]").count() == 0
    assert unlabelled_times(first) == []

    # student2 starts and keeps the exercise page open.
    second.goto(overview)
    second.get_by_role("button", name="Start the exam").click()
    second.goto(reverse("exercise", args=[item.pk]))
    assert re.search(r"Time left: 1[45]:\d\d", second.locator("#clock").inner_text())

    # The instructor releases while the exam is open, with eyes open.
    log_in(page, "instructor")
    page.goto(reverse("instructor:assignment", args=[course.slug, exam.slug]))
    page.get_by_role("link", name="Release grades…").click()
    assert "1 has finished" in page.locator("#release-ended").inner_text()
    assert "1 is still working" in page.locator("#release-working").inner_text()
    assert "has not started" in page.locator("#release-not-started").inner_text()
    assert "The exam is still open" in page.locator("main").inner_text()
    page.screenshot(path=str(SHOTS / "i21-release-confirm.png"), full_page=True)
    page.get_by_role("button", name="Release grades now").click()
    page.wait_for_load_state()
    wait_graded(["student1"], parts=1)
    first.goto(reverse("exercise", args=[item.pk]))
    assert "Correct" in first.locator("#result-weights").inner_text()  # ended: released

    # student3 starts after the release: only "Answer saved" until their attempt ends.
    _, third = students["student3"]
    third.goto(overview)
    assert "never before your attempt ends" in third.locator("#attempt").inner_text()
    third.get_by_role("button", name="Start the exam").click()
    answer_weights_right(third, item)
    wait_graded(["student1", "student3"], parts=2)
    third.reload()
    shown = third.locator("main").inner_text()
    for word in ("Correct", "Not correct", "Solved", "score 100%"):
        assert word not in shown
    assert third.locator(".is-correct, .is-wrong, .heatmaps").count() == 0
    third.goto(reverse("exams:finish", args=[course.slug, exam.slug]))
    third.get_by_role("button", name="Finish attempt").click()
    third.goto(reverse("exercise", args=[item.pk]))
    assert "Correct" in third.locator("#result-weights").inner_text()

    # An extension reaches student2's open page within 10 s, without a reload.
    before = second.locator("[data-countdown-text]").inner_text()
    assert before.startswith("14:") or before.startswith("15:")
    accommodation_extend(assignment=exam, student=users["student2"], minutes=5, actor=users["instructor"])
    second.wait_for_function(
        "() => /^(19|20):/.test(document.querySelector('[data-countdown-text]').textContent)", timeout=10_000
    )
    assert re.search(rf"ends at {SHORT_TIME} CET", second.locator("#clock").inner_text())
    page.goto(reverse("proctor:view", args=[course.slug, exam.slug]))
    row = page.locator('#proctor tr[data-student="student2"]')
    assert row.locator("[data-page-deadline]").get_attribute("data-page-deadline") == "current"
    assert "has the deadline" in row.inner_text()
    for context, _ in students.values():
        context.close()
