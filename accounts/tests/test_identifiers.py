"""Identifiers are normalised before any uniqueness check: NFKC, invisible format characters
(Unicode Cf) removed, e-mail case-folded — at sign-up, in the profile, at sign-in, in a roster
import and from the LMS."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.identifiers import email_normalise, identifier_normalise
from authoring.tests.factories import PASSWORD

NEW_PASSWORD = "a-long-unusual-passphrase-42"
ZWSP, ZWJ, RLM, SOFT_HYPHEN = "\u200b", "\u200d", "\u200f", "\u00ad"


@pytest.mark.parametrize("typed, normal", [
    (f"sam@example.org{ZWSP}", "sam@example.org"),
    (f"s{ZWJ}am@exa{RLM}mple.org", "sam@example.org"),
    (f"SAM@Exam{SOFT_HYPHEN}ple.ORG", "sam@example.org"),
    ("ｓａｍ@ｅｘａｍｐｌｅ.org", "sam@example.org"),  # full-width forms
    ("  sam@example.org ", "sam@example.org"),
])
def test_an_e_mail_has_one_normal_form(typed, normal):
    assert email_normalise(typed) == normal


def test_a_username_keeps_its_case_but_loses_invisible_characters():
    assert identifier_normalise(f"Sam{ZWSP}{RLM}") == "Sam"
    assert identifier_normalise("ﬁona") == "fiona"  # the ligature


def signup(client, *, username, email):
    return client.post(reverse("signup"), {
        "username": username, "email": email, "first_name": "A", "last_name": "B",
        "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })


@pytest.mark.parametrize("lookalike", [
    f"sam@example.org{ZWSP}", f"sam@exam{ZWSP}ple.org", "SAM@example.org", "ｓａｍ@example.org",
])
def test_sign_up_refuses_an_e_mail_that_differs_only_by_invisible_characters_or_case(client, people, lookalike):
    people.student.email = "sam@example.org"
    people.student.save()
    response = signup(client, username="newcomer", email=lookalike)
    assert response.status_code == 422
    assert "An account already uses this e-mail" in response.content.decode()
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_a_new_e_mail_is_stored_in_its_normal_form(client, db):
    assert signup(client, username="newcomer", email=f"New.Comer@Example.org{ZWSP}").status_code == 302
    assert get_user_model().objects.get(username="newcomer").email == "new.comer@example.org"


def test_the_profile_refuses_another_accounts_e_mail_with_a_zero_width_space(client, people):
    people.student2.email = "sue@example.org"
    people.student2.save()
    assert client.login(username=people.student.username, password=PASSWORD)
    response = client.post(reverse("profile"), {"first_name": "S", "last_name": "S", "email": f"sue{ZWSP}@example.org"})
    assert "Another account already uses this e-mail." in response.content.decode()


def test_sign_in_finds_the_account_through_a_lookalike_e_mail(client, people):
    people.student.email = "sam@example.org"
    people.student.save()
    response = client.post(reverse("login"), {"username": f"SAM@example.org{ZWSP}", "password": PASSWORD})
    assert response.status_code == 302


def test_a_roster_import_matches_the_existing_account_through_a_lookalike_e_mail(people):
    from courses import services

    people.student.email = "sam@example.org"
    people.student.save()
    accounts_before = get_user_model().objects.count()
    report = services.roster_import(
        course=people.course, rows=[{"email": f"Sam@Example.org{ZWSP}"}], dry_run=False, actor=people.instructor,
    )
    assert get_user_model().objects.count() == accounts_before
    assert [line.action for line in report.lines] == ["skip"]  # already enrolled: the same account
