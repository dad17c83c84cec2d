"""An LMS marked as verifying its users' e-mail addresses (``Platform.verifies_emails``)
vouches, at a launch, for the address of the account it launched, under the rule of every
trusted address: the first account to hold it keeps it (accounts.models). Without the
mark, the LMS's address stays what it always was: a claim that finds nobody."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.models import EmailTrust, TrustedEmail
from accounts.selectors import email_trust, user_by_trusted_email
from accounts.services import email_trust_record
from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import PASSWORD, people_create, user_create
from courses import services as course_services
from courses.models import Assignment, Enrolment, EnrolmentInvitation, Role
from lti import services
from lti.models import LtiContext, LtiIdentity, Platform
from lti.tests.conftest import CLIENT_ID, DEPLOYMENT_ID, ISSUER, FakePlatform, public_jwks

ADA = "ada@uni.example.edu"
SUB = "lms-ada"
OTHER_CLIENT_ID = "attnquiz-client-other-institution"  # hosted Canvas: one issuer, many clients


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def lms_course(people, lms):
    """The LMS course 'course-42' is mapped to the course 'attn', whose 'week-3' the links open."""
    Assignment.objects.create(course=people.course, slug="week-3", title="Week 3")
    LtiContext.objects.create(platform=lms.platform, context_id="course-42", course=people.course)
    return people


@pytest.fixture
def other_lms(lms_course, other_private_key):
    """A second registration of the same issuer (another client id, its own key), mapped to
    'attn'."""
    platform = services.platform_register(
        name="Another institution",
        issuer=ISSUER,
        client_id=OTHER_CLIENT_ID,
        auth_login_url="https://lms.example.edu/api/lti/authorize_redirect",
        auth_token_url="https://lms.example.edu/login/oauth2/token",
        deployment_ids=[DEPLOYMENT_ID],
        jwks=public_jwks(other_private_key),
    )
    LtiContext.objects.create(platform=platform, context_id="course-42", course=lms_course.course)
    return FakePlatform(platform, other_private_key)


def verifies_emails(fake: FakePlatform) -> None:
    Platform.objects.filter(pk=fake.platform.pk).update(verifies_emails=True)
    fake.platform.refresh_from_db()


def launch(fake: FakePlatform, *, sub: str = SUB, email: str | None = ADA, **claims):
    """A learner's launch of 'week-3' from ``fake`` (in a browser of its own); the account."""
    client = Client()
    _, redirect = fake.login(client, client_id=fake.platform.client_id)
    token = fake.sign(
        fake.claims(
            nonce=redirect["nonce"], sub=sub, email=email, aud=fake.platform.client_id,
            custom={"assignment": "week-3"}, **claims,
        )
    )
    response = fake.launch(client, state=redirect["state"], id_token=token)
    assert (response.status_code, response["Location"]) == (
        302, "/courses/attn/assignments/week-3/"
    )
    return LtiIdentity.objects.get(platform=fake.platform, sub=sub).user


def trust_of(user) -> tuple[str, str] | None:
    """The account's trusted-address record as (address, how), whether or not still its e-mail."""
    return TrustedEmail.objects.filter(user=user).values_list("email", "trust").first()


def test_a_new_registration_does_not_vouch_and_its_address_finds_nobody(lms_course, lms):
    assert lms.platform.verifies_emails is False
    student = launch(lms)
    assert (student.email, trust_of(student), email_trust(user=student)) == (ADA, None, None)
    assert user_by_trusted_email(email=ADA) is None
    report = course_services.roster_import(
        course=lms_course.other_course, rows=[{"email": ADA}], dry_run=True,
        actor=lms_course.outsider,
    )
    assert [(line.action, line.detail) for line in report.lines] == [(
        "create",
        "new account 'ada', enrolled as student; they choose a password with “Forgot your "
        f"password?” on the sign-in page; the account '{student.username}' also gives this "
        "e-mail without having confirmed it: not used",
    )]
    with pytest.raises(course_services.CourseRefused) as refused:
        course_services.enrolment_add(
            course=lms_course.other_course, identifier=ADA, role=Role.STUDENT,
            actor=lms_course.outsider,
        )
    assert refused.value.message.startswith(
        f"No account has confirmed the e-mail '{ADA}' (the account '{student.username}' gives "
        "it without having confirmed it, so it is not used)."
    )


def test_a_verifying_lms_makes_its_student_findable_by_the_roster_and_add_by_email(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    assert (student.email, trust_of(student)) == (ADA, (ADA, EmailTrust.GIVEN_BY_LMS))
    assert email_trust(user=student).confirmed is True
    assert user_by_trusted_email(email="Ada@UNI.example.edu") == student

    report = course_services.roster_import(
        course=lms_course.other_course, rows=[{"email": "ADA@uni.example.edu"}], dry_run=True,
        actor=lms_course.outsider,
    )
    # Found by the address; an existing account is invited (shown as typed), not enrolled.
    assert [(line.action, line.detail) for line in report.lines] == [
        ("invite", "'ada@uni.example.edu' invited as student: enrolled once they accept the invitation on their dashboard"),
    ]
    client = Client()
    assert client.login(username="otto", password=PASSWORD)
    added = client.post(
        reverse("courses:person_add", args=["other"]), {"identifier": ADA, "role": "ta"},
        follow=True,
    )
    assert [str(m) for m in added.context["messages"]] == [
        f"{ADA}: invited (teaching assistant); they join the course by answering the invitation: "
        "it waits on their page of courses."
    ]
    invitation = EnrolmentInvitation.objects.get(course=lms_course.other_course, user=student)
    course_services.enrolment_invitation_accept(invitation=invitation, user=student)
    enrolment = Enrolment.objects.get(course=lms_course.other_course, user=student)
    assert enrolment.role == Role.TEACHING_ASSISTANT
    assert get_user_model().objects.filter(username="ada").exists() is False  # no second account


@pytest.mark.parametrize("trust", [EmailTrust.CONFIRMED_BY_LINK, EmailTrust.GIVEN_BY_STAFF])
def test_an_address_another_account_holds_stays_with_it(lms_course, lms, trust):
    verifies_emails(lms)
    holder = user_create("ada_local", email=ADA)
    assert email_trust_record(user=holder, email=ADA, trust=trust)
    held = TrustedEmail.objects.get(user=holder)

    student = launch(lms)
    # The LMS account gives the address, as it would without the mark, and is not trusted with it.
    assert (student.email, trust_of(student), email_trust(user=student)) == (ADA, None, None)
    assert TrustedEmail.objects.values_list("user", "email", "trust", "recorded_at").get() == (
        holder.pk, ADA, trust, held.recorded_at
    )
    holder.refresh_from_db()
    assert holder.email == ADA
    assert user_by_trusted_email(email=ADA) == holder


def test_of_two_verifying_lms_giving_one_address_the_first_account_keeps_it(
    lms_course, lms, other_lms
):
    verifies_emails(lms)
    verifies_emails(other_lms)
    first = launch(lms, sub="ada-here")
    second = launch(other_lms, sub="ada-there")
    assert first != second
    assert (trust_of(first), trust_of(second)) == ((ADA, EmailTrust.GIVEN_BY_LMS), None)
    assert (second.email, user_by_trusted_email(email=ADA)) == (ADA, first)
    # The first LMS now gives its account another address: the first address is free, and
    # the other LMS's next launch gets it.
    launch(lms, sub="ada-here", email="ada.lovelace@uni.example.edu")
    assert user_by_trusted_email(email=ADA) is None
    launch(other_lms, sub="ada-there")
    assert (trust_of(first), trust_of(second)) == (
        ("ada.lovelace@uni.example.edu", EmailTrust.GIVEN_BY_LMS), (ADA, EmailTrust.GIVEN_BY_LMS),
    )
    assert user_by_trusted_email(email=ADA) == second


def test_a_changed_address_takes_the_trust_with_it(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    again = launch(lms, email="Ada.Lovelace@UNI.example.edu")
    assert again == student
    student.refresh_from_db()
    assert (student.email, trust_of(student)) == (
        "ada.lovelace@uni.example.edu", ("ada.lovelace@uni.example.edu", EmailTrust.GIVEN_BY_LMS)
    )
    assert TrustedEmail.objects.count() == 1
    assert user_by_trusted_email(email=ADA) is None
    assert user_by_trusted_email(email="ada.lovelace@uni.example.edu") == student


def test_a_changed_address_another_account_holds_is_not_taken(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    holder = email_confirmed(user_create("ada_l"), "ada.lovelace@uni.example.edu")
    launch(lms, email="ada.lovelace@uni.example.edu")
    student.refresh_from_db()
    # Its e-mail follows the LMS; the trust it had stays on the old address, which no longer
    # is its e-mail and so finds nobody.
    assert (student.email, trust_of(student), email_trust(user=student)) == (
        "ada.lovelace@uni.example.edu", (ADA, EmailTrust.GIVEN_BY_LMS), None
    )
    assert user_by_trusted_email(email=ADA) is None
    assert user_by_trusted_email(email="ada.lovelace@uni.example.edu") == holder
    assert trust_of(holder) == ("ada.lovelace@uni.example.edu", EmailTrust.CONFIRMED_BY_LINK)


def test_an_address_confirmed_in_attnquiz_gives_way_to_the_lms_at_the_next_launch(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    email_confirmed(student, "ada@home.example.org")  # the profile's link, followed
    assert trust_of(student) == ("ada@home.example.org", EmailTrust.CONFIRMED_BY_LINK)
    launch(lms)
    student.refresh_from_db()
    assert (student.email, trust_of(student)) == (ADA, (ADA, EmailTrust.GIVEN_BY_LMS))
    assert user_by_trusted_email(email="ada@home.example.org") is None


def test_an_address_the_account_confirmed_itself_stays_confirmed_by_link(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    TrustedEmail.objects.filter(user=student).update(trust=EmailTrust.CONFIRMED_BY_LINK)
    launch(lms)
    assert trust_of(student) == (ADA, EmailTrust.CONFIRMED_BY_LINK)


@pytest.mark.parametrize("claims, expected_email", [
    ({"email_verified": False}, ADA),
    ({"email_verified": "false"}, ADA),
    ({"email": None}, ""),                  # no address at all
    ({"email": "not an address"}, ""),
])
def test_what_the_lms_does_not_vouch_for_is_not_trusted(lms_course, lms, claims, expected_email):
    verifies_emails(lms)
    student = launch(lms, **claims)
    assert (student.email, trust_of(student)) == (expected_email, None)


def test_a_launch_without_an_address_leaves_the_trust_as_it_was(lms_course, lms):
    verifies_emails(lms)
    student = launch(lms)
    launch(lms, email=None)
    student.refresh_from_db()
    assert (student.email, trust_of(student)) == (ADA, (ADA, EmailTrust.GIVEN_BY_LMS))


def test_the_mark_belongs_to_one_registration_and_a_forged_launch_trusts_nothing(
    lms_course, lms, other_lms
):
    verifies_emails(lms)
    # The same issuer under another client id (another institution on hosted Canvas) is not marked.
    unmarked = launch(other_lms, sub="ada-there")
    assert (unmarked.email, trust_of(unmarked)) == (ADA, None)
    # A token naming the marked registration but signed with another key is refused, and
    # nobody is made or trusted.
    client = Client()
    _, redirect = lms.login(client, client_id=CLIENT_ID)
    forged = other_lms.sign(
        lms.claims(nonce=redirect["nonce"], sub="mallory", email="victim@uni.example.edu")
    )
    response = lms.launch(client, state=redirect["state"], id_token=forged)
    assert response.status_code == 400
    assert LtiIdentity.objects.filter(sub="mallory").exists() is False
    assert TrustedEmail.objects.count() == 0


def test_a_roster_sync_updates_the_address_but_vouches_for_nothing(lms_course, lms):
    verifies_emails(lms)
    member = {
        "user_id": "lms-bea", "roles": ["Learner"], "name": "Bea Brown",
        "email": "bea@uni.example.edu",
    }
    user = services.lti_user_ensure(platform=lms.platform, sub="lms-bea", claims=member)
    user.refresh_from_db()
    assert (user.email, trust_of(user)) == ("bea@uni.example.edu", None)


def test_the_admin_shows_the_mark_off_by_default(admin_client, lms):
    url = reverse("admin:lti_platform_change", args=[lms.platform.pk])
    page = admin_client.get(url).content.decode()
    assert "This LMS verifies its users&#x27; e-mail addresses" in page
    assert (
        '<input type="checkbox" name="verifies_emails" aria-describedby="id_verifies_emails_helptext" '
        'id="id_verifies_emails">' in page  # not checked
    )
    assert "Turn on only if no user of this LMS can set an address without proving" in page
