"""Each form field's aria-describedby names only ids that are on the page: its help text and
its errors are tied to it, so a screen reader reads the password rules and what went wrong
with the field (accounts/_fields.html and courses/_fields.html)."""

from __future__ import annotations

from html.parser import HTMLParser

from django.contrib.auth.models import Permission
from django.urls import reverse


class IdsAndDescriptions(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.described: dict[str, list[str]] = {}  # field name -> ids it names
        self.texts: dict[str, str] = {}  # id -> its text
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.append(attrs["id"])
            self._open.append(attrs["id"])
            self.texts[attrs["id"]] = ""
        if "aria-describedby" in attrs:
            self.described[attrs.get("name") or attrs.get("id")] = attrs["aria-describedby"].split()

    def handle_endtag(self, tag):
        if tag == "span" and self._open:
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self.texts[self._open[-1]] += data


def read(response) -> IdsAndDescriptions:
    page = IdsAndDescriptions()
    page.feed(response.content.decode())
    return page


def test_sign_up_with_mismatched_passwords_ties_help_and_errors_to_their_fields(client, db):
    response = client.post(reverse("signup"), {
        "username": "newbie", "email": "newbie@example.org",
        "password1": "a-long-unusual-passphrase-42", "password2": "a-different-passphrase-43",
    })
    assert response.status_code == 422
    page = read(response)
    assert page.described["password2"] == ["id_password2_helptext", "id_password2_error"]
    assert page.described["password1"] == ["id_password1_helptext"]
    assert page.described["email"] == ["id_email_helptext"]
    named = [ref for refs in page.described.values() for ref in refs]
    assert [ref for ref in named if ref not in page.ids] == []
    assert len(page.ids) == len(set(page.ids))  # and each id once
    assert page.texts["id_password2_error"] == "The two password fields didn’t match."
    assert page.texts["id_email_helptext"] == "For resetting a forgotten password."
    assert "Your password can’t be too similar" in page.texts["id_password1_helptext"]


def test_a_course_form_with_errors_ties_them_to_their_fields(client, people):
    people.instructor.user_permissions.add(Permission.objects.get(codename="create_course"))
    client.force_login(people.instructor)
    response = client.post(reverse("courses:new"), {"title": "", "slug": "Not a slug!", "time_zone": "UTC"})
    assert response.status_code == 422
    page = read(response)
    assert page.described["title"] == ["id_title_error"]
    assert page.described["slug"] == ["id_slug_helptext", "id_slug_error"]
    named = [ref for refs in page.described.values() for ref in refs]
    assert [ref for ref in named if ref not in page.ids] == []
    assert page.texts["id_slug_helptext"] == (
        "Letters, digits and hyphens, e.g. attention-2027; it cannot be changed later."
    )
    assert page.texts["id_title_error"] == "This field is required."
