"""An e-mail address finds an account for someone else only once the account has confirmed
it (a link followed, a password set through a link sent to it) or staff gave it: anyone
can type anyone's address at sign-up or in the profile, with verification off (the default)
as with it on."""

from __future__ import annotations

import importlib
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from accounts import services as account_services
from accounts.models import EmailTrust, TrustedEmail
from accounts.selectors import email_trust, user_by_identifier, user_by_username_or_trusted_email
from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import PASSWORD, user_create
from courses import services as course_services
from courses.models import Enrolment, EnrolmentInvitation, EnrolmentSource, Invitation, Role

NEW_PASSWORD = "a-long-unusual-passphrase-42"
VERIFY_LINK = re.compile(r"http://testserver(/accounts/verify/\S+/)")
INVITATION_LINK = re.compile(r"http://testserver(/accounts/invitation/[^/\s]+/[^/\s]+/)")
RESET_LINK = re.compile(r"http://testserver(/accounts/password/reset/[^/\s]+/[^/\s]+/)")
VICTIM_ROW = "email,name,student_id,role\nvictim@example.edu,Victim Person,S999,ta\n"


def signed_in_as(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


def sign_up(client, username, email):
    return client.post(reverse("signup"), {
        "username": username, "email": email, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })


def set_password(client, link: str):
    form_page = client.get(link, follow=True)
    return client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})


def roster_lines(client, text, **extra):
    page = client.post(reverse("courses:roster", args=["attn"]), {"text": text, **extra})
    assert page.status_code == 200, page.content.decode()[-800:]
    return [(line.line, line.action, line.detail) for line in page.context["report"].lines]


def test_a_student_claiming_an_address_in_the_profile_gains_nothing_by_it(client, people, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = False
    assert client.login(username="sue", password=PASSWORD)
    saved = client.post(reverse("profile"), {"first_name": "Sue", "last_name": "Shaw", "email": "victim@example.edu"}, follow=True)
    assert [str(m) for m in saved.context["messages"]] == [
        "Saved your profile.",
        "We sent a link to victim@example.edu; your e-mail changes to it once you follow the link.",
    ]
    people.student2.refresh_from_db()
    assert people.student2.email == ""  # kept until the link is followed
    assert [m.to for m in mail.outbox] == [["victim@example.edu"]]
    assert 'the attnquiz account "sue" asks to use this address' in mail.outbox[0].body

    # Even with the address on the account (typed at sign-up, or before this rule), the
    # roster does not use it: the row makes an account for the address instead.
    get_user_model().objects.filter(pk=people.student2.pk).update(email="victim@example.edu")
    client.login(username="ines", password=PASSWORD)
    assert roster_lines(client, VICTIM_ROW) == [(
        2, "create",
        "new account 'victim', enrolled as teaching assistant; they choose a password with “Forgot your password?” "
        "on the sign-in page; the account 'sue' also gives this e-mail without having confirmed it: not used",
    )]
    assert Enrolment.objects.get(course=people.course, user=people.student2).role == Role.STUDENT


def test_the_real_owner_signs_up_despite_a_claim_and_confirms_the_address(client, people, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = False
    assert sign_up(client, "mallory", "victim@example.edu").status_code == 302
    claim_link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)  # delivered to the owner, not to mallory
    assert email_trust(user=get_user_model().objects.get(username="mallory")) is None
    client.logout()
    owner = sign_up(client, "victor", "VICTIM@example.edu")
    assert (owner.status_code, signed_in_as(client)) == (302, "victor")
    link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    assert client.post(link)["Location"] == reverse("profile")
    victor = get_user_model().objects.get(username="victor")
    assert (email_trust(user=victor).email, email_trust(user=victor).trust) == ("victim@example.edu", EmailTrust.CONFIRMED_BY_LINK)
    # The owner would not confirm mallory's claim; if they did, it is refused all the same.
    refused = client.post(claim_link)
    assert refused.status_code == 400
    assert "Another account has confirmed this e-mail address" in refused.content.decode()
    # Now the address finds victor, for staff and for signing in, and is taken at sign-up.
    assert user_by_username_or_trusted_email(identifier="victim@example.edu") == victor
    assert user_by_identifier(identifier="victim@example.edu") == victor
    client.logout()
    # Signing up with it again tells the visitor nothing and the mailbox that it is held.
    assert sign_up(client, "victor2", "victim@example.edu").status_code == 302
    assert (mail.outbox[-1].to, mail.outbox[-1].subject) == (["victim@example.edu"], "Your e-mail address at attnquiz")
    assert user_by_identifier(identifier="victim@example.edu") == victor


def test_add_by_email_finds_only_a_confirmed_address_and_invites_the_owner(client, people, django_capture_on_commit_callbacks):
    mallory = user_create("mallory", email="victim@example.edu")
    client.login(username="ines", password=PASSWORD)
    url = reverse("courses:person_add", args=["attn"])
    refused = client.post(url, {"identifier": "victim@example.edu", "role": "ta"})
    assert refused.status_code == 422
    assert (
        "No account has confirmed the e-mail &#x27;victim@example.edu&#x27; (the account &#x27;mallory&#x27; gives it "
        "without having confirmed it, so it is not used)." in refused.content.decode()
    )
    assert not Enrolment.objects.filter(user=mallory).exists()
    with django_capture_on_commit_callbacks(execute=True):
        added = client.post(url, {"identifier": "victim@example.edu", "role": "ta", "invite": "on"}, follow=True)
    assert [str(m) for m in added.context["messages"]] == [
        "new account 'victim', enrolled as teaching assistant; invitation sent: its link lets them choose a password"
        "; the account 'mallory' also gives this e-mail without having confirmed it: not used",
    ]
    victim = get_user_model().objects.get(username="victim")
    assert (victim.email, email_trust(user=victim).trust) == ("victim@example.edu", EmailTrust.GIVEN_BY_STAFF)
    # By username, mallory can be invited; once she accepts, the people page marks the
    # address she only typed.
    client.post(url, {"identifier": "mallory", "role": "student"})
    course_services.enrolment_invitation_accept(invitation=EnrolmentInvitation.objects.get(user=mallory), user=mallory)
    rows = {
        row.group(1): row.group(2)
        for row in re.finditer(r'<th scope="row">(\w+).*?</th>\s*<td>(.*?)</td>', client.get(reverse("courses:people", args=["attn"])).content.decode(), re.S)
    }
    assert (rows["mallory"], rows["victim"]) == ('victim@example.edu <span class="muted">(not confirmed)</span>', "victim@example.edu")
    assert [m.to for m in mail.outbox] == [["victim@example.edu"]]
    # Accepting the invitation confirms the address.
    client.logout()
    assert set_password(client, INVITATION_LINK.search(mail.outbox[0].body).group(1)).status_code == 302
    assert email_trust(user=victim).trust == EmailTrust.CONFIRMED_BY_PASSWORD
    assert Invitation.objects.get(user=victim).accepted_at is not None
    assert Enrolment.objects.get(user=mallory).role == Role.STUDENT


def test_a_password_reset_confirms_the_address_and_goes_only_to_its_confirmed_account(client, people):
    mallory = user_create("mallory", email="sam@example.org")
    people.student.email = "sam@example.org"
    people.student.save()
    # Nobody has confirmed it: each account giving it gets a link (all of them to the mailbox).
    client.post(reverse("password_reset"), {"email": "sam@example.org"})
    assert sorted(re.search(r"Your username is (\S+)\.", m.body).group(1) for m in mail.outbox) == ["mallory", "sam"]
    sams = next(m for m in mail.outbox if "Your username is sam." in m.body)
    mail.outbox.clear()
    assert set_password(client, RESET_LINK.search(sams.body).group(1))["Location"] == reverse("password_reset_complete")
    assert email_trust(user=people.student).trust == EmailTrust.CONFIRMED_BY_PASSWORD
    # Confirmed by sam: only sam is sent a link now.
    client.post(reverse("password_reset"), {"email": "SAM@example.org"})
    assert [re.search(r"Your username is (\S+)\.", m.body).group(1) for m in mail.outbox] == ["sam"]
    assert email_trust(user=mallory) is None


def test_the_link_asks_before_it_confirms(client, people):
    token = account_services.email_verification_token(user=people.student, email="sam@example.org")
    url = reverse("verify_email", args=[token])
    asked = client.get(url)
    assert asked.status_code == 200
    assert "Confirm <strong>sam@example.org</strong> as the e-mail address of the account <strong>sam</strong>?" in asked.content.decode()
    assert TrustedEmail.objects.count() == 0 and get_user_model().objects.get(username="sam").email == ""
    assert client.post(url)["Location"] == reverse("login")
    people.student.refresh_from_db()
    assert email_trust(user=people.student).email == "sam@example.org"
    for bad in (url.replace("/verify/", "/verify/x"), reverse("verify_email", args=["not-a-token"])):
        for method in (client.get, client.post):
            response = method(bad)
            assert response.status_code == 400 and "This confirmation link is not valid." in response.content.decode()


def test_an_old_sign_up_link_does_not_switch_a_disabled_account_back_on(client, people, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = True
    sign_up(client, "newbie", "newbie@example.org")
    link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    client.post(link)
    newbie = get_user_model().objects.get(username="newbie")
    assert newbie.is_active is True
    get_user_model().objects.filter(pk=newbie.pk).update(is_active=False)
    client.post(link)
    newbie.refresh_from_db()
    assert newbie.is_active is False


def test_sign_in_by_email_prefers_the_account_that_confirmed_it(client, people):
    user_create("mallory", email="sam@example.org")
    email_confirmed(people.student, "sam@example.org")
    assert client.post(reverse("login"), {"username": "sam@example.org", "password": PASSWORD}).status_code == 302
    assert signed_in_as(client) == "sam"


def test_the_profile_says_whether_the_address_is_confirmed_and_sends_a_link(client, people):
    people.student.email = "sam@example.org"
    people.student.save()
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("profile")).content.decode()
    assert (
        "Your e-mail sam@example.org is not confirmed yet: until you follow the link we send to it, instructors "
        "cannot find your account by it and a class roster with it does not reach you." in page
    )
    sent = client.post(reverse("email_confirmation_send"), follow=True)
    assert [str(m) for m in sent.context["messages"]] == [
        "We sent a link to sam@example.org: follow it to confirm your e-mail address."
    ]
    client.post(VERIFY_LINK.search(mail.outbox[-1].body).group(1))
    page = client.get(reverse("profile")).content.decode()
    assert "Your e-mail sam@example.org is confirmed." in page and "Send a confirmation link" not in page
    again = client.post(reverse("email_confirmation_send"), follow=True)
    assert [str(m) for m in again.context["messages"]] == ["Your e-mail sam@example.org is confirmed already."]
    assert len(mail.outbox) == 1


def test_confirmation_links_are_limited_per_account(client, people, settings):
    from django.core.cache import cache

    settings.ACCOUNT_CONFIRMATION_LINKS_BURST, settings.ACCOUNT_CONFIRMATION_LINKS_PER_HOUR = 3, 5.0
    cache.delete(f"token-bucket:verify-email:{people.student.pk}")  # ids are reused between tests
    client.login(username="sam", password=PASSWORD)
    for number in range(3):
        client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": f"sam{number}@example.org"}, follow=True)
    assert len(mail.outbox) == 3
    refused = client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "flood@example.org"}, follow=True)
    assert [str(m) for m in refused.context["messages"]] == [
        "Saved your profile.",
        "Too many confirmation links were sent for this account; try again in 12 minutes.",
    ]
    assert len(mail.outbox) == 3


def test_the_migration_trusts_only_staff_made_accounts_never_signed_in(people):
    from django.apps import apps
    from django.utils import timezone

    migration = importlib.import_module("accounts.migrations.0002_trust_addresses_of_unused_staff_made_accounts")
    made = {}
    for name, source, logged_in, email in (
        ("ada", EnrolmentSource.ROSTER, False, "ada@example.org"),       # trusted: staff gave it, never used
        ("bea", EnrolmentSource.MANUAL, False, "bea@example.org"),       # trusted
        ("cal", EnrolmentSource.ROSTER, True, "cal@example.org"),        # signed in: may have changed it
        ("dee", EnrolmentSource.JOIN_CODE, False, "dee@example.org"),    # typed by its holder
        ("eve", EnrolmentSource.ROSTER, False, "shared@example.org"),    # shared with fay
        ("fay", EnrolmentSource.JOIN_CODE, True, "Shared@example.org"),
    ):
        made[name] = user_create(name, email=email, last_login=timezone.now() if logged_in else None)
        Enrolment.objects.create(course=people.course, user=made[name], role=Role.STUDENT, source=source)
    migration.trust_unused_staff_made_accounts(apps, None)
    assert sorted(TrustedEmail.objects.values_list("user__username", "email", "trust")) == [
        ("ada", "ada@example.org", "staff"), ("bea", "bea@example.org", "staff"),
    ]


def test_a_roster_made_account_is_found_again_by_its_address(people):
    first = course_services.roster_import(course=people.course, rows=[{"email": "ada@example.org"}], dry_run=False, actor=people.instructor)
    assert first.lines[0].action == "create"
    again = course_services.roster_import(course=people.other_course, rows=[{"email": "ADA@example.org", "role": "ta"}], dry_run=False, actor=people.outsider)
    assert [(line.action, line.detail) for line in again.lines] == [("enrol", "'ada' enrolled as teaching assistant")]


# ---------------------------------------------------------------------------
# A link works once, and only while it is the latest one sent for the account
# ---------------------------------------------------------------------------

LINK_SPENT = (
    "This confirmation link has been used already, or a newer one was sent since; "
    "only the latest link sent for an account works, once."
)


def ask_for_address(client, email: str) -> str:
    client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": email})
    assert mail.outbox[-1].to == [email]
    return VERIFY_LINK.search(mail.outbox[-1].body).group(1)


def refused_as_spent(client, link: str):
    for method in (client.get, client.post):
        response = method(link)
        assert response.status_code == 400
        assert LINK_SPENT in response.content.decode()


def addresses(user):
    user.refresh_from_db()
    trust = email_trust(user=user)
    return user.email, (trust.email if trust else None)


@pytest.fixture
def sam_signed_in(client, people):
    from django.core.cache import cache

    cache.delete(f"token-bucket:verify-email:{people.student.pk}")  # ids are reused between tests
    assert client.login(username="sam", password=PASSWORD)
    return people.student


def test_an_earlier_link_is_refused_once_another_address_is_asked_for(client, sam_signed_in):
    first = ask_for_address(client, "victim@example.org")
    second = ask_for_address(client, "second@example.org")
    refused_as_spent(client, first)  # before the second is confirmed
    assert addresses(sam_signed_in) == ("", None)
    assert client.post(second)["Location"] == reverse("profile")
    assert addresses(sam_signed_in) == ("second@example.org", "second@example.org")
    refused_as_spent(client, first)  # and after
    assert addresses(sam_signed_in) == ("second@example.org", "second@example.org")


def test_a_confirmed_link_is_refused_the_second_time(client, sam_signed_in):
    link = ask_for_address(client, "victim@example.org")
    assert client.get(link).status_code == 200
    assert client.post(link)["Location"] == reverse("profile")
    assert addresses(sam_signed_in) == ("victim@example.org", "victim@example.org")
    other = ask_for_address(client, "second@example.org")
    assert client.post(other)["Location"] == reverse("profile")
    refused_as_spent(client, link)  # would have taken the account back to victim@
    refused_as_spent(client, other)
    assert addresses(sam_signed_in) == ("second@example.org", "second@example.org")


def test_asking_again_for_the_same_address_replaces_the_earlier_link(client, sam_signed_in):
    first = ask_for_address(client, "victim@example.org")
    client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "victim@example.org"})
    second = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    assert len(mail.outbox) == 2 and first != second
    refused_as_spent(client, first)
    assert client.post(second)["Location"] == reverse("profile")
    assert addresses(sam_signed_in) == ("victim@example.org", "victim@example.org")


def test_a_link_is_refused_once_the_account_e_mail_changed_otherwise(client, sam_signed_in):
    link = ask_for_address(client, "victim@example.org")
    email_confirmed(sam_signed_in, "staff@example.org")  # e.g. a password link, or staff
    refused_as_spent(client, link)
    assert addresses(sam_signed_in) == ("staff@example.org", "staff@example.org")


def test_a_sign_up_link_works_once(client, people, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = True
    sign_up(client, "newbie", "newbie@example.org")
    link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    assert client.post(link)["Location"] == reverse("login")
    refused_as_spent(client, link)


# ---------------------------------------------------------------------------
# Confirming another account's link while signed in
# ---------------------------------------------------------------------------

def test_a_link_confirmed_while_signed_in_to_another_account_names_that_account(client, sam_signed_in, people):
    link = ask_for_address(client, "victim@example.org")
    client.logout()
    assert client.login(username="sue", password=PASSWORD)
    page = client.get(link)
    assert "Confirm <strong>victim@example.org</strong> as the e-mail address of the account <strong>sam</strong>?" in page.content.decode()
    confirmed = client.post(link)
    assert confirmed["Location"] == reverse("dashboard")
    landed = client.get(confirmed["Location"])
    assert [str(m) for m in landed.context["messages"]] == ["The e-mail victim@example.org of the account sam is confirmed."]
    assert addresses(sam_signed_in) == ("victim@example.org", "victim@example.org")
    assert addresses(people.student2) == ("", None)
    assert signed_in_as(client) == "sue"


def test_a_link_confirmed_by_its_own_account_says_your_e_mail(client, sam_signed_in):
    link = ask_for_address(client, "victim@example.org")
    confirmed = client.post(link, follow=True)
    assert confirmed.redirect_chain == [(reverse("profile"), 302)]
    assert "Your e-mail victim@example.org is confirmed." in [str(m) for m in confirmed.context["messages"]]


def test_a_sign_up_link_with_a_join_code_confirmed_by_another_account_enrols_its_own(client, people, settings):
    from courses.models import Course

    settings.ACCOUNT_EMAIL_VERIFICATION = True
    Course.objects.filter(pk=people.course.pk).update(join_code="JOIN2345", join_open=True)
    people.course.refresh_from_db()
    client.post(reverse("signup"), {
        "username": "newbie", "email": "newbie@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
        "join": people.course.join_code,
    })
    link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    assert client.login(username="sue", password=PASSWORD)
    confirmed = client.post(link, follow=True)
    assert confirmed.redirect_chain == [(reverse("dashboard"), 302)]
    assert [str(m) for m in confirmed.context["messages"]] == [
        "The e-mail newbie@example.org of the account newbie is confirmed.",
        "The account newbie is enrolled in Attention.",
    ]
    newbie = get_user_model().objects.get(username="newbie")
    assert newbie.is_active and Enrolment.objects.get(course=people.course, user=newbie).role == Role.STUDENT
    assert signed_in_as(client) == "sue"
