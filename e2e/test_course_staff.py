"""A 300-student course's staff work in the browser: the course gradebook with weighted
categories and its CSV with student IDs, rubric grading of one part across five students
(next waiting, keyboard, anonymous mode), a solo course publishing without a second
reviewer, an invitation e-mail that sets a password, and every staff page at 390 px wide
without sideways scroll (and no serious axe finding)."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from pathlib import Path

import pytest

from e2e.a11y import PHONE, axe_violations, horizontal_overflow, settle
from e2e.conftest import log_in

pytestmark = pytest.mark.browser

COURSE = "attention-101"
SHOTS = Path("/work/shots")


@pytest.fixture
def teaching_site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


def _shot(page, name: str) -> None:
    if SHOTS.is_dir():
        page.screenshot(path=SHOTS / f"i26-{name}.png", full_page=True)


def _essays(site, count: int = 5):
    """``count`` students of the demo course answered the free-text part of equal-keys."""
    from authoring.tests.factories import submission_add, user_create, variant_for
    from courses.models import Enrolment, Role
    from exercises import engine
    from exercises.specs import version_spec
    from grading.models import SubmissionStatus

    item = site.assignment.items.get(exercise_version__exercise__slug="equal-keys")
    names = [("Ada", "Lovelace"), ("Grace", "Hopper"), ("Alan", "Turing"), ("Emmy", "Noether"), ("Kurt", "Goedel")]
    submissions = []
    for index, (first, last) in enumerate(names[:count]):
        user = user_create(f"{first.lower()}", first_name=first, last_name=last)
        Enrolment.objects.create(course=site.course, user=user, role=Role.STUDENT, student_id=f"S-{index + 1:03d}")
        params = engine.draw_variant(version_spec(item.exercise_version), index + 1).params
        variant = variant_for(item, user, params=params, seed=index + 1)
        submissions.append(submission_add(
            variant, "why_equal", f"Equal keys give equal scores ({first}).", awarded=None,
            status=SubmissionStatus.MANUAL,
        ))
    return item, submissions


def test_course_gradebook_with_categories_and_a_csv_with_student_ids(page, teaching_site, live_server):
    from courses.models import Assignment, Enrolment
    from django.utils import timezone

    from authoring.tests.factories import submission_add, variant_for
    from courses.models import AssignmentItem
    from django.contrib.auth import get_user_model
    from exercises import engine
    from exercises.specs import version_spec

    site = teaching_site
    Enrolment.objects.filter(course=site.course, user__username="student1").update(student_id="S-0001")
    exam = Assignment.objects.create(
        course=site.course, slug="midterm", title="Midterm", kind="exam", due_at=timezone.now() - timedelta(days=1)
    )
    first = site.assignment.items.order_by("position").first()
    AssignmentItem.objects.create(assignment=exam, exercise_version=first.exercise_version, points=10)
    spec = version_spec(first.exercise_version)
    for seed, (username, awarded) in enumerate((("student1", 1.0), ("student2", 0.5), ("student3", 0.0)), start=1):
        user = get_user_model().objects.get(username=username)
        variant = variant_for(first, user, params=engine.draw_variant(spec, seed).params, seed=seed)
        submission_add(variant, spec.parts[0].key, "1", awarded=awarded)
    log_in(page, "instructor")
    page.goto(f"/teach/{COURSE}/")
    page.get_by_role("link", name="Course gradebook").click()
    page.wait_for_url(re.compile(r"/gradebook/$"))
    for name, weight, drop in (("Homework", "40", "1"), ("Exams", "60", "0")):
        form = page.locator("#category-add")
        form.get_by_label("Name").fill(name)
        form.get_by_label("Weight %").fill(weight)
        form.get_by_label("Drop lowest").fill(drop)
        form.get_by_role("button", name="Add category").click()
        page.wait_for_load_state()
    page.get_by_label(site.assignment.title).select_option(label="Homework")
    page.get_by_label("Midterm").select_option(label="Exams")
    page.get_by_role("button", name="Save categories of assignments").click()
    table = page.locator("#course-gradebook")
    header = table.locator("thead").inner_text()
    assert "Homework" in header and "40 %" in header and "Exams" in header and "60 %" in header
    row = table.locator("tr", has_text="student1")
    assert "S-0001" in row.inner_text()
    assert "not attempted" in row.inner_text()  # the midterm was never started: not a 0
    _shot(page, "gradebook")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="CSV for Excel").click()
    body = Path(download_info.value.path()).read_bytes()
    assert body.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))
    assert rows[0][:5] == ["username", "student_id", "email", "first_name", "last_name"]
    assert rows[0][-4:] == ["Homework (40 %) %", "Exams (60 %) %", "total %", "pending"]
    student1 = next(r for r in rows if r[0] == "student1")
    assert student1[1] == "S-0001" and student1[rows[0].index("Midterm (/10)")] == "not attempted"
    assert student1[-1] == ""  # every answer graded: nothing pending


def test_rubric_grading_of_one_part_across_five_students(page, teaching_site, live_server):
    item, submissions = _essays(teaching_site)
    log_in(page, "instructor")
    page.goto(f"/teach/{COURSE}/grading/")
    page.locator(f"#grading-parts a[href$='/grading/{item.pk}/why_equal/']").click()
    page.wait_for_url(re.compile(r"/grading/\d+/why_equal/$"))
    assert "5 waiting" in page.locator("#waiting-count").inner_text()
    for text, points in (("Says equal keys give equal scores", "2"), ("Says the value changes across queries", "1")):
        form = page.locator("#rubric-add")
        page.locator("#rubric-edit summary").click()
        form.get_by_label("Item").fill(text)
        form.get_by_label("Points").fill(points)
        form.get_by_role("button", name="Add item").click()
        page.wait_for_load_state()
    page.get_by_role("link", name="Grade anonymously (hide names)").click()
    page.wait_for_load_state()
    listing = page.locator("#question-answers").inner_text()
    assert "Answer 1" in listing and "Answer 5" in listing and "Lovelace" not in listing
    page.locator("#next-waiting").click()
    page.wait_for_url(re.compile(r"/answers/%d/$" % submissions[0].pk))
    assert "Ada" not in page.locator("h1").inner_text()
    page.keyboard.press("1")  # tick the first item, then save and go on with "s"
    assert page.locator("input[data-shortcut='1']").is_checked()
    _shot(page, "rubric")
    page.keyboard.press("s")
    page.wait_for_url(re.compile(r"/answers/%d/$" % submissions[1].pk))
    assert "answer 2" in page.locator("h1").inner_text()
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.get_by_role("button", name="Save and next waiting").click()
    page.wait_for_url(re.compile(r"/answers/%d/$" % submissions[2].pk))
    # The last three at once: one rubric item applied to the chosen answers.
    page.goto(f"/teach/{COURSE}/grading/{item.pk}/why_equal/")
    for submission in submissions[2:]:
        page.locator(f"#pick-{submission.pk}").check()
    page.get_by_label("Apply rubric item").select_option(index=1)
    page.get_by_role("button", name="to the chosen answers").click()
    page.wait_for_load_state()
    assert "Every answer is graded." in page.content()
    scores = []
    for submission in submissions:
        submission.refresh_from_db()
        scores.append(round(submission.score, 4))
    assert scores == [0.6667, 1.0, 0.3333, 0.3333, 0.3333]


def test_a_solo_course_publishes_without_a_second_reviewer(page, teaching_site, live_server):
    from authoring import services
    from authoring.tests.factories import PASSWORD, product_yaml, user_create
    from courses.models import Course, Enrolment, Role

    course = Course.objects.create(slug="solo", title="Solo seminar")
    olga = user_create("olga")
    Enrolment.objects.create(course=course, user=olga, role=Role.INSTRUCTOR)
    draft = services.exercise_create(course=course, actor=olga, source=product_yaml(slug="solo-product"))
    log_in(page, "olga", PASSWORD)
    page.goto("/author/solo/")
    assert "no second reviewer is required" in page.locator("#review-setting").inner_text()
    page.goto(f"/author/solo/e/solo-product/v{draft.number}/")
    page.get_by_role("button", name="Publish").click()
    page.wait_for_load_state()
    assert page.locator("#version-status").inner_text() == "Published"
    history = page.locator(".history").inner_text()
    assert "Published without a second reviewer (from draft to published)" in history


def test_an_invitation_email_sets_a_password(page, teaching_site, live_server, mailoutbox):
    log_in(page, "instructor")
    page.goto(f"/courses/{COURSE}/people/roster/")
    page.get_by_label("…or paste the CSV").fill("email,name,student_id\nnew.student@example.org,New Student,S-9\n")
    page.get_by_role("button", name="Check (dry run)").click()
    page.locator("#apply-invite").check()
    page.get_by_role("button", name=re.compile("Apply these")).click()
    page.wait_for_load_state()
    assert "1 invitation sent" in page.content()
    page.goto(f"/courses/{COURSE}/people/")
    assert "sent " in page.locator("#people tr", has_text="new.student").inner_text()
    link = re.search(r"https?://[^\s]+/accounts/invitation/\S+", mailoutbox[-1].body).group(0)
    page.context.clear_cookies()
    page.goto(link)
    assert "Welcome to attnquiz" in page.content(), (link, page.content()[-1500:])
    page.locator("#id_new_password1").fill("a-long-new-pass-42")
    page.locator("#id_new_password2").fill("a-long-new-pass-42")
    page.get_by_role("button", name="Set my password").click()
    # Signed in and on the invited course's page (a student's: its section of their courses page).
    page.wait_for_url(re.compile(rf"/#course-{COURSE}$"))
    assert page.locator(".messages").inner_text() == f"Your password is set. Welcome to {teaching_site.course.title}."
    assert page.locator(".site-header .who").inner_text() == "new.student"
    page.context.clear_cookies()
    log_in(page, "new.student", "a-long-new-pass-42")
    assert page.url.endswith(f"/#course-{COURSE}")  # a student of one course lands on its section


def _staff_urls(site, item, submission, version) -> list[str]:
    a = f"/teach/{COURSE}/a/{site.assignment.slug}/"
    return [
        f"/teach/{COURSE}/", f"/teach/{COURSE}/assignments/new/", a, a + "edit/", a + "items/choose/",
        a + f"items/preview/{version.pk}/", a + "gradebook/",
        a + "analytics/", a + "regrade/", f"/teach/{COURSE}/gradebook/", f"/teach/{COURSE}/manual/",
        f"/teach/{COURSE}/manual/{submission.pk}/", f"/teach/{COURSE}/grading/",
        f"/teach/{COURSE}/grading/{item.pk}/why_equal/",
        f"/teach/{COURSE}/grading/{item.pk}/why_equal/answers/{submission.pk}/",
        f"/teach/{COURSE}/regrade-requests/", f"/teach/{COURSE}/skills/",
        a + "accommodations/", a + "proctor/",
        f"/courses/{COURSE}/settings/", f"/courses/{COURSE}/people/", f"/courses/{COURSE}/people/roster/",
        "/courses/new/", f"/author/{COURSE}/", f"/author/{COURSE}/new/",
        f"/author/{COURSE}/e/{version.exercise.slug}/", f"/author/{COURSE}/e/{version.exercise.slug}/v{version.number}/",
        f"/author/{COURSE}/e/{version.exercise.slug}/v{version.number}/test/",
        f"/lti/courses/{COURSE}/", "/api/tokens/",
    ]


def test_every_staff_page_at_390_px(page, watch, teaching_site, live_server):
    from django.contrib.auth.models import Permission
    from django.contrib.auth import get_user_model

    item, submissions = _essays(teaching_site, count=2)
    version = item.exercise_version
    get_user_model().objects.get(username="instructor").user_permissions.add(
        Permission.objects.get(codename="create_course")
    )
    log_in(page, "instructor")
    page.set_viewport_size(PHONE)
    problems = {}
    for url in _staff_urls(teaching_site, item, submissions[0], version):
        response = page.goto(url)
        assert response.status == 200, url
        settle(page)
        overflow = horizontal_overflow(page)
        if overflow["scrollWidth"] > overflow["innerWidth"]:
            problems[url] = overflow
        violations = axe_violations(page, watch)
        if violations:
            problems[url + " (axe)"] = violations
        if url.endswith("/people/"):
            _shot(page, "staff-390")
    assert problems == {}, "\n".join(f"{url}: {found}" for url, found in problems.items())
