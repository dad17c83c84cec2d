"""Browser test of an exam from start to release.

An instructor creates an exam in the assignment form (the exam preset, a 10-minute
limit), adds the worked example and a pool of two exercises, and gives student2 50 %
extra time on the accommodations page. student1 starts, answers (and sees only "Answer
saved"), and finishes after the summary of unanswered parts; student2 starts and is
closed by the clock, and the proctor view shows both (with student2's own time left
while it runs). The clock is moved by shifting student2's stored ``started_at`` back
(the server reads the start from there), and the beat task's closer is then run once,
as beat would. The instructor releases the grades; each student then sees exactly what
the preset allows: right or wrong and the scores, hints and heatmaps, but never the
worked solutions.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from e2e.a11y import check_page
from e2e.conftest import guarded_context, log_in

# A time as course_time_short shows it: the day comes too once it is not today (near midnight).
SHORT_TIME = r"(?:\w{3} \d{1,2} \w{3}, )?\d\d:\d\d"

pytestmark = pytest.mark.browser

COURSE = "attention-101"
WORKED_EXAMPLE = "attention-weights-one-query"
POOL = ("qkv-projections", "scaled-vs-unscaled-softmax")


def version_pk(slug: str) -> str:
    from exercises.models import ExerciseVersion, VersionStatus

    return str(
        ExerciseVersion.objects.filter(exercise__slug=slug, status=VersionStatus.PUBLISHED)
        .order_by("-number")
        .values_list("pk", flat=True)
        .first()
    )


def reference_row(variant, part: str) -> list[float]:
    from exercises import engine

    spec = engine.spec_from_json(variant.exercise_version.spec)
    return np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float).ravel().tolist()


def fill_grid(page, part: str, values) -> None:
    cells = page.locator(f"#grid-{part} input")
    assert cells.count() == len(values)
    for index, value in enumerate(values):
        cells.nth(index).fill(f"{value:.4f}")


def wait_graded(usernames, parts: int) -> None:
    """Until the worker has graded every stored answer of these students (bounded)."""
    from grading.models import Submission

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answers = Submission.objects.filter(student__username__in=usernames)
        if answers.count() == parts and not answers.exclude(status="graded").exists():
            return
        time.sleep(0.1)
    raise AssertionError("the answers were not graded within 30 s")


def create_exam(page) -> None:
    """The instructor's part, in the browser: the form with the exam preset, two pool
    exercises and the worked example, the pool named on the items page."""
    log_in(page, "instructor")
    page.goto(reverse("instructor:assignment_new", args=[COURSE]))
    page.fill("#id_title", "Midterm")
    page.fill("#id_slug", "midterm")
    page.fill("#id_attempts_per_part", "3")
    page.fill("#id_time_limit_minutes", "10")
    page.check("#id_is_published")
    page.select_option("#id_kind", "exam")
    page.select_option("#id_review_preset", "exam")
    page.locator("form.card button[type=submit]").click()
    page.wait_for_url(re.compile(r"/teach/attention-101/a/midterm/$"))
    page.get_by_role("link", name="Add exercises…").click()
    for slug in (WORKED_EXAMPLE, *POOL):
        page.check(f"#pick-{version_pk(slug)}")
    page.fill("#id_points", "2")
    page.get_by_role("button", name=f"Add {1 + len(POOL)} exercises").click()
    page.wait_for_url(re.compile(r"/teach/attention-101/a/midterm/$"))
    from courses.models import Assignment

    exam = Assignment.objects.get(course__slug=COURSE, slug="midterm")
    for item in exam.items.filter(exercise_version__exercise__slug__in=POOL):
        page.fill(f"#id_pool_{item.pk}", "projections")
    page.get_by_role("button", name="Save pools").click()
    page.wait_for_load_state()
    assert page.locator("#release-grades").is_visible()  # not released yet


def test_an_exam_from_the_form_to_the_release(page, chromium, live_server, watch, demo_site, artifacts):
    from courses.models import Assignment, PoolDraw
    from exams import tasks
    from exams.models import Accommodation, AssignmentAttempt
    from exercises.models import Variant

    create_exam(page)
    exam = Assignment.objects.get(course__slug=COURSE, slug="midterm")
    assert (exam.kind, exam.time_limit_minutes, exam.show_score, exam.show_solutions) == (
        "exam", 10, "on_release", "never",
    )
    assert sorted(exam.items.values_list("pool", flat=True)) == ["", "projections", "projections"]
    worked = exam.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    # 50 % extra time for student2, on the accommodations page.
    student2 = demo_site.course.enrolments.get(user__username="student2").user
    page.goto(reverse("proctor:accommodation_new", args=[COURSE, "midterm"]))
    page.select_option("#id_student", str(student2.pk))
    page.fill("#id_time_factor", "1.5")
    page.fill("#id_note", "50 % extra time")
    page.locator("form.card button[type=submit]").click()
    page.wait_for_load_state()
    assert Accommodation.objects.get(assignment=exam, student=student2).time_factor == 1.5
    overview = reverse("assignment", args=[COURSE, "midterm"])
    students = {}
    for username in ("student1", "student2"):
        context, student = guarded_context(chromium, live_server, watch)
        students[username] = (context, student)
        log_in(student, username)
        student.goto(overview)
        assert student.get_by_role("button", name="Start the exam").is_visible()
        if username == "student1":
            seen = check_page(student, watch, artifacts=artifacts, name="exam-start")
            assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []
            assert seen["overflow"]["scrollWidth"] <= seen["overflow"]["innerWidth"]
        student.get_by_role("button", name="Start the exam").click()
        student.wait_for_url(re.compile(re.escape(overview) + "$"))
        assert "Finish attempt" in student.locator("#attempt").inner_text()
        # The worked example and one exercise of the pool: two slots.
        assert student.locator("table.items tbody tr").count() == 2

    # student1 answers the weights right and the output wrong, and sees only "Answer saved".
    _, first = students["student1"]
    first.goto(reverse("exercise", args=[worked.pk]))
    variant = Variant.objects.get(assignment_item=worked, student__username="student1")
    fill_grid(first, "weights", reference_row(variant, "weights"))
    first.locator("#form-weights button[type=submit]").click()
    expect_text(first.locator("#result-weights"), "Answer saved")
    output_cells = first.locator("#grid-output input").count()
    fill_grid(first, "output", [0.0] * output_cells)
    first.locator("#form-output button[type=submit]").click()
    expect_text(first.locator("#result-output"), "Answer saved")
    wait_graded(["student1"], parts=2)
    first.reload()
    shown = first.locator("main").inner_text()
    for word in ("Correct", "Not correct", "Solved", "score 100%", "Hints"):
        assert word not in shown
    assert first.locator(".is-correct, .is-wrong, .is-partial, .heatmaps").count() == 0
    seen = check_page(first, watch, artifacts=artifacts, name="exam-answer-saved")
    assert seen["axe"] == {"390": [], "1280": []}
    assert seen["overflow"]["scrollWidth"] <= seen["overflow"]["innerWidth"]

    # The Finish summary names the pool exercise, not answered at all, then finishes.
    first.get_by_role("link", name="finish your attempt").click()
    assert re.fullmatch(r"(3 of 5|4 of 6) parts not answered yet:",
                        first.locator("#unanswered-count").inner_text())
    drawn = PoolDraw.objects.get(assignment=exam, student__username="student1").item
    assert first.locator("#unanswered").inner_text().startswith(drawn.exercise_version.title)
    seen = check_page(first, watch, artifacts=artifacts, name="exam-finish")
    assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []
    first.get_by_role("button", name="Finish attempt").click()
    first.wait_for_url(re.compile(re.escape(overview) + "$"))
    assert re.search(rf"Finished at {SHORT_TIME} UTC \(by you\)", first.locator("#attempt").inner_text())
    assert first.locator("#clock").count() == 0  # an ended attempt has no clock

    # student2's clock: 12 minutes in they still have 3 of their 15; 16 minutes in the
    # closer ends the attempt at its deadline.
    _, second = students["student2"]
    second.goto(reverse("exercise", args=[worked.pk]))
    started = AssignmentAttempt.objects.get(assignment=exam, student__username="student2").started_at
    AssignmentAttempt.objects.filter(assignment=exam, student__username="student2").update(
        started_at=started - timedelta(minutes=12)
    )
    assert tasks.close_expired_attempts()["time_up"] == 0
    page.goto(reverse("proctor:view", args=[COURSE, "midterm"]))
    live = page.locator("#proctor tr[data-student='student2']")
    assert live.get_attribute("data-state") == "in progress"
    assert re.fullmatch(r"[23]:\d\d", live.locator("td.num").first.inner_text())  # of their own 15
    second.reload()
    assert re.search(r"Time left: [23]:\d\d", second.locator("#clock").inner_text())
    fill_grid(second, "weights", [0.25] * second.locator("#grid-weights input").count())
    second.locator("#form-weights button[type=submit]").click()
    expect_text(second.locator("#result-weights"), "Answer saved")
    AssignmentAttempt.objects.filter(assignment=exam, student__username="student2").update(
        started_at=started - timedelta(minutes=16)
    )
    assert tasks.close_expired_attempts()["time_up"] == 1
    closed = AssignmentAttempt.objects.get(assignment=exam, student__username="student2")
    assert (closed.close_reason, closed.finished_at) == ("time_up", started - timedelta(minutes=16) + timedelta(minutes=15))
    second.reload()
    assert re.search(rf"Your attempt finished at {SHORT_TIME} UTC \(time ran out\)", second.locator("#attempt").inner_text())
    assert second.locator("#clock").count() == 0
    assert second.locator("form.answer-form").count() == 0

    # The proctor view shows both: who finished and how, the answers each saved.
    page.goto(reverse("proctor:view", args=[COURSE, "midterm"]))
    rows = {
        name: page.locator(f"#proctor tr[data-student='{name}']") for name in ("student1", "student2")
    }
    assert rows["student1"].get_attribute("data-state") == "finished"
    assert rows["student2"].get_attribute("data-state") == "finished"
    assert "finished by the student" in rows["student1"].inner_text()
    assert "time limit ran out" in rows["student2"].inner_text()
    cells = {name: row.locator("td.num").nth(1).inner_text() for name, row in rows.items()}
    assert cells == {"student1": "2", "student2": "1"}
    assert rows["student2"].locator(".aq-accommodation-marker").count() == 1

    # The instructor releases; the release is logged.
    page.goto(reverse("instructor:assignment", args=[COURSE, "midterm"]))
    page.get_by_role("link", name="Release grades…").click()
    assert "2 have finished" in page.locator("#release-ended").inner_text()
    page.get_by_role("button", name="Release grades now").click()
    page.wait_for_load_state()
    assert "Grades released" in page.get_by_role("status").inner_text()
    assert "Released" in page.locator("#release-log").inner_text()
    wait_graded(["student1", "student2"], parts=3)

    # Each student now sees what the preset allows: verdicts, scores, hints, heatmaps;
    # never the worked solution.
    first.goto(reverse("exercise", args=[worked.pk]))
    assert "Correct" in first.locator("#result-weights").inner_text()
    assert "score 100%" in first.locator("#result-weights").inner_text()
    assert "Not correct" in first.locator("#result-output").inner_text()
    assert first.locator("#result-weights .is-correct").count() == 1
    assert "Solved" in first.locator("#part-weights").inner_text()
    assert first.locator(".solution").count() == 0
    second.goto(reverse("exercise", args=[worked.pk]))
    assert "Not correct" in second.locator("#result-weights").inner_text()
    assert second.locator(".heatmaps").count() >= 1
    assert second.locator(".solution").count() == 0
    second.goto(reverse("dashboard"))
    assert "not released yet" not in second.locator("main").inner_text()
    for context, _ in students.values():
        context.close()


def expect_text(locator, text: str) -> None:
    from playwright.sync_api import expect

    expect(locator).to_contain_text(text, timeout=10_000)
