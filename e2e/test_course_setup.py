"""A course from nothing, in the browser: an administrator grants course creation, the
instructor creates a course and adds a TA, a new student signs up through the join link
(in a second browser) and lands enrolled, a roster CSV goes in (dry run, then apply) with
one bad row reported, the student resets a forgotten password through the e-mail, and the
instructor copies the course for a new term."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.core import mail

from e2e.a11y import axe_violations
from e2e.conftest import guarded_context, log_in

pytestmark = pytest.mark.browser

PASSWORD = "attention-demo"
NEW_PASSWORD = "a-much-longer-passphrase-17"
ROSTER = """\
email,name,student_id,role
ada@example.org,Ada Lovelace,S-1,student
not-an-address,Bad Row,S-2,student
carl@example.org,Carl Gauss,S-3,
"""


@pytest.fixture
def empty_site(transactional_db, settings):
    from django.contrib.auth import get_user_model

    from accounts.tests.helpers import email_confirmed
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()  # the exercise library; no course, no enrolment
    User = get_user_model()
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    User.objects.create_user("ines", "ines@example.org", PASSWORD)
    # tara has confirmed her address: only a confirmed address finds an account.
    email_confirmed(User.objects.create_user("tara", "", PASSWORD), "tara@example.org")


def test_a_course_from_an_empty_site(page, chromium, live_server, watch, empty_site):
    from courses.models import Course, Enrolment, Role

    inaccessible = {}

    def check(on_page):
        """axe-core's serious and critical findings on each new page, kept for the end."""
        found = axe_violations(on_page, watch)
        if found:
            inaccessible[on_page.url] = found

    # An administrator lets ines create courses, in the Django admin.
    log_in(page, "root")
    page.goto("/admin/auth/user/?q=ines")
    page.get_by_role("link", name="ines", exact=True).click()
    permission = page.locator("#id_user_permissions_from option", has_text="May create courses")
    page.select_option("#id_user_permissions_from", value=permission.get_attribute("value"))
    page.click("#id_user_permissions_add")
    page.click("input[name=_save]")
    page.wait_for_url(re.compile(r"/admin/auth/user/(\?.*)?$"))
    assert "was changed successfully" in page.locator(".messagelist").inner_text()
    page.context.clear_cookies()

    # ines creates a course.
    log_in(page, "ines")
    page.get_by_role("link", name="Create a course").click()
    page.fill("#id_title", "Attention, spring")
    page.fill("#id_slug", "attention-spring")
    page.fill("#id_term", "Spring 2027")
    page.select_option("#id_time_zone", "Europe/Berlin")
    page.fill("#id_description", "Scaled dot-product attention, from scratch.")
    page.get_by_role("button", name="Create the course").click()
    page.wait_for_url(re.compile(r"/courses/attention-spring/settings/$"))
    join_url = page.locator("#join-link").get_attribute("href")
    check(page)
    assert re.fullmatch(rf"{re.escape(live_server.url)}/join/[A-Z2-9]{{8}}/", join_url)

    # ...adds a TA by e-mail...
    page.get_by_role("link", name="People").first.click()
    check(page)
    page.fill("#id_identifier", "tara@example.org")
    page.select_option("#id_role", "ta")
    page.get_by_role("button", name="Add", exact=True).click()
    assert (
        "tara@example.org: invited (teaching assistant); they join the course by answering the invitation: "
        "it waits on their page of courses."
    ) in page.locator(".messages").inner_text()
    # tara's account existed: she is in the course once she accepts on her dashboard.
    context, tara = guarded_context(chromium, live_server, watch)
    try:
        log_in(tara, "tara")
        tara.goto("/")
        assert "Attention, spring · Spring 2027: ines invites you as teaching assistant." in tara.locator("#invitations").inner_text()
        tara.locator("#invitations").get_by_role("button", name="Accept").click()
        tara.wait_for_url(re.compile(r"/teach/attention-spring/$"))
    finally:
        context.close()

    # ...and an assignment with one exercise, due on 1 March.
    page.goto("/teach/attention-spring/assignments/new/")
    page.fill("#id_title", "Week 1")
    page.fill("#id_slug", "week-1")
    page.fill("#id_opens_at", "2027-02-22T09:00")
    page.fill("#id_due_at", "2027-03-01T09:00")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(r"/teach/attention-spring/a/week-1/$"))
    page.get_by_role("link", name="Add exercises…").click()
    page.locator(".aq-picker-row input[type=checkbox]:not([disabled])").first.check()
    page.get_by_role("button", name="Add 1 exercise").click()
    page.wait_for_url(re.compile(r"/teach/attention-spring/a/week-1/$"))
    assert page.locator(".messages").inner_text().startswith("Added ")

    # A new student opens the join link in another browser, signs up and lands enrolled.
    context, student = guarded_context(chromium, live_server, watch)
    try:
        student.goto(join_url)
        check(student)
        student.get_by_role("link", name="Sign up and join").click()
        check(student)
        assert "you are enrolled in Attention, spring" in student.locator("main").inner_text()
        student.fill("#id_username", "nina")
        student.fill("#id_email", "nina@example.org")
        student.fill("#id_password1", PASSWORD + "-nina")
        student.fill("#id_password2", PASSWORD + "-nina")
        student.get_by_role("button", name="Sign up").click()
        student.wait_for_url(re.compile(r"/#course-attention-spring$"))  # the course joined
        assert "You are enrolled in Attention, spring." in student.locator(".messages").inner_text()
        assert "Attention, spring · Spring 2027" in student.locator("main h2").all_inner_texts()[1]

        # The instructor imports a roster: the dry run reports every line and changes nothing.
        page.goto("/courses/attention-spring/people/roster/")
        page.fill("#id_text", ROSTER)
        page.get_by_role("button", name="Check (dry run)").click()
        check(page)
        rows = page.locator("#roster-report tbody tr").all_inner_texts()
        assert [re.sub(r"\s+", " ", row).strip() for row in rows] == [
            "2 ada@example.org create new account 'ada', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page",
            "3 not-an-address error 'not-an-address' is not an e-mail address",
            "4 carl@example.org create new account 'carl', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page",
        ]
        assert not Enrolment.objects.filter(user__username__in=["ada", "carl"]).exists()
        page.get_by_role("button", name="Apply these 2 changes").click()
        assert "Imported the roster: 2 changes." in page.locator(".messages").inner_text()
        course = Course.objects.get(slug="attention-spring")
        assert sorted(course.enrolments.values_list("user__username", "role", "student_id")) == [
            ("ada", Role.STUDENT, "S-1"), ("carl", Role.STUDENT, "S-3"), ("ines", Role.INSTRUCTOR, ""),
            ("nina", Role.STUDENT, ""), ("tara", Role.TEACHING_ASSISTANT, ""),
        ]

        # nina forgets her password and resets it through the e-mail.
        student.get_by_role("button", name="Log out").click()
        student.goto("/login/")
        student.get_by_role("link", name="Forgot your password?").click()
        student.fill("#id_email", "nina@example.org")
        student.get_by_role("button", name="Send the link").click()
        student.wait_for_url(re.compile(r"/accounts/password/reset/sent/$"))
        # The confirmation link sent at sign-up, then the reset link.
        assert [message.to for message in mail.outbox] == [["nina@example.org"], ["nina@example.org"]]
        link = re.search(r"https?://\S+/accounts/password/reset/\S+/", mail.outbox[1].body).group(0)
        student.goto(link)
        check(student)
        student.fill("#id_new_password1", NEW_PASSWORD)
        student.fill("#id_new_password2", NEW_PASSWORD)
        student.get_by_role("button", name="Set the password").click()
        student.wait_for_url(re.compile(r"/accounts/password/reset/done/$"))
        log_in(student, "nina@example.org", NEW_PASSWORD)  # by e-mail, with the new password
        assert "Attention, spring" in student.locator("main").inner_text()
    finally:
        context.close()

    # The instructor copies the course for the next term, 182 days later.
    page.goto("/courses/attention-spring/settings/")
    page.get_by_role("link", name="Copy for a new term").click()
    page.fill("#id_title", "Attention, autumn")
    page.fill("#id_slug", "attention-autumn")
    page.fill("#id_term", "Autumn 2027")
    page.fill("#id_offset_days", "182")
    check(page)
    page.get_by_role("button", name="Copy the course").click()
    page.wait_for_url(re.compile(r"/courses/attention-autumn/settings/$"))
    assert ("Copied Attention, spring to attention-autumn with 1 assignments. 1 member of staff invited: each joins "
            "when they accept on their dashboard.") in page.locator(".messages").inner_text()
    copy, original = Course.objects.get(slug="attention-autumn"), Course.objects.get(slug="attention-spring")
    copied, source = copy.assignments.get(), original.assignments.get()
    berlin = ZoneInfo("Europe/Berlin")  # the form's dates are the course's local time
    assert (source.opens_at, source.due_at) == (datetime(2027, 2, 22, 9, 0, tzinfo=berlin), datetime(2027, 3, 1, 9, 0, tzinfo=berlin))
    # 182 days later, still at 09:00 in Berlin although summer time has begun.
    assert (copied.slug, copied.opens_at, copied.due_at) == ("week-1", datetime(2027, 8, 23, 9, 0, tzinfo=berlin), datetime(2027, 8, 30, 9, 0, tzinfo=berlin))
    assert list(copied.items.values_list("exercise_version_id", flat=True)) == list(source.items.values_list("exercise_version_id", flat=True))
    # The copier is its instructor; tara is invited again with her role, and joins once she accepts.
    assert sorted(copy.enrolments.values_list("user__username", "role")) == [("ines", Role.INSTRUCTOR)]
    assert list(copy.enrolment_invitations.values_list("user__username", "role")) == [("tara", Role.TEACHING_ASSISTANT)]
    assert copy.join_code != original.join_code
    assert inaccessible == {}
