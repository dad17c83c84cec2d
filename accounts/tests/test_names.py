"""A person's name as stored and shown (``identifiers.name_normalise``): no bidi control or
zero-width character, except the joiners a script spells with; the same rule for the
roster import, sign-up and the profile."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.identifiers import name_normalise
from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import PASSWORD

NEW_PASSWORD = "a-long-unusual-passphrase-42"
PERSIAN_ALIPOUR = "\u0639\u0644\u06cc\u200c\u067e\u0648\u0631"  # "Alipour": a non-joiner keeps two parts apart
DEVANAGARI_KSSA_HALF = "\u0915\u094d\u200d\u0937"  # a joiner after a virama asks for the half form


@pytest.mark.parametrize("typed, stored", [
    ("Ada Lovelace", "Ada Lovelace"),
    ("\u202eecalevoL adA", "ecalevoL adA"),  # right-to-left override
    ("Ada\u202d Lovelace\u202c", "Ada Lovelace"),  # left-to-right override, pop
    ("\u2066Ada\u2069 \u2067Lovelace\u2069", "Ada Lovelace"),  # isolates
    ("\u200eAda\u200f \u061cLovelace", "Ada Lovelace"),  # marks
    ("A\u200bda\u2060 Love\u00adlace\ufeff", "Ada Lovelace"),  # zero-width space, word joiner, soft hyphen, BOM
    ("\u3164\u115f", ""),  # Hangul fillers only
    ("Ada\U000e0041\ufe0f", "Ada"),  # a tag, a variation selector
    ("Ada\u200dLovelace", "AdaLovelace"),  # a joiner between Latin letters spells nothing
    ("\u200cAda", "Ada"),
    (PERSIAN_ALIPOUR, PERSIAN_ALIPOUR),
    ("\u0639\u0644\u06cc\u200c\u200c\u067e\u0648\u0631", PERSIAN_ALIPOUR),  # one non-joiner is enough
    ("\u200c" + PERSIAN_ALIPOUR + "\u200c", PERSIAN_ALIPOUR),  # at the ends it spells nothing
    (DEVANAGARI_KSSA_HALF, DEVANAGARI_KSSA_HALF),
    ("  Ada \n\t Lovelace\x07 ", "Ada Lovelace"),  # controls and runs of white space: one space
    ("Jose\u0301", "Jos\u00e9"),  # NFC
    ("\ufb01ona \uff21da", "\ufb01ona \uff21da"),  # not NFKC: the ligature and the full-width letter stay
    ("김민준", "김민준"),
])
def test_a_name_keeps_what_shows(typed, stored):
    assert name_normalise(typed) == stored


def test_a_long_run_of_joiners_costs_linear_time():
    import time

    started = time.perf_counter()
    assert name_normalise("\u0628\u200c" * 100_000) == ("\u0628\u200c" * 100_000)[:-1]
    assert time.perf_counter() - started < 5


def test_the_profile_stores_the_name_without_invisible_characters(client, people):
    email_confirmed(people.student, "sam@example.org")
    assert client.login(username="sam", password=PASSWORD)
    saved = client.post(reverse("profile"), {"first_name": "\u202eSam\u200b", "last_name": "Sto\u2060ne", "email": "sam@example.org"})
    assert saved.status_code == 302
    sam = get_user_model().objects.get(username="sam")
    assert (sam.first_name, sam.last_name) == ("Sam", "Stone")


def test_a_name_that_normal_form_lengthens_past_the_limit_is_refused_not_a_500(client, people):
    email_confirmed(people.student, "sam@example.org")
    assert client.login(username="sam", password=PASSWORD)
    refused = client.post(reverse("profile"), {"first_name": "\u0958" * 100, "last_name": "Stone", "email": "sam@example.org"})
    assert refused.status_code == 422
    assert refused.context["form"].errors["first_name"] == ["Ensure this value has at most 150 characters (it has 200)."]


def test_sign_up_stores_the_name_without_invisible_characters(client, db):
    response = client.post(reverse("signup"), {
        "username": "ada", "email": "ada@example.org", "first_name": "A\u200bda", "last_name": "\u202eLovelace",
        "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })
    assert response.status_code == 302
    ada = get_user_model().objects.get(username="ada")
    assert (ada.first_name, ada.last_name) == ("Ada", "Lovelace")
