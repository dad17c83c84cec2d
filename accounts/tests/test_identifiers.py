"""Identifiers are normalised before any uniqueness check: NFKC, invisible format characters
(Unicode Cf) removed, e-mail case-folded — at sign-up, in the profile, at sign-in, in a roster
import and from the LMS."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.identifiers import email_normalise, identifier_normalise, username_scripts_refusal, username_skeleton
from accounts.tests.helpers import email_confirmed
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
def test_another_accounts_e_mail_in_a_lookalike_form_is_met_at_sign_up_and_told_to_its_mailbox(client, people, lookalike):
    from django.core import mail

    from accounts.selectors import user_by_identifier

    email_confirmed(people.student, "sam@example.org")
    response = signup(client, username="newcomer", email=lookalike)
    assert response.status_code == 302  # as for a free address: the visitor learns nothing
    assert get_user_model().objects.get(username="newcomer").email == "sam@example.org"
    assert [(m.to, m.subject) for m in mail.outbox] == [(["sam@example.org"], "Your e-mail address at attnquiz")]
    assert "/accounts/verify/" not in mail.outbox[0].body
    assert user_by_identifier(identifier="sam@example.org") == people.student


def test_a_new_e_mail_is_stored_in_its_normal_form(client, db):
    assert signup(client, username="newcomer", email=f"New.Comer@Example.org{ZWSP}").status_code == 302
    assert get_user_model().objects.get(username="newcomer").email == "new.comer@example.org"


def test_the_profile_meets_another_accounts_e_mail_with_a_zero_width_space_and_keeps_the_old_one(client, people):
    from django.core import mail

    email_confirmed(people.student2, "sue@example.org")
    assert client.login(username=people.student.username, password=PASSWORD)
    response = client.post(reverse("profile"), {"first_name": "S", "last_name": "S", "email": f"sue{ZWSP}@example.org"})
    assert response.status_code == 302
    assert [(m.to, m.subject) for m in mail.outbox] == [(["sue@example.org"], "Your e-mail address at attnquiz")]
    people.student.refresh_from_db()
    assert people.student.email == ""


def test_sign_in_finds_the_account_through_a_lookalike_e_mail(client, people):
    people.student.email = "sam@example.org"
    people.student.save()
    response = client.post(reverse("login"), {"username": f"SAM@example.org{ZWSP}", "password": PASSWORD})
    assert response.status_code == 302


def test_a_roster_import_matches_the_existing_account_through_a_lookalike_e_mail(people):
    from courses import services

    email_confirmed(people.student, "sam@example.org")
    accounts_before = get_user_model().objects.count()
    report = services.roster_import(
        course=people.course, rows=[{"email": f"Sam@Example.org{ZWSP}"}], dry_run=False, actor=people.instructor,
    )
    assert get_user_model().objects.count() == accounts_before
    assert [line.action for line in report.lines] == ["skip"]  # already enrolled: the same account


# ---------------------------------------------------------------------------
# Look-alike usernames
# ---------------------------------------------------------------------------

CYRILLIC_DZE = "\u0455"  # "ѕ"


@pytest.mark.parametrize("one, other, alike", [
    ("student1", f"{CYRILLIC_DZE}tudent1", True),
    ("student1", "studentl", True),  # 1 and l
    ("student1", "studentI", True),  # capital i
    ("student1", "STUDENT1", True),  # usernames are unique whatever their case
    ("paypal", "\u0440\u0430\u0443\u0440\u0430l", True),  # Cyrillic р а у р а
    ("scope", "\u0455\u0441\u043e\u0440\u0435", True),  # all Cyrillic
    ("arnie", "amie", True),  # rn and m
    ("student1", "student2", False),
    ("jozef", "józef", False),
    ("ada", "adam", False),
])
def test_a_username_skeleton_is_equal_for_names_that_look_alike(one, other, alike):
    assert (username_skeleton(one) == username_skeleton(other)) is alike


@pytest.mark.parametrize("username, refusal", [
    (f"{CYRILLIC_DZE}tudent1", "mixes letters of different scripts (Cyrillic and Latin); use the letters of one script"),
    ("\u03b1lpha", "mixes letters of different scripts (Greek and Latin); use the letters of one script"),
    # One script, but every letter looks like a Latin one: it would take "scope" from its owner.
    ("\u0455\u0441\u043e\u0440\u0435", "is written in Cyrillic letters that all look like Latin ones; type it in Latin letters, or choose another"),
    (f"{CYRILLIC_DZE}306", "is written in Cyrillic letters that all look like Latin ones; type it in Latin letters, or choose another"),
    ("\u03bf\u03c1\u03b1", "is written in Greek letters that all look like Latin ones; type it in Latin letters, or choose another"),
    ("\u0441\u0435\u0440\u0433\u0435\u0439", ""),  # Cyrillic letters that do not all look Latin
    ("\u0430\u043d\u043d\u0430", ""),  # "анна": н looks like no letter a Latin keyboard types
    ("田中たろう", ""),  # Japanese writes Han and Hiragana together
    ("tanaka_田中", ""),
    ("김민준", ""),
    ("student_1.x@y", ""),
    ("", ""),
])
def test_mixed_scripts_are_refused_unless_written_together(username, refusal):
    assert username_scripts_refusal(username) == refusal


@pytest.mark.parametrize("username, message", [
    (f"{CYRILLIC_DZE}tudent1", "This username mixes letters of different scripts (Cyrillic and Latin); use the letters of one script."),
    ("studentl", "This username looks like an existing one (some letters of other alphabets, or 1, l and I, look the same); choose another."),
    ("\u0455\u0441\u043e\u0440\u0435", "This username is written in Cyrillic letters that all look like Latin ones; type it in Latin letters, or choose another."),
    ("Student1", "A user with that username already exists."),
])
def test_sign_up_refuses_a_username_that_looks_like_an_existing_one(client, people, username, message):
    from authoring.tests.factories import user_create

    user_create("student1")
    user_create("scope")
    response = signup(client, username=username, email="new@example.org")
    assert response.status_code == 422
    assert response.context["form"].errors["username"] == [message]
    assert get_user_model().objects.count() == 8
    assert signup(client, username="student4", email="new@example.org").status_code == 302


def test_a_roster_import_makes_no_look_alike_account(people):
    from authoring.tests.factories import user_create
    from courses import services

    user_create("student1")
    rows = [
        {"username": f"{CYRILLIC_DZE}tudent1", "email": "a@example.org"},
        {"username": "STUDENT1", "email": "b@example.org"},
        {"email": "studentl@example.org"},  # the name made from the address gets a number
    ]
    report = services.roster_import(course=people.course, rows=rows, dry_run=True, actor=people.instructor, first_line=1)
    assert [(line.action, line.detail) for line in report.lines] == [
        ("error", f"the username '{CYRILLIC_DZE}tudent1' mixes letters of different scripts (Cyrillic and Latin); use the letters of one script"),
        ("error", "the username 'STUDENT1' looks like the existing account 'student1'; choose another"),
        ("create", "new account 'studentl2', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page"),
    ]


# ---------------------------------------------------------------------------
# Invisible characters: every Default_Ignorable_Code_Point, whatever its category
# ---------------------------------------------------------------------------

# One of each range of Unicode's Default_Ignorable_Code_Point list (and both ends of some).
DEFAULT_IGNORABLES = [
    "\u00ad",  # soft hyphen (Cf)
    "\u034f",  # combining grapheme joiner (Mn)
    "\u061c",  # Arabic letter mark (Cf)
    "\u115f", "\u1160",  # Hangul choseong / jungseong fillers (Lo)
    "\u17b4", "\u17b5",  # Khmer inherent vowels (Mn)
    "\u180b", "\u180e", "\u180f",  # Mongolian variation selectors, vowel separator
    "\u200b", "\u200f",  # zero-width space .. right-to-left mark
    "\u202a", "\u202e",  # bidi embeddings and overrides
    "\u2060", "\u2065", "\u206f",  # word joiner, an unassigned one, nominal digit shapes
    "\u3164",  # Hangul filler (Lo)
    "\ufe00", "\ufe0f",  # variation selectors (Mn)
    "\ufeff",  # zero-width no-break space
    "\uffa0",  # half-width Hangul filler (Lo)
    "\ufff0", "\ufff8",  # unassigned
    "\U0001bca0", "\U0001bca3",  # shorthand format controls
    "\U0001d173", "\U0001d17a",  # musical symbol begin beam .. end phrase
    "\U000e0000", "\U000e0001", "\U000e0041", "\U000e0100", "\U000e0fff",  # tags, variation selectors supplement
]


@pytest.mark.parametrize("invisible", DEFAULT_IGNORABLES, ids=lambda char: f"U+{ord(char):04X}")
def test_every_default_ignorable_code_point_is_removed(invisible):
    assert identifier_normalise(f"{invisible}student1") == "student1"
    assert identifier_normalise(f"stu{invisible}dent1{invisible}") == "student1"
    assert email_normalise(f"sam{invisible}@example.org") == "sam@example.org"
    assert username_skeleton(f"student1{invisible}") == username_skeleton("student1")


@pytest.mark.parametrize("visible, normal", [
    ("김민준", "김민준"),  # Hangul syllables keep their letters
    ("e\u034f\u0301", "é"),  # marks left apart by the joiner compose once it is removed
    ("student\u00a01", "student 1"),  # a no-break space is a space (which usernames refuse)
])
def test_removing_invisible_characters_keeps_what_shows(visible, normal):
    assert identifier_normalise(visible) == normal


@pytest.mark.parametrize("username, message", [
    ("\u3164student1", "A user with that username already exists."),
    ("student1\u115f", "A user with that username already exists."),
    ("student2\u115f", "A user with that username already exists."),
    ("\uffa0student2", "A user with that username already exists."),
    ("\u3164studentl", "This username looks like an existing one (some letters of other alphabets, or 1, l and I, look the same); choose another."),
    ("student1\u2800", "This username mixes letters of different scripts (Braille and Latin); use the letters of one script."),
])
def test_sign_up_refuses_a_username_that_differs_only_by_invisible_letters(client, people, username, message):
    from authoring.tests.factories import user_create

    user_create("student1")
    user_create("student2")
    response = signup(client, username=username, email="new@example.org")
    assert response.status_code == 422
    assert response.context["form"].errors["username"] == [message]
    assert get_user_model().objects.count() == 8  # six people and the two above


def test_a_username_of_invisible_letters_only_is_refused(client, db):
    response = signup(client, username="\u3164\u115f", email="new@example.org")
    assert response.status_code == 422
    assert "username" in response.context["form"].errors
    assert not get_user_model().objects.exists()


def test_a_roster_import_takes_a_username_with_invisible_letters_for_the_account_it_shows(people):
    from authoring.tests.factories import user_create
    from courses import services

    user_create("student1")
    report = services.roster_import(
        course=people.course, rows=[{"username": "\u3164student1", "email": "a@example.org"}],
        dry_run=True, actor=people.instructor, first_line=1,
    )
    # An existing account not in the course is invited (docs/people.md), named as normalised.
    assert [(line.action, line.detail) for line in report.lines] == [
        ("invite", "'student1' invited as student: enrolled once they accept the invitation on their dashboard")
    ]
