"""Adding an existing account to a course invites it: nothing of the account is shown to
the course, and the course gives it nothing, until its owner accepts on their dashboard.
Direct enrolment stays where the person consents or staff made the account; and course
short names and titles are checked."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from accounts.tests.helpers import email_confirmed
from api.tests.conftest import api_client
from api.models import TokenScope
from api.services import api_token_create
from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, user_create
from courses import services
from courses.models import Course, Enrolment, EnrolmentInvitation, EnrolmentSource, EnrolmentStatus, Role
from courses.services import CourseRefused, roster_import

SECRETS = ("Vera", "Secret", "vera@uni.example")


@pytest.fixture
def victim(people):
    """A student of another course, with a name and a confirmed address: guessable, not consenting."""
    vera = user_create("s001", first_name="Vera", last_name="Secret")
    email_confirmed(vera, "vera@uni.example")
    Enrolment.objects.create(course=people.other_course, user=vera, role=Role.STUDENT)
    assignment_create(people.course, [published_version(source=product_yaml())])
    return vera


def _add(client, identifier, role="student", **extra):
    return client.post(reverse("courses:person_add", args=["attn"]), {"identifier": identifier, "role": role, **extra}, follow=True)


def _messages(response):
    return [str(m) for m in response.context["messages"]]


def _shows_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


def test_adding_someone_elses_account_invites_it_and_shows_nothing_of_it(client, people, victim):
    client.login(username="rita", password=PASSWORD)
    response = _add(client, "s001")
    assert _messages(response) == [
        "s001: invited (student); they join the course by answering the invitation: it waits on their page of courses."
    ]
    assert not Enrolment.objects.filter(course=people.course, user=victim).exists()
    invitation = EnrolmentInvitation.objects.get(course=people.course, user=victim)
    assert (invitation.identifier, invitation.role, invitation.invited_by) == ("s001", Role.STUDENT, people.reviewer)
    # The people page lists the invitation by what was typed, and nothing of the account.
    page = client.get(reverse("courses:people", args=["attn"])).content.decode()
    _shows_no_secret(page)
    assert re.search(r'<table class="data" id="invited">.*<th scope="row">s001</th>', page, re.S)
    assert "5 people: " in page  # the enrolled, as before: the invited are not counted
    # Nor the gradebook, its exports, or the API's roster.
    for name in ("course_gradebook", "course_gradebook_csv"):
        export = client.get(reverse(f"instructor:{name}", args=["attn"]))
        assert export.status_code == 200
        body = (b"".join(export.streaming_content) if export.streaming else export.content).decode()
        assert "Sam" in body or "sam" in body  # the enrolled students are there
        _shows_no_secret(body)
        assert "s001" not in body
    token = api_token_create(user=people.reviewer, name="t", scope=TokenScope.READ, lifetime_days=7)[1]
    roster = api_client(token).get("/api/v1/courses/attn/roster/")
    assert roster.status_code == 200
    assert sorted(row["username"] for row in roster.json()) == ["ines", "rita", "sam", "sue", "tariq"]
    # The invited person has no access to the course meanwhile.
    client.login(username="s001", password=PASSWORD)
    assert client.get("/courses/attn/").status_code == 404
    assert client.get(reverse("assignment", args=["attn", "week1"])).status_code == 404


def test_by_e_mail_the_invitation_is_shown_by_the_address_typed(client, people, victim):
    client.login(username="rita", password=PASSWORD)
    response = _add(client, "VERA@uni.example", role="ta")
    assert _messages(response) == [
        "vera@uni.example: invited (teaching assistant); they join the course by answering the invitation: "
        "it waits on their page of courses."
    ]
    invitation = EnrolmentInvitation.objects.get(course=people.course, user=victim)
    assert (invitation.identifier, invitation.role) == ("vera@uni.example", Role.TEACHING_ASSISTANT)
    page = client.get(reverse("courses:people", args=["attn"])).content.decode()
    assert "<th scope=\"row\">vera@uni.example</th>" in page and "s001" not in page and "Vera" not in page
    # Named again by username, the message says what was typed now, not the address.
    assert _messages(_add(client, "s001", role="ta")) == [
        "s001: invited (teaching assistant); they join the course by answering the invitation: "
        "it waits on their page of courses."
    ]


def test_the_invited_person_accepts_on_their_dashboard_with_the_role_invited(client, people, victim):
    services.enrolment_add(course=people.course, identifier="s001", role=Role.TEACHING_ASSISTANT, actor=people.reviewer)
    invitation = EnrolmentInvitation.objects.get(user=victim)
    client.login(username="s001", password=PASSWORD)
    dashboard = client.get("/").content.decode()
    section = dashboard[dashboard.index('<section id="invitations"'):dashboard.index("</section>")]
    assert "<strong>Attention</strong>: rita invites you as teaching assistant." in section
    assert f'action="/invitations/{invitation.pk}/accept/"' in section and "csrfmiddlewaretoken" in section
    assert client.get(f"/invitations/{invitation.pk}/accept/").status_code == 405  # POST only
    accepted = client.post(f"/invitations/{invitation.pk}/accept/")
    assert (accepted.status_code, accepted["Location"]) == (302, "/courses/attn/")
    enrolment = Enrolment.objects.get(course=people.course, user=victim)
    assert (enrolment.role, enrolment.status, enrolment.source) == (Role.TEACHING_ASSISTANT, EnrolmentStatus.ACTIVE, EnrolmentSource.MANUAL)
    assert not EnrolmentInvitation.objects.exists()
    assert client.get("/courses/attn/")["Location"] == "/teach/attn/"
    assert 'id="invitations"' not in client.get("/").content.decode()


def test_declining_removes_the_invitation_and_gives_nothing(client, people, victim):
    services.enrolment_add(course=people.course, identifier="s001", role=Role.STUDENT, actor=people.reviewer)
    invitation = EnrolmentInvitation.objects.get(user=victim)
    client.login(username="s001", password=PASSWORD)
    declined = client.post(f"/invitations/{invitation.pk}/decline/", follow=True)
    assert _messages(declined) == ["Declined the invitation to Attention."]
    assert not EnrolmentInvitation.objects.exists()
    assert not Enrolment.objects.filter(course=people.course, user=victim).exists()
    assert client.post(f"/invitations/{invitation.pk}/accept/").status_code == 404


def test_only_the_invited_person_answers_and_staff_may_withdraw(client, people, victim):
    services.enrolment_add(course=people.course, identifier="s001", role=Role.STUDENT, actor=people.reviewer)
    invitation = EnrolmentInvitation.objects.get(user=victim)
    for username in ("rita", "sam", "otto"):
        client.login(username=username, password=PASSWORD)
        assert client.post(f"/invitations/{invitation.pk}/accept/").status_code == 404, username
        assert client.post(f"/invitations/{invitation.pk}/decline/").status_code == 404, username
    with pytest.raises(CourseRefused, match="not yours"):
        services.enrolment_invitation_accept(invitation=invitation, user=people.student)
    client.login(username="rita", password=PASSWORD)
    withdrawn = client.post(reverse("courses:invitation_withdraw", args=["attn", invitation.pk]), follow=True)
    assert _messages(withdrawn) == ["Withdrew the invitation of s001."]
    assert not EnrolmentInvitation.objects.exists()
    # Another course's staff cannot reach this course's invitations.
    again = services.enrolment_add(course=people.course, identifier="s001", role=Role.STUDENT, actor=people.reviewer)
    client.login(username="otto", password=PASSWORD)
    assert client.post(reverse("courses:invitation_withdraw", args=["other", again.invitation.pk])).status_code == 404


def test_an_archived_course_cannot_be_joined_by_its_invitation(client, people, victim):
    change = services.enrolment_add(course=people.course, identifier="s001", role=Role.STUDENT, actor=people.reviewer)
    services.course_archive(course=people.course)
    with pytest.raises(CourseRefused, match="archived"):
        services.enrolment_invitation_accept(invitation=change.invitation, user=victim)
    client.login(username="s001", password=PASSWORD)
    assert 'id="invitations"' not in client.get("/").content.decode()
    assert not Enrolment.objects.filter(course=people.course, user=victim).exists()


def test_the_ticked_e_mail_links_to_the_dashboard_and_sets_no_password(client, people, victim, django_capture_on_commit_callbacks):
    client.login(username="rita", password=PASSWORD)
    with django_capture_on_commit_callbacks(execute=True):
        response = _add(client, "s001", invite="on")
    assert _messages(response) == [
        "s001: invited (student); they join the course by answering the invitation; an e-mail tells them about it."
    ]
    assert [m.to for m in mail.outbox] == [["vera@uni.example"]]
    message = mail.outbox[0]
    assert message.subject == "You are invited to Attention on attnquiz"
    assert "http://testserver/#invitations" in message.body and "rita invites you" in message.body
    assert "/accounts/invitation/" not in message.body  # no password link for an account that has one
    # Adding again at once does not e-mail again.
    with django_capture_on_commit_callbacks(execute=True):
        _add(client, "s001", invite="on")
    assert len(mail.outbox) == 1


def test_direct_enrolment_stays_where_the_person_consents_or_staff_made_the_account(client, people, victim):
    # A site administrator adds people directly.
    admin = get_user_model().objects.create_superuser("root", "root@example.org", PASSWORD)
    change = services.enrolment_add(course=people.course, identifier="s001", role=Role.STUDENT, actor=admin)
    assert (change.action, change.enrolment.status) == ("enrolled", EnrolmentStatus.ACTIVE)
    # A dropped student added again is restored, and a role change is made at once.
    Enrolment.objects.filter(user=people.student, course=people.course).update(status=EnrolmentStatus.DROPPED)
    assert services.enrolment_add(course=people.course, identifier="sam", role=Role.STUDENT, actor=people.reviewer).action == "re-enrolled"
    assert services.enrolment_add(course=people.course, identifier="sue", role=Role.TEACHING_ASSISTANT, actor=people.reviewer).action == "role changed"
    # An account a course's staff made for an address that has never been signed in to.
    report = roster_import(course=people.other_course, rows=[{"email": "new@uni.example"}], dry_run=False, actor=people.outsider)
    made = get_user_model().objects.get(pk=report.created_user_ids[0])
    assert services.enrolment_add(course=people.course, identifier="new@uni.example", role=Role.STUDENT, actor=people.reviewer).action == "enrolled"
    # Once its owner signed in, it is theirs: invited like any other.
    Enrolment.objects.filter(course=people.course, user=made).delete()
    made.set_password(PASSWORD)
    made.save()
    client.login(username=made.username, password=PASSWORD)
    assert services.enrolment_add(course=people.course, identifier="new@uni.example", role=Role.STUDENT, actor=people.reviewer).action == "invited"
    # Joining by code is the person's own act.
    services.join_code_rotate(course=people.other_course)
    people.other_course.refresh_from_db()
    enrolment = services.course_join(code=people.other_course.join_code, user=people.student)
    assert (enrolment.status, enrolment.source) == (EnrolmentStatus.ACTIVE, EnrolmentSource.JOIN_CODE)
    # Internal callers acting on the person's request say so.
    assert services.enrolment_add(course=people.other_course, identifier="sue", role=Role.STUDENT, actor=people.outsider, consented=True).action == "enrolled"


def test_the_roster_import_invites_existing_accounts_and_the_dry_run_changes_nothing(client, people, victim, django_capture_on_commit_callbacks):
    rows = "username,email,name,role\ns001,,Someone Else,ta\n,vera@uni.example,,\n,brand.new@uni.example,Bran New,\n"
    client.login(username="rita", password=PASSWORD)
    url = reverse("courses:roster", args=["attn"])
    dry = client.post(url, {"text": rows})
    assert dry.status_code == 200 and not EnrolmentInvitation.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        applied = client.post(url, {"text": rows, "apply": "1", "invite": "on"}, follow=True)
    report = applied.context["report"]
    assert [(line.line, line.who, line.action, line.detail) for line in report.lines] == [
        (2, "s001", "invite", "'s001' invited as teaching assistant: enrolled once they accept the invitation on their dashboard"),
        (3, "vera@uni.example", "error", "the same person as line 2"),
        (4, "brand.new@uni.example", "create",
         "new account 'brand.new', enrolled as student; the invitation e-mail lets them choose a password"),
    ]
    # The report says what was typed (the address on line 3), nothing of the account itself.
    assert "Vera" not in applied.content.decode() and "Secret" not in applied.content.decode()
    assert _messages(applied) == [
        "Imported the roster: 2 changes; 1 invitation sent; 1 existing account invited: enrolled once they accept (told by e-mail)."
    ]
    assert sorted(m.to[0] for m in mail.outbox) == ["brand.new@uni.example", "vera@uni.example"]
    assert not Enrolment.objects.filter(course=people.course, user=victim).exists()
    again = roster_import(course=people.course, rows=[{"username": "s001", "role": "ta"}], dry_run=False, actor=people.reviewer)
    assert [(line.action, line.detail) for line in again.lines] == [("skip", "'s001' is already invited as teaching assistant")]


def test_the_api_roster_import_invites_too(people, victim):
    token = api_token_create(user=people.reviewer, name="t", scope=TokenScope.WRITE, lifetime_days=7)[1]
    response = api_client(token).post(
        "/api/v1/courses/attn/roster/", {"rows": [{"email": "vera@uni.example"}], "dry_run": False}, content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["lines"] == [{
        "line": 2, "who": "vera@uni.example", "action": "invite",
        "detail": "'vera@uni.example' invited as student: enrolled once they accept the invitation on their dashboard",
    }]
    assert response.json()["counts"]["invite"] == 1
    assert not Enrolment.objects.filter(course=people.course, user=victim).exists()


@pytest.mark.parametrize("slug,refusal", [
    ("new", "&#x27;new&#x27; is a word the site&#x27;s addresses use (/courses/new/ is another page); choose another short name."),
    ("NEW", "&#x27;new&#x27; is a word the site&#x27;s addresses use (/courses/new/ is another page); choose another short name."),
    ("ATTN", "There is already a course called &#x27;attn&#x27;; choose another short name."),
])
def test_a_short_name_may_not_be_a_url_word_nor_differ_only_in_case(client, people, slug, refusal):
    services.course_creation_grant(user=people.instructor)
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("courses:new"), {"title": "T", "slug": slug, "time_zone": "UTC"})
    assert response.status_code == 422 and refusal in response.content.decode()
    assert Course.objects.count() == 2


def test_a_short_name_is_stored_in_lower_case_and_a_title_on_one_line(client, people):
    services.course_creation_grant(user=people.instructor)
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("courses:new"), {"title": "Linear\r\nAlgebra\t 300\x0b", "term": "Fall\n2027", "slug": "LA300", "time_zone": "UTC"})
    assert (response.status_code, response["Location"]) == (302, "/courses/la300/settings/")
    course = Course.objects.get(slug="la300")
    assert (course.title, course.term) == ("Linear Algebra 300", "Fall 2027")
    assert client.post(reverse("courses:new"), {"title": "T", "slug": "la300", "time_zone": "UTC"}).status_code == 422
    blank = client.post(reverse("courses:settings", args=["la300"]), {"title": "\n\t", "time_zone": "UTC"})
    assert blank.status_code == 422
    client.post(reverse("courses:settings", args=["la300"]), {"title": "A\nB", "time_zone": "UTC"})
    course.refresh_from_db()
    assert course.title == "A B"
    with pytest.raises(CourseRefused, match="word the site's addresses use"):
        services.course_create(actor=people.instructor, slug="New", title="X")
    copy = client.post(reverse("courses:copy", args=["la300"]), {"title": "C", "slug": "new", "offset_days": "0"})
    assert copy.status_code == 422 and "is a word the site&#x27;s addresses use" in copy.content.decode()
