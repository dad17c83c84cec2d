"""The course's people page at a lecturer's scale: the counts at its top, its filters,
search, sort and pages (all in the query string), invalid values, its fixed number of
queries, its weight, and "send the invitation again" to everyone not yet joined."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import PASSWORD, user_create
from courses import invitations
from courses.models import Course, Enrolment, EnrolmentSource, EnrolmentStatus, Invitation, Role

SLUG = "big"
PEOPLE_URL = reverse("courses:people", args=[SLUG])
AGAIN_URL = reverse("courses:people_invite_again", args=[SLUG])
ROW = re.compile(r'<tr><th scope="row">(.*?)</th>', re.S)


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def _part(html: str, element_id: str) -> str:
    match = re.search(rf'<(\w+)[^>]*id="{element_id}"[^>]*>(.*?)</\1>', html, re.S)
    assert match, element_id
    return _text(match.group(2))


def _usernames(html: str) -> list[str]:
    """The username of each row: the muted one after a full name, else the cell's text."""
    names = []
    table = re.search(r'<table class="data" id="people">(.*?)</table>', html, re.S).group(1)
    for cell in ROW.findall(table):
        muted = re.search(r'<span class="muted">(.*?)</span>', cell)
        names.append(_text(muted.group(1) if muted else cell))
    return names


def course_with(
    *, students: int, joined: int = 0, invited: int = 0, expired: int = 0, dropped: int = 0, tas: int = 2,
) -> Course:
    """A course taught by ines (who signs in) with ``tas`` teaching assistants and
    ``students`` students s001, s002, … (no names, e-mail s001@example.org, student id
    S-001): the first ``joined`` accepted their invitation, the next ``invited`` were sent
    one (of them the last ``expired`` so long ago that the link expired), the rest were
    never invited; the last ``dropped`` of all were dropped."""
    User = get_user_model()
    course = Course.objects.create(slug=SLUG, title="Attention at scale")
    ines = user_create("ines", email="ines@example.org")
    Enrolment.objects.create(course=course, user=ines, role=Role.INSTRUCTOR)
    staff = User.objects.bulk_create([User(username=f"ta{n}", password="!") for n in range(1, tas + 1)])
    users = User.objects.bulk_create(
        [User(username=f"s{n:03d}", email=f"s{n:03d}@example.org", password="!") for n in range(1, students + 1)]
    )
    Enrolment.objects.bulk_create(
        [Enrolment(course=course, user=user, role=Role.TEACHING_ASSISTANT) for user in staff]
        + [
            Enrolment(
                course=course, user=user, role=Role.STUDENT, student_id=f"S-{n:03d}", source=EnrolmentSource.ROSTER,
                status=EnrolmentStatus.DROPPED if n > students - dropped else EnrolmentStatus.ACTIVE,
            )
            for n, user in enumerate(users, start=1)
        ]
    )
    now = timezone.now()
    long_ago = now - timedelta(days=30)
    an_hour_ago = now - timedelta(hours=1)  # not expired, and not so recent that a bulk send leaves it out
    Invitation.objects.bulk_create(
        [Invitation(course=course, user=user, sent_by=ines, sent_at=now, accepted_at=now) for user in users[:joined]]
        + [
            Invitation(course=course, user=user, sent_by=ines, sent_at=long_ago if n >= invited - expired else an_hour_ago)
            for n, user in enumerate(users[joined:joined + invited])
        ]
    )
    return course


@pytest.fixture
def ines(client):
    def sign_in():
        assert client.login(username="ines", password=PASSWORD)
    return sign_in


def _page(client, query: str = "") -> str:
    response = client.get(PEOPLE_URL + query)
    assert response.status_code == 200, query
    return response.content.decode()


# --- the counts at the top ------------------------------------------------------------

def test_the_counts_of_a_300_student_course(db, client, ines):
    course_with(students=300, joined=17, invited=283)
    ines()
    html = _page(client)
    assert _part(html, "people-summary") == (
        "303 people: 300 students (17 joined, 283 invited and not yet joined, 0 not invited), "
        "2 teaching assistants, 1 instructor."
    )


def test_the_counts_name_expired_links_and_the_dropped(db, client, ines):
    course_with(students=12, joined=3, invited=6, expired=2, dropped=1, tas=1)
    ines()
    assert _part(_page(client), "people-summary") == (
        "13 people: 11 students (3 joined, 6 invited and not yet joined, 2 not invited), "
        "1 teaching assistant, 1 instructor. The invitation link of 2 students expired before they joined. "
        "Not counted: 1 dropped."
    )


def test_the_counts_are_one_query(db, django_assert_num_queries):
    from courses.selectors_people import people_summary

    course = course_with(students=40, joined=5, invited=30, expired=4, dropped=2)
    with django_assert_num_queries(1):
        summary = people_summary(course=course)
    assert (
        summary.people, summary.students, summary.teaching_assistants, summary.instructors, summary.students_joined,
        summary.students_not_yet_joined, summary.students_link_expired, summary.students_not_invited, summary.dropped,
    ) == (41, 38, 2, 1, 5, 30, 4, 3, 2)


# --- filters, search, sort --------------------------------------------------------------

@pytest.mark.parametrize(
    "query, shown, usernames",
    [
        ("?role=instructor", "Showing 1–1 of 1: instructors, by role, then name.", ["ines"]),
        ("?role=ta", "Showing 1–2 of 2: teaching assistants, by role, then name.", ["ta1", "ta2"]),
        ("?role=student&invitation=joined", "Showing 1–2 of 2: students, joined, by role, then name.",
         ["s001", "s002"]),
        ("?invitation=invited", "Showing 1–4 of 4: everyone, invited and not yet joined, by role, then name.",
         ["s003", "s004", "s005", "s006"]),
        ("?invitation=expired", "Showing 1–1 of 1: everyone, invitation link expired, by role, then name.",
         ["s006"]),
        ("?role=student&invitation=none",
         "Showing 1–2 of 2: students, not invited, by role, then name.", ["s007", "s008"]),
        ("?invitation=none", "Showing 1–5 of 5: everyone, not invited, by role, then name.",
         ["ines", "ta1", "ta2", "s007", "s008"]),
        ("?status=dropped", "Showing 1–1 of 1: everyone, dropped, by role, then name.", ["s008"]),
        ("?status=active&role=student&invitation=none",
         "Showing 1–1 of 1: students, enrolled, not invited, by role, then name.", ["s007"]),
        # search: username, e-mail, student id, every word
        ("?person=s00", "Showing 1–8 of 8: everyone, matching “s00”, by role, then name.",
         ["s001", "s002", "s003", "s004", "s005", "s006", "s007", "s008"]),
        ("?person=S-004", "Showing 1–1 of 1: everyone, matching “S-004”, by role, then name.", ["s004"]),
        ("?person=s005%40example", "Showing 1–1 of 1: everyone, matching “s005@example”, by role, then name.",
         ["s005"]),
        ("?person=++s00+++5++", "Showing 1–1 of 1: everyone, matching “s00 5”, by role, then name.", ["s005"]),
        ("?person=nobody-like-this", "Nobody matches: everyone, matching “nobody-like-this”, by role, then name.",
         []),
        # sorts, both ways
        ("?role=student&sort=username&order=desc",
         "Showing 1–8 of 8: students, by username (descending).",
         ["s008", "s007", "s006", "s005", "s004", "s003", "s002", "s001"]),
        ("?sort=student_id&invitation=none", "Showing 1–5 of 5: everyone, not invited, by student ID.",
         ["ines", "ta1", "ta2", "s007", "s008"]),
        # values it does not know read as no filter, and the default sort
        ("?role=admin&invitation=maybe&status=gone&sort=shoe-size&order=up",
         "Showing 1–11 of 11: everyone, by role, then name.",
         ["ines", "ta1", "ta2", "s001", "s002", "s003", "s004", "s005", "s006", "s007", "s008"]),
    ],
)
def test_each_filter_search_and_sort(db, client, ines, query, shown, usernames):
    course_with(students=8, joined=2, invited=4, expired=1, dropped=1)
    ines()
    html = _page(client, query)
    assert _part(html, "people-shown").removesuffix(" Clear the filters") == shown
    assert _usernames(html) == usernames


def test_the_filter_is_shown_in_the_form_and_cleared_by_one_link(db, client, ines):
    course_with(students=8, joined=2, invited=4)
    ines()
    html = _page(client, "?role=student&invitation=invited&person=s0&sort=name&order=desc")
    assert '<option value="student" selected>students</option>' in html
    assert '<option value="invited" selected>invited and not yet joined</option>' in html
    assert 'name="person" value="s0"' in html
    assert '<input type="hidden" name="sort" value="name"><input type="hidden" name="order" value="desc">' in html
    # "Clear" keeps the sort, drops every filter.
    assert f'<a href="{PEOPLE_URL}?sort=name&amp;order=desc" id="people-clear">Clear the filters</a>' in html
    assert "people-clear" not in _page(client, "?sort=name")


def test_sort_links_keep_the_filter_and_start_again_at_page_1(db, client, ines):
    course_with(students=120)
    ines()
    html = _page(client, "?role=student&page=2")
    header = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert [href.removeprefix(PEOPLE_URL) for href in re.findall(r'href="([^"]*)"', header)] == [
        "?role=student&amp;sort=name", "?role=student&amp;sort=username", "?role=student&amp;order=desc",
        "?role=student&amp;sort=student_id",
    ]
    assert f'aria-sort="ascending"><a href="{PEOPLE_URL}?role=student&amp;order=desc">Role</a>' in header


def test_by_name_people_without_a_last_name_file_under_the_name_shown(db, client, ines):
    User = get_user_model()
    course = course_with(students=3, tas=0)
    for username, first, last in (("afarsi", "Amal", "Al-Farsi"), ("plato", "Plato", ""), ("zz", "Zoe", "Adams")):
        Enrolment.objects.create(course=course, user=User.objects.create(username=username, first_name=first,
                                                                             last_name=last), role=Role.STUDENT)
    ines()
    assert _usernames(_page(client, "?role=student&sort=name")) == ["zz", "afarsi", "plato", "s001", "s002", "s003"]
    assert _usernames(_page(client, "?role=student&sort=name&order=desc")) == [
        "s003", "s002", "s001", "plato", "afarsi", "zz",
    ]


# --- pages -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "page, shown, pagination, first, last",
    [
        ("", "Showing 1–50 of 303", "Page 1 of 7 Next Last", "ines", "s047"),
        ("2", "Showing 51–100 of 303", "First Previous Page 2 of 7 Next Last", "s048", "s097"),
        ("6", "Showing 251–300 of 303", "First Previous Page 6 of 7 Next Last", "s248", "s297"),
        ("7", "Showing 301–303 of 303", "First Previous Page 7 of 7", "s298", "s300"),
        # past the end reads as the last page (as on the course gradebook); not a number as page 1
        ("8", "Showing 301–303 of 303", "First Previous Page 7 of 7", "s298", "s300"),
        ("999999999999", "Showing 301–303 of 303", "First Previous Page 7 of 7", "s298", "s300"),
        ("0", "Showing 1–50 of 303", "Page 1 of 7 Next Last", "ines", "s047"),
        ("-3", "Showing 1–50 of 303", "Page 1 of 7 Next Last", "ines", "s047"),
        ("two", "Showing 1–50 of 303", "Page 1 of 7 Next Last", "ines", "s047"),
        ("2.5", "Showing 1–50 of 303", "Page 1 of 7 Next Last", "ines", "s047"),
    ],
)
def test_pages_of_50(db, client, ines, page, shown, pagination, first, last):
    course_with(students=300, joined=17, invited=283)
    ines()
    html = _page(client, f"?page={page}" if page else "")
    assert _part(html, "people-shown") == f"{shown}: everyone, by role, then name."
    assert _text(re.search(r'<nav class="pagination"[^>]*>(.*?)</nav>', html, re.S).group(1)) == pagination
    names = _usernames(html)
    assert (names[0], names[-1]) == (first, last)


def test_page_links_keep_the_filter(db, client, ines):
    course_with(students=300, joined=17, invited=283)
    ines()
    html = _page(client, "?role=student&invitation=invited&page=2")
    assert _part(html, "people-shown").startswith("Showing 51–100 of 283: students, invited and not yet joined")
    nav = re.search(r'<nav class="pagination"[^>]*>(.*?)</nav>', html, re.S).group(1)
    assert [href.removeprefix(PEOPLE_URL) for href in re.findall(r'href="([^"]*)"', nav)] == [
        "?role=student&amp;invitation=invited&amp;page=1", "?role=student&amp;invitation=invited&amp;page=1",
        "?role=student&amp;invitation=invited&amp;page=3", "?role=student&amp;invitation=invited&amp;page=6",
    ]
    assert "Page 2 of 6" in _text(nav)


def test_one_page_has_no_pagination(db, client, ines):
    course_with(students=47)
    ines()
    html = _page(client)
    assert 'class="pagination"' not in html and _part(html, "people-shown").startswith("Showing 1–50 of 50")


@pytest.mark.parametrize("students", [10, 300])
def test_the_page_reads_in_a_fixed_number_of_queries(db, client, ines, students, django_assert_num_queries):
    course_with(students=students, joined=3, invited=5, expired=1, dropped=1)
    ines()
    # session, user, course, role; summary; matching count and rows; invitations and e-mail
    # trust of the page's people; how many a resend reaches; the invitations not yet answered
    with django_assert_num_queries(11):
        html = _page(client, "?role=student&person=s0")
    assert len(_usernames(html)) == min(students, 50)


def test_the_weight_of_a_page_of_50(db, client, ines):
    course_with(students=300, joined=17, invited=283)
    ines()
    html = _page(client, "?page=2")
    # Two forms a row (resend, drop); the add form, the filter, the resend-to-all one and
    # the header's "Log out".
    assert html.count("<form") == 2 * 50 + 4
    assert len(html.encode()) < 75_000, len(html.encode())


# --- what a row's button comes back to -------------------------------------------------

def test_a_rows_button_comes_back_to_the_same_filter_and_page(db, client, ines, django_capture_on_commit_callbacks):
    course_with(students=120, invited=120)
    ines()
    html = _page(client, "?role=student&page=2")
    drop = reverse("courses:person_remove", args=[SLUG, Enrolment.objects.get(user__username="s060").pk])
    assert f'action="{drop}?role=student&amp;page=2"' in html
    response = client.post(f"{drop}?role=student&page=2")
    assert response["Location"] == PEOPLE_URL + "?role=student&page=2"
    # A hand-made address comes back to the people page only, with its valid parts.
    response = client.post(f"{drop}?role=//evil.example&page=x&next=https://evil.example/")
    assert response["Location"] == PEOPLE_URL


# --- send the invitation again -----------------------------------------------------------

def _confirmation(html: str) -> tuple[str, str]:
    box = re.search(r'<form[^>]*id="invite-again-confirmation"[^>]*>(.*?)</form>', html, re.S).group(1)
    token = re.search(r'name="impact" value="([^"]+)"', box).group(1)
    return _text(re.search(r"<p>(.*?)</p>", box, re.S).group(1)), token


def test_send_again_to_everyone_not_yet_joined_asks_with_the_number_then_sends(
    db, client, ines, django_capture_on_commit_callbacks
):
    course = course_with(students=300, joined=17, invited=283, expired=40)
    ines()
    assert "Send the invitation again to the 283 not yet joined…" in _text(_page(client))
    with django_capture_on_commit_callbacks(execute=True):
        asked = client.post(AGAIN_URL)
    assert asked.status_code == 200 and mail.outbox == []
    # Shown at the form's address: every link and the filter still lead to the people page.
    assert 'href="?' not in asked.content.decode() and f'action="{PEOPLE_URL}" id="people-filter"' in asked.content.decode()
    message, token = _confirmation(asked.content.decode())
    assert message == (
        "Nothing is sent yet. Send the invitation e-mail again to 283 people who have not joined yet? "
        "Each gets a new link to choose a password, valid for 3 days."
    )
    assert Invitation.objects.filter(course=course, times_sent=2).count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(AGAIN_URL, {"confirm": "yes", "impact": token}, follow=True)
    assert "Sent the invitation again to 283 people." in sent.content.decode()
    assert len(mail.outbox) == 283
    assert sorted(m.to[0] for m in mail.outbox) == [f"s{n:03d}@example.org" for n in range(18, 301)]
    assert Invitation.objects.filter(course=course, times_sent=2).count() == 283
    assert Invitation.objects.filter(course=course, accepted_at__isnull=False, times_sent=1).count() == 17
    # After the resend no link has expired: the summary and the button say so.
    html = sent.content.decode()
    assert "expired before they joined" not in html
    # The same confirmation again (a second click) sends nothing: everyone was just sent
    # one, and a bulk send leaves out whoever was sent one in the last 10 minutes.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(AGAIN_URL, {"confirm": "yes", "impact": token}, follow=True)
    assert again.redirect_chain == [(PEOPLE_URL, 302)] and len(mail.outbox) == 283
    assert (
        "Everyone here not yet joined was sent the invitation in the last 10 minutes (283 people): give them "
        "time to read it, and send it again later if they do not join." in unescape(again.content.decode())
    )
    assert Invitation.objects.filter(course=course, times_sent=3).count() == 0


def test_send_again_leaves_out_who_was_sent_one_minutes_ago(db, client, ines, django_capture_on_commit_callbacks):
    course = course_with(students=10, invited=10)
    Invitation.objects.filter(course=course, user__username__in=["s001", "s002"]).update(
        sent_at=timezone.now() - timedelta(minutes=9)
    )
    Invitation.objects.filter(course=course, user__username="s003").update(sent_at=timezone.now() - timedelta(minutes=11))
    ines()
    message, token = _confirmation(client.post(AGAIN_URL).content.decode())
    assert message == (
        "Nothing is sent yet. Send the invitation e-mail again to 8 people who have not joined yet? "
        "Each gets a new link to choose a password, valid for 3 days. "
        "2 people sent one in the last 10 minutes are left out."
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post(AGAIN_URL, {"confirm": "yes", "impact": token})
    assert sorted(m.to[0] for m in mail.outbox) == [f"s{n:03d}@example.org" for n in range(3, 11)]
    assert list(
        Invitation.objects.filter(course=course, times_sent=1).values_list("user__username", flat=True).order_by("user__username")
    ) == ["s001", "s002"]


def test_send_again_reaches_only_the_filter_and_says_whom(db, client, ines, django_capture_on_commit_callbacks):
    course_with(students=30, joined=5, invited=20, expired=3, dropped=2)
    get_user_model().objects.filter(username="s010").update(email="")
    ines()
    query = "?role=student&invitation=expired&person=s02"
    html = _page(client, query)
    assert _usernames(html) == ["s023", "s024", "s025"]
    assert f'action="{AGAIN_URL}{query.replace("&", "&amp;")}"' in html
    assert "Send the invitation again to the 3 not yet joined of this list…" in _text(html)
    with django_capture_on_commit_callbacks(execute=True):
        message, token = _confirmation(client.post(AGAIN_URL + query).content.decode())
    assert message == (
        "Nothing is sent yet. Send the invitation e-mail again to 3 people who have not joined yet "
        "(students, invitation link expired, matching “s02”)? "
        "Each gets a new link to choose a password, valid for 3 days."
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(AGAIN_URL + query, {"confirm": "yes", "impact": token})
    assert response["Location"] == PEOPLE_URL + query
    assert sorted(m.to[0] for m in mail.outbox) == ["s023@example.org", "s024@example.org", "s025@example.org"]
    # The whole course: 20 invited, minus s010 without an address; the dropped s029, s030
    # never count; the 3 just sent are still not joined but left out as sent minutes ago.
    with django_capture_on_commit_callbacks(execute=True):
        message, _ = _confirmation(client.post(AGAIN_URL).content.decode())
    assert message == (
        "Nothing is sent yet. Send the invitation e-mail again to 16 people who have not joined yet? "
        "Each gets a new link to choose a password, valid for 3 days. "
        "3 people sent one in the last 10 minutes are left out. "
        "1 person without an e-mail address cannot be sent one."
    )


def test_a_confirmation_of_one_filter_does_not_send_another(db, client, ines, django_capture_on_commit_callbacks):
    course_with(students=10, invited=10)
    ines()
    _, token = _confirmation(client.post(AGAIN_URL + "?person=s001").content.decode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(AGAIN_URL, {"confirm": "yes", "impact": token})
    assert response.status_code == 200 and mail.outbox == []
    assert _confirmation(response.content.decode())[0].startswith(
        "Nothing is sent yet. Send the invitation e-mail again to 10 people"
    )


def test_send_again_with_nobody_waiting_says_so(db, client, ines, django_capture_on_commit_callbacks):
    course_with(students=5, joined=2)
    ines()
    assert "invite-again" not in _page(client)
    response = client.post(AGAIN_URL + "?role=student", {"confirm": "yes", "impact": "forged"}, follow=True)
    assert response.redirect_chain == [(PEOPLE_URL + "?role=student", 302)]
    assert (
        "Nobody here is waiting to join: everyone this list shows has joined, was never invited or was dropped."
        in unescape(response.content.decode())
    )
    assert mail.outbox == [] and Invitation.objects.filter(times_sent=2).count() == 0


def test_send_again_beyond_the_bound_sends_the_oldest_first(db, client, ines, django_capture_on_commit_callbacks,
                                                             monkeypatch):
    monkeypatch.setattr(invitations, "MAX_INVITATIONS_AT_ONCE", 4)
    monkeypatch.setattr("courses.services_people.MAX_INVITATIONS_AT_ONCE", 4)
    course = course_with(students=6, invited=6)
    for n, username in enumerate(["s004", "s006", "s002", "s001", "s003", "s005"]):
        Invitation.objects.filter(course=course, user__username=username).update(
            sent_at=timezone.now() - timedelta(hours=10 - n)
        )
    ines()
    message, token = _confirmation(client.post(AGAIN_URL).content.decode())
    assert message == (
        "Nothing is sent yet. Send the invitation e-mail again to the 4 people of the 6 not yet joined whose "
        "invitation is oldest? Send again afterwards to reach the others. "
        "Each gets a new link to choose a password, valid for 3 days."
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post(AGAIN_URL, {"confirm": "yes", "impact": token})
    assert [m.to[0] for m in mail.outbox] == [f"{u}@example.org" for u in ("s004", "s006", "s002", "s001")]


@pytest.mark.parametrize("username, status", [("ta1", 403), ("s001", 403), ("otto", 404)])
def test_only_the_courses_instructors_send_again(db, client, username, status):
    course_with(students=3, invited=3)
    user = get_user_model().objects.get(username=username) if username != "otto" else user_create("otto")
    user.set_password(PASSWORD)
    user.save()
    client.login(username=username, password=PASSWORD)
    assert client.post(AGAIN_URL, {"confirm": "yes"}).status_code == status
    assert Invitation.objects.filter(times_sent=2).count() == 0


def test_a_teaching_assistant_sees_the_page_without_actions(db, client):
    course_with(students=3, invited=3)
    ta = get_user_model().objects.get(username="ta1")
    ta.set_password(PASSWORD)
    ta.save()
    client.login(username="ta1", password=PASSWORD)
    html = _page(client)
    assert _part(html, "people-summary").startswith("6 people: 3 students (0 joined, 3 invited")
    table = re.search(r'<table class="data" id="people">(.*?)</table>', html, re.S).group(1)
    assert "invite-again" not in html and "people-add" not in html and "<form" not in table
    assert "<th scope=\"col\">Actions</th>" not in table
