"""The settings page says to the staff why nobody can join and who opens it where, not
the student's refusal ("Ask your instructor"), and a teaching assistant is not told to
add people or import a roster, which only instructors may."""

from __future__ import annotations

import re
from datetime import datetime, timezone as dt_timezone

import pytest
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import PASSWORD

URL = reverse("courses:settings", args=["attn"])


def join_closed(client, username: str) -> str:
    client.login(username=username, password=PASSWORD)
    page = client.get(URL).content.decode()
    found = re.search(r'<p class="bad" id="join-closed">(.*?)</p>', page, re.S)
    return found[1] if found else ""


@pytest.mark.parametrize(("username", "said"), [
    ("ines", "Nobody can join with it now: joining by code is closed. Tick “Joining by code is open” below and "
             "save to open it."),
    ("tariq", "Nobody can join with it now: joining by code is closed. An instructor of the course opens it on "
              "this page."),
])
def test_closed_joining_says_who_opens_it(client, people, username, said):
    assert join_closed(client, username) == said


@pytest.mark.parametrize(("username", "said"), [
    ("ines", "Nobody can join with it now: the code expired Sat 1 Jan 2000, 12:00 UTC. Set a later expiry (or "
             "none) below and save, or make a new code."),
    ("tariq", "Nobody can join with it now: the code expired Sat 1 Jan 2000, 12:00 UTC. An instructor of the "
              "course sets a later expiry on this page."),
])
def test_an_expired_code_says_when_and_what_to_do(client, people, username, said):
    people.course.join_open = True
    people.course.join_expires_at = datetime(2000, 1, 1, 12, 0, tzinfo=dt_timezone.utc)
    people.course.save()
    assert join_closed(client, username) == said


def test_an_archived_course_says_how_to_bring_it_back(client, people):
    people.course.join_open = True
    people.course.archived_at = timezone.now()
    people.course.save()
    assert join_closed(client, "ines") == (
        "Nobody can join with it now: the course is archived and takes no new students; bring it back at the "
        "bottom of this page to open it again."
    )


def test_open_joining_says_nothing_is_closed(client, people):
    people.course.join_open = True
    people.course.save()
    assert join_closed(client, "ines") == ""


@pytest.mark.parametrize(("username", "said"), [
    ("ines", 'Other ways in: <a href="/courses/attn/people/">add people by hand or import a roster CSV</a>.'),
    ("tariq", 'Other ways in: an instructor of the course adds people by hand or imports a roster CSV on '
              '<a href="/courses/attn/people/">the people page</a>.'),
])
def test_other_ways_in_are_offered_to_whoever_may_use_them(client, people, username, said):
    client.login(username=username, password=PASSWORD)
    page = client.get(URL).content.decode()
    assert f"<p>{said}</p>" in page
    assert "Ask your instructor" not in page
