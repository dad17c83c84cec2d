"""The one confirmation scheme (attnquiz.confirmations): a token confirms its own change
(scope) and sentence (message), for CONFIRMATION_MAX_AGE_SECONDS; "the numbers changed"
(stale) only for its own change with other numbers; an expired token of its own change
says so; anything else is asked again plainly."""

from __future__ import annotations

import time

import pytest
from django.core import signing

from attnquiz import confirmations
from attnquiz.confirmations import (
    EXPIRED_NOTICE, ConfirmationNeeded, confirmation_require, confirmation_token, confirmed_of, scope_of,
)

SCOPE = scope_of("instructor.edit", 7, change={"edit": "pools", "pools": {30: "p1", 31: "p1"}})
MESSAGE = "3 students are working on this exam now. With the new pools 3 of them lose an exercise."
OTHER_MESSAGE = "4 students are working on this exam now. With the new pools 4 of them lose an exercise."


def asked(*, scope=SCOPE, message=MESSAGE, confirmed) -> ConfirmationNeeded:
    with pytest.raises(ConfirmationNeeded) as raised:
        confirmation_require(scope=scope, message=message, confirmed=confirmed)
    return raised.value


def made_at(monkeypatch, seconds_ago: int, *, scope=SCOPE, message=MESSAGE) -> str:
    """A token as confirmation_require would have made it ``seconds_ago``."""
    now = time.time()
    with monkeypatch.context() as patch:
        patch.setattr(signing.time, "time", lambda: now - seconds_ago)
        return confirmation_token(scope=scope, message=message)


def test_nothing_to_ask_or_confirmed_by_a_script_passes():
    confirmation_require(scope=SCOPE, message="", confirmed=False)
    confirmation_require(scope=SCOPE, message="", confirmed="anything")
    confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=True)


def test_asked_plainly_then_its_token_confirms_it():
    first = asked(confirmed=False)
    assert (first.message, first.stale, first.expired) == (MESSAGE, False, False)
    confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=first.token)


def test_its_own_change_with_other_numbers_is_stale():
    token = asked(confirmed=False).token
    again = asked(message=OTHER_MESSAGE, confirmed=token)
    assert (again.message, again.stale, again.expired) == (OTHER_MESSAGE, True, False)
    assert again.token != token
    confirmation_require(scope=SCOPE, message=OTHER_MESSAGE, confirmed=again.token)


@pytest.mark.parametrize("other_scope", [
    # The same target, another change whose sentence reads the same.
    scope_of("instructor.edit", 7, change={"edit": "pools", "pools": {32: "p2", 33: "p2"}}),
    scope_of("instructor.edit", 8, change={"edit": "pools", "pools": {30: "p1", 31: "p1"}}),
    scope_of("instructor.edit", 7),
    "courses.archive:7",
    "exams.reopen:7:3:15",
])
def test_a_token_of_another_change_is_asked_again_plainly_even_with_the_same_message(other_scope):
    token = asked(confirmed=False).token
    again = asked(scope=other_scope, confirmed=token)
    assert (again.message, again.stale, again.expired) == (MESSAGE, False, False)
    confirmation_require(scope=other_scope, message=MESSAGE, confirmed=again.token)
    with pytest.raises(ConfirmationNeeded):
        confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=again.token)


@pytest.mark.parametrize("token", [
    "", "not-a-token", "0123456789abcdef:forged-signature", "x" * 5000, "é\u0000<script>",
    # The former undated form, and an undated token signed with today's salt.
    signing.Signer(salt="attnquiz.confirmation").sign("0123456789abcdef"),
    signing.Signer(salt=confirmations.SALT).sign("0123456789abcdef"),
    signing.TimestampSigner(salt=confirmations.SALT).sign("no-separator"),
    # Signed with another salt: our scheme never made it.
    signing.TimestampSigner(salt="elsewhere").sign("0123456789abcdef:0123456789abcdef"),
], ids=[  # fixed ids: the dated tokens differ from one second to the next, and every
    # parallel worker must collect the same test names
    "empty", "not-a-token", "forged-signature", "very-long", "control-and-markup",
    "former-undated", "undated-today's-salt", "dated-without-separator", "other-salt",
])
def test_a_token_we_never_made_is_asked_again_plainly(token):
    again = asked(confirmed=token)
    assert (again.message, again.stale, again.expired) == (MESSAGE, False, False)


def test_an_altered_token_is_refused():
    token = asked(confirmed=False).token
    scope_part, message_part, rest = token.split(":", 2)
    again = asked(confirmed=f"{scope_part}:{'0' * 16}:{rest}")
    assert (again.stale, again.expired) == (False, False)


def test_a_token_holds_for_the_max_age_then_expires(settings, monkeypatch):
    settings.CONFIRMATION_MAX_AGE_SECONDS = 600
    confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=made_at(monkeypatch, 590))
    old = made_at(monkeypatch, 610)
    expired = asked(confirmed=old)
    assert expired.message == f"This confirmation expired; check the numbers again. {MESSAGE}"
    assert (expired.stale, expired.expired) == (False, True)
    # The new token confirms what the message said, now.
    confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=expired.token)


def test_the_max_age_defaults_to_30_minutes(settings, monkeypatch):
    del settings.CONFIRMATION_MAX_AGE_SECONDS
    assert confirmations.DEFAULT_MAX_AGE_SECONDS == 1800
    confirmation_require(scope=SCOPE, message=MESSAGE, confirmed=made_at(monkeypatch, 1790))
    assert asked(confirmed=made_at(monkeypatch, 1810)).expired is True


def test_an_expired_token_with_other_numbers_says_it_expired(settings, monkeypatch):
    settings.CONFIRMATION_MAX_AGE_SECONDS = 600
    again = asked(message=OTHER_MESSAGE, confirmed=made_at(monkeypatch, 700))
    assert again.message == f"{EXPIRED_NOTICE} {OTHER_MESSAGE}"
    assert (again.stale, again.expired) == (False, True)


def test_an_expired_token_of_another_change_is_asked_again_plainly(settings, monkeypatch):
    settings.CONFIRMATION_MAX_AGE_SECONDS = 600
    old = made_at(monkeypatch, 700, scope="courses.archive:7")
    again = asked(confirmed=old)
    assert (again.message, again.stale, again.expired) == (MESSAGE, False, False)


def test_a_scope_names_the_change_whatever_order_it_was_given_in():
    pools = {"edit": "pools", "pools": {30: "p1", 31: "p1", 32: ""}}
    reordered = {"pools": {32: "", 31: "p1", 30: "p1"}, "edit": "pools"}
    assert scope_of("instructor.edit", 7, change=pools) == scope_of("instructor.edit", 7, change=reordered)
    assert scope_of("instructor.edit", 7, change=pools).startswith("instructor.edit:7:")
    assert scope_of("courses.archive", 7) == "courses.archive:7"
    distinct = {
        scope_of("instructor.edit", 7, change=change) for change in (
            pools,
            {"edit": "pools", "pools": {30: "", 31: "", 32: "p1"}},
            {"edit": "pools", "pools": {30: "p2", 31: "p2", 32: ""}},
            {"edit": "item_update", "item": 30, "points": 2.0, "version": None},
            {"edit": "item_update", "item": 30, "points": 3.0, "version": None},
            {"edit": "item_update", "item": 30, "points": 2.0, "version": 12},
            {"edit": "item_remove", "item": 30},
            {"edit": "item_remove", "item": 31},
            {"edit": "items_add", "versions": [1, 2], "points": 1.0},
            {"edit": "items_add", "versions": [2, 1], "points": 1.0},
            {"edit": "settings", "fields": {"time_limit_minutes": 10, "slug": "week1"}},
            {"edit": "settings", "fields": {"time_limit_minutes": 12, "slug": "week1"}},
            {"edit": "settings", "fields": {"time_limit_minutes": None, "slug": "week1"}},
        )
    }
    assert len(distinct) == 13


@pytest.mark.parametrize("data, expected", [
    ({"confirm": "yes", "impact": " tok:en "}, "tok:en"),
    ({"confirm": "yes", "impact": "t" * 300}, "t" * 200),
    ({"confirm": "yes", "impact": ""}, False),
    ({"confirm": "yes"}, False),
    ({"confirm": "no", "impact": "tok:en"}, False),
    ({"impact": "tok:en"}, False),
])
def test_confirmed_of_a_posted_form(data, expected):
    assert confirmed_of(data) == expected
