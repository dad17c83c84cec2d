"""The accounts a roster makes: no password is hashed for them (a dry run or not), a dry
run makes nothing, each new row costs a fixed number of queries, a username sign-up
would refuse is refused row by row, and names lose their invisible characters."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import get_hashers
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import EmailTrust, TrustedEmail
from authoring.tests.factories import PASSWORD, user_create
from courses.models import Enrolment
from courses.services import NEW_ACCOUNT_PASSWORD, roster_import

CYRILLIC_DZE = "\u0455"  # looks like a Latin "s"
NEW_PASSWORD = "a-long-unusual-passphrase-42"


@pytest.fixture
def hashes(monkeypatch):
    """The names of the hashers that hashed a password, one per hash, whichever is configured."""
    calls = []
    for hasher in get_hashers():
        cls, original = type(hasher), type(hasher).encode

        def counted(self, *args, _original=original, **kwargs):
            calls.append(type(self).__name__)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "encode", counted)
    return calls


def new_rows(count: int, start: int = 0) -> list[dict]:
    return [
        {"email": f"new{k:03d}@example.org", "name": f"New Person{k:03d}", "student_id": f"N-{k:03d}"}
        for k in range(start, start + count)
    ]


def made():
    return (
        get_user_model().objects.count(), Enrolment.objects.count(), TrustedEmail.objects.count(),
    )


def test_the_hashes_are_counted(hashes):
    get_user_model()(username="x").set_password("something")
    assert len(hashes) == 1  # the fixture sees a hash when there is one


def test_three_hundred_new_accounts_hash_no_password_and_the_dry_run_makes_none(people, hashes):
    before = made()
    dry = roster_import(course=people.course, rows=new_rows(300), dry_run=True, actor=people.instructor)
    assert hashes == []
    assert made() == before == (6, 6, 0)
    assert (dry.counts["create"], dry.counts["error"], dry.created_user_ids) == (300, 0, [])
    assert dry.lines[0].detail == f"new account 'new000', enrolled as student; {NEW_ACCOUNT_PASSWORD}"

    applied = roster_import(course=people.course, rows=new_rows(300), dry_run=False, actor=people.instructor)
    assert hashes == []
    assert [(line.line, line.action, line.detail) for line in applied.lines] == [
        (line.line, line.action, line.detail) for line in dry.lines
    ]
    assert made() == (306, 306, 300)
    new = get_user_model().objects.filter(pk__in=applied.created_user_ids)
    assert len(applied.created_user_ids) == 300
    assert {user.has_usable_password() for user in new} == {False}
    assert set(TrustedEmail.objects.values_list("trust", flat=True)) == {EmailTrust.GIVEN_BY_STAFF}
    assert new.get(username="new299").get_full_name() == "New Person299"


def test_each_new_row_costs_four_queries_whatever_the_roster(people):
    """Three reads for all rows, the usernames' look-alikes, the lock; then a student-id
    check and three INSERTs (account, trusted address, enrolment) a new row."""
    counts = []
    for count, start in ((10, 0), (20, 100)):
        with CaptureQueriesContext(connection) as queries:
            roster_import(course=people.course, rows=new_rows(count, start), dry_run=False, actor=people.instructor)
        counts.append(len(queries.captured_queries))
    assert counts == [7 + 4 * 10, 7 + 4 * 20]


def test_the_course_is_locked_only_once_every_row_is_read(people):
    with CaptureQueriesContext(connection) as queries:
        roster_import(course=people.course, rows=new_rows(3), dry_run=True, actor=people.instructor)
    statements = [query["sql"] for query in queries.captured_queries]
    lock = next(n for n, sql in enumerate(statements) if "FOR UPDATE" in sql and "courses_course" in sql)
    # Before it: the accounts the rows' addresses find, every username's look-alike form
    # (a row makes an account), the accounts merely giving an address, the trust records.
    assert [sql.split()[0] for sql in statements[:lock]] == ["SELECT", "DECLARE", "SELECT", "SELECT", "SAVEPOINT"]
    # With it: a student-id check and three INSERTs a row, then the dry run's rollback.
    assert [sql.split()[0] for sql in statements[lock + 1:]] == ["SELECT", "INSERT", "INSERT", "INSERT"] * 3 + ["ROLLBACK", "RELEASE"]


def test_reimporting_costs_one_query_a_row(people):
    roster_import(course=people.course, rows=new_rows(20), dry_run=False, actor=people.instructor)
    with CaptureQueriesContext(connection) as queries:
        again = roster_import(course=people.course, rows=new_rows(20), dry_run=False, actor=people.instructor)
    assert again.counts["skip"] == 20
    # Two reads for all rows (the accounts by address, the trust records), the lock in its
    # savepoint (three statements), then each row's enrolment: no savepoint a row.
    assert len(queries.captured_queries) == 2 + 3 + 20


def test_an_account_made_meanwhile_refuses_the_import_whole(client, people, monkeypatch):
    """Between the reads and the INSERTs someone signs up as 'new001': nothing is imported,
    and the page says why (no 500)."""
    from courses import services

    read = services._RosterLookups.read

    def read_then_sign_up(rows):
        lookups = read(rows)
        user_create("new001", email="elsewhere@example.org")
        return lookups

    monkeypatch.setattr(services._RosterLookups, "read", staticmethod(read_then_sign_up))
    client.login(username="ines", password=PASSWORD)
    text = "email\nnew000@example.org\nnew001@example.org\nnew002@example.org\n"
    page = client.post(reverse("courses:roster", args=["attn"]), {"text": text, "apply": "1"})
    assert page.status_code == 422
    assert page.context["problem"] == (
        "Someone signed up with a username or an e-mail address of this roster while it was "
        "imported; nothing was changed. Import it again."
    )
    assert sorted(get_user_model().objects.filter(username__startswith="new").values_list("username", flat=True)) == ["new001"]
    assert Enrolment.objects.count() == 6


# ---------------------------------------------------------------------------
# A username that sign-up would refuse
# ---------------------------------------------------------------------------

WRITTEN_IN_CYRILLIC = (
    f"the username '{CYRILLIC_DZE}306' is written in Cyrillic letters that all look like Latin ones; "
    "type it in Latin letters, or choose another"
)


def test_a_username_in_letters_that_look_latin_is_refused_and_its_owner_signs_up(client, people):
    rows = [
        {"username": f"{CYRILLIC_DZE}306", "email": "s306@example.org"},
        {"username": "s307", "email": "s307@example.org"},
        {"username": f"{CYRILLIC_DZE}t\u0443dent", "email": "mixed@example.org"},
    ]
    report = roster_import(course=people.course, rows=rows, dry_run=False, actor=people.instructor, first_line=1)
    assert [(line.line, line.action, line.detail) for line in report.lines] == [
        (1, "error", WRITTEN_IN_CYRILLIC),
        (2, "create", f"new account 's307', enrolled as student; {NEW_ACCOUNT_PASSWORD}"),
        (3, "error", f"the username '{CYRILLIC_DZE}t\u0443dent' mixes letters of different scripts (Cyrillic and Latin); use the letters of one script"),
    ]
    assert not get_user_model().objects.filter(username=f"{CYRILLIC_DZE}306").exists()
    # Sign-up refuses the same name with the same reason...
    refused = client.post(reverse("signup"), {
        "username": f"{CYRILLIC_DZE}306", "email": "x@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })
    assert refused.status_code == 422
    assert refused.context["form"].errors["username"] == [
        "This username is written in Cyrillic letters that all look like Latin ones; type it in Latin letters, or choose another."
    ]
    # ...and the student really called s306 takes their name.
    signed_up = client.post(reverse("signup"), {
        "username": "s306", "email": "s306@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })
    assert signed_up.status_code == 302
    assert get_user_model().objects.filter(username="s306").exists()


def test_the_refusal_is_the_same_when_the_latin_name_exists(people):
    user_create("s306")
    report = roster_import(course=people.course, rows=[{"username": f"{CYRILLIC_DZE}306", "email": "a@example.org"}],
                           dry_run=True, actor=people.instructor)
    assert [(line.action, line.detail) for line in report.lines] == [("error", WRITTEN_IN_CYRILLIC)]


def test_the_roster_page_shows_the_refused_row(client, people):
    client.login(username="ines", password=PASSWORD)
    page = client.post(reverse("courses:roster", args=["attn"]), {"text": f"username,email\n{CYRILLIC_DZE}306,s306@example.org\n"})
    assert page.status_code == 200
    assert [(line.line, line.action, line.detail) for line in page.context["report"].lines] == [(2, "error", WRITTEN_IN_CYRILLIC)]


# ---------------------------------------------------------------------------
# Names lose their invisible characters
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("row, first, last", [
    ({"name": "Ada \u202eecalevoL"}, "Ada", "ecalevoL"),  # the override goes; the letters stay as typed
    ({"name": "\u200bAda\u200b  Lovelace\u2060"}, "Ada", "Lovelace"),
    ({"first_name": "\u2067Ada\u2069", "last_name": "Love\u00adlace\ufeff"}, "Ada", "Lovelace"),
    ({"first_name": "Ada\u200dMaria", "last_name": "\u3164"}, "AdaMaria", ""),
    ({"name": "Ada\nLovelace\t"}, "Ada", "Lovelace"),
    ({"first_name": "\u0639\u0644\u06cc", "last_name": "\u0639\u0644\u06cc\u200c\u067e\u0648\u0631"},  # Persian: the non-joiner is spelling
     "\u0639\u0644\u06cc", "\u0639\u0644\u06cc\u200c\u067e\u0648\u0631"),
    ({"name": "Jose\u0301 Garci\u0301a"}, "Jos\u00e9", "Garc\u00eda"),  # composed (NFC)
])
def test_a_new_account_name_is_stored_without_invisible_characters(people, row, first, last):
    report = roster_import(course=people.course, rows=[{"email": "ada@example.org", **row}], dry_run=False, actor=people.instructor)
    assert report.lines[0].action == "create"
    ada = get_user_model().objects.get(username="ada")
    assert (ada.first_name, ada.last_name) == (first, last)


def test_a_name_that_differs_only_by_invisible_characters_is_the_same_name(people):
    report = roster_import(course=people.course, rows=[{"username": "sam", "name": "Sam\u200b St\u202eone"}], dry_run=True,
                           actor=people.instructor, first_line=1)
    assert [(line.action, line.detail) for line in report.lines] == [("skip", "'sam' is already enrolled as student")]


def test_reset_link_and_sign_in_for_a_roster_made_account(client, people):
    """The whole path of a roster-made account that was not invited."""
    roster_import(course=people.course, rows=[{"email": "ada@example.org", "name": "Ada Lovelace"}], dry_run=False, actor=people.instructor)
    assert client.post(reverse("login"), {"username": "ada", "password": "!"}).status_code == 200  # no password to guess
    client.post(reverse("password_reset"), {"email": "ada@example.org"})
    assert [m.to for m in mail.outbox] == [["ada@example.org"]]
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done["Location"] == reverse("password_reset_complete")
    signed_in = client.post(reverse("login"), {"username": "ada@example.org", "password": NEW_PASSWORD})
    assert signed_in.status_code == 302
    assert client.session["_auth_user_id"] == str(get_user_model().objects.get(username="ada").pk)
