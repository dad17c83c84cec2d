"""Login initiation and launch driven through the test client against a fake LMS."""

import time

import pytest
from django.contrib.auth import get_user_model

from courses.models import Assignment, Course, Enrolment
from lti import services
from lti.models import LoginState, LtiContext, LtiIdentity, ResourceLink

from .conftest import (
    AGS_SCOPES,
    CLIENT_ID,
    INSTRUCTOR,
    ISSUER,
    LAUNCH_URL,
    LEARNER,
)


def message(response) -> str:
    return response.context["message"]


# --- Login initiation ---


def test_login_redirects_to_the_platform_with_every_required_parameter(client, lms):
    response, query = lms.login(client)
    assert response.status_code == 302
    assert response["Location"].startswith("https://lms.example.edu/api/lti/authorize_redirect?")
    login = LoginState.objects.get()
    assert query == {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": CLIENT_ID,
        "redirect_uri": LAUNCH_URL,
        "login_hint": "opaque-login-hint",
        "lti_message_hint": "opaque-message-hint",
        "state": login.state,
        "nonce": login.nonce,
    }
    assert client.session["lti_states"] == [login.state]
    assert client.cookies[f"lti_state_{login.state}"].value == "1"


def test_login_by_get_without_hints_works_too(client, lms):
    response = client.get(
        "/lti/login/", {"iss": ISSUER, "login_hint": "h", "target_link_uri": LAUNCH_URL}
    )
    assert response.status_code == 302
    assert "lti_message_hint" not in response["Location"]


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"iss": None}, "The login request has no 'iss'; start it from the LMS."),
        ({"login_hint": ""}, "The login request has no 'login_hint'; start it from the LMS."),
        (
            {"target_link_uri": None},
            "The login request has no 'target_link_uri'; start it from the LMS.",
        ),
        (
            {"target_link_uri": "https://evil.example/launch"},
            "target_link_uri 'https://evil.example/launch' is not an address of this tool.",
        ),
        (
            {"iss": "https://other.example", "client_id": None},
            "No LMS is registered here for issuer 'https://other.example'. Ask the site admin to add it.",
        ),
        (
            {"client_id": "someone-else"},
            (
                "No LMS is registered here for issuer 'https://lms.example.edu' with client_id "
                "'someone-else'. Ask the site admin to add it."
            ),
        ),
        ({"lti_deployment_id": "dep-x"}, "Deployment 'dep-x' is not registered for this LMS."),
    ],
)
def test_bad_login_requests_are_refused_with_a_reason(client, lms, params, expected):
    response, _ = lms.login(client, **params)
    assert response.status_code == 400
    assert message(response) == expected
    assert LoginState.objects.count() == 0


def test_login_rejects_other_methods(client, lms):
    assert client.put("/lti/login/").status_code == 405


# --- Bad launches ---


def _expired(lms, nonce):
    past = int(time.time()) - 3600
    return lms.sign(lms.claims(nonce=nonce, iat=past, exp=past + 300))


BAD_LAUNCHES = {
    "bad signature": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce), key=other),
        "The id_token's signature does not verify with the LMS's keys.",
    ),
    "unknown issuer": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce, iss="https://rogue.example")),
        "Unknown issuer 'https://rogue.example': this LMS is not registered here.",
    ),
    "wrong aud": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce, aud="another-tool")),
        "The id_token is not addressed to this tool (aud lacks client_id 'attnquiz-client-7').",
    ),
    "several audiences without azp": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, aud=[CLIENT_ID, "another-tool"])
        ),
        "The id_token's authorised party (azp) is not this tool.",
    ),
    "expired": (
        lambda lms, nonce, other: _expired(lms, nonce),
        "The id_token has expired; open the link from the LMS again.",
    ),
    "valid for ages": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce, exp=10**30)),
        "The id_token is valid for more than an hour after it was issued (its exp is too far "
        "past its iat); open the link from the LMS again.",
    ),
    "valid for an hour and a second": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, iat=int(time.time()), exp=int(time.time()) + 3601)
        ),
        "The id_token is valid for more than an hour after it was issued (its exp is too far "
        "past its iat); open the link from the LMS again.",
    ),
    "issued in the future": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce, iat=int(time.time()) + 600)),
        "The id_token was issued in the future; check the LMS's clock.",
    ),
    "nonce of another login": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce="not-the-nonce")),
        "The id_token's nonce does not belong to this login.",
    ),
    "no nonce": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=None)),
        "The id_token has no 'nonce' claim.",
    ),
    "unknown deployment": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, **{services.CLAIM_DEPLOYMENT_ID: "dep-unknown"})
        ),
        "Deployment 'dep-unknown' is not registered for this LMS.",
    ),
    "wrong message type": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, **{services.CLAIM_MESSAGE_TYPE: "LtiSubmissionReviewRequest"})
        ),
        "Only resource link and deep linking launches are supported, "
        "not 'LtiSubmissionReviewRequest'.",
    ),
    "deep linking without a return URL": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(
                nonce=nonce,
                roles=[INSTRUCTOR],
                **{
                    services.CLAIM_MESSAGE_TYPE: "LtiDeepLinkingRequest",
                    services.CLAIM_DEEP_LINKING_SETTINGS: {"accept_types": ["ltiResourceLink"]},
                },
            )
        ),
        "The deep linking request has no deep_link_return_url.",
    ),
    "deep linking for files only": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(
                nonce=nonce,
                roles=[INSTRUCTOR],
                **{
                    services.CLAIM_MESSAGE_TYPE: "LtiDeepLinkingRequest",
                    services.CLAIM_DEEP_LINKING_SETTINGS: {
                        "accept_types": ["file"],
                        "deep_link_return_url": "https://lms.example.edu/dl/return",
                    },
                },
            )
        ),
        "The LMS asks for content attnquiz cannot give: it offers only LTI resource links.",
    ),
    "wrong version": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, **{services.CLAIM_VERSION: "1.1"})
        ),
        "Only LTI 1.3.0 is supported, not version '1.1'.",
    ),
    "garbage token": (lambda lms, nonce, other: "not.a.jwt", "The id_token is not a valid JWT."),
    "HS256 token": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce), key="shared-secret-0123456789abcdef0123", algorithm="HS256"
        ),
        "The id_token must be signed with RS256, not HS256.",
    ),
    "unknown key id": (
        lambda lms, nonce, other: lms.sign(lms.claims(nonce=nonce), kid="rotated-away"),
        "The LMS signed this launch with key 'rotated-away', which its keyset does not have.",
    ),
    "no resource link": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, **{services.CLAIM_RESOURCE_LINK: None})
        ),
        "The launch names no resource link.",
    ),
    "no context": (
        lambda lms, nonce, other: lms.sign(
            lms.claims(nonce=nonce, **{services.CLAIM_CONTEXT: None})
        ),
        "The launch has no course context; add attnquiz to a course in the LMS.",
    ),
    "no id_token": (lambda lms, nonce, other: "", "The launch has no id_token."),
}


@pytest.mark.parametrize("case", list(BAD_LAUNCHES))
def test_bad_launches_are_refused_with_an_exact_reason(client, lms, other_private_key, case):
    make_token, expected = BAD_LAUNCHES[case]
    _, redirect = lms.login(client)
    response = lms.launch(
        client,
        state=redirect["state"],
        id_token=make_token(lms, redirect["nonce"], other_private_key),
    )
    assert (response.status_code, message(response)) == (400, expected)
    assert "_auth_user_id" not in client.session
    assert LtiIdentity.objects.count() == 0
    assert Course.objects.count() == 0


def test_launch_without_state_is_refused(client, lms):
    _, redirect = lms.login(client)
    token = lms.sign(lms.claims(nonce=redirect["nonce"]))
    response = client.post("/lti/launch/", {"id_token": token})
    assert (response.status_code, message(response)) == (
        400,
        "The launch has no state; open the link from the LMS again.",
    )


def test_launch_with_an_unknown_state_is_refused(client, lms):
    _, redirect = lms.login(client)
    token = lms.sign(lms.claims(nonce=redirect["nonce"]))
    response = lms.launch(client, state="made-up", id_token=token)
    assert (response.status_code, message(response)) == (
        400,
        "This launch's login has expired or is unknown; open the link from the LMS again.",
    )


def test_launch_in_another_browser_is_refused(client, lms):
    from django.test import Client

    _, redirect = lms.login(client)
    token = lms.sign(lms.claims(nonce=redirect["nonce"]))
    response = lms.launch(Client(), state=redirect["state"], id_token=token)
    assert (response.status_code, message(response)) == (
        400,
        "This launch was started in another browser; open the link from the LMS again.",
    )


def test_state_cookie_alone_binds_the_browser(client, lms):
    """The session cookie is SameSite=Lax and absent on the LMS's cross-site POST."""
    _, redirect = lms.login(client)
    client.cookies.pop("sessionid")
    lms.platform.contexts.create(
        context_id="course-42", course=Course.objects.create(slug="c", title="C")
    )
    token = lms.sign(lms.claims(nonce=redirect["nonce"], roles=[INSTRUCTOR]))
    response = lms.launch(client, state=redirect["state"], id_token=token)
    assert response.status_code == 302


def test_replayed_launch_is_refused(client, lms):
    _, redirect = lms.login(client)
    token = lms.sign(lms.claims(nonce=redirect["nonce"], roles=[INSTRUCTOR]))
    first = lms.launch(client, state=redirect["state"], id_token=token)
    assert first.status_code == 302
    replay = lms.launch(client, state=redirect["state"], id_token=token)
    assert (replay.status_code, message(replay)) == (
        400,
        "This launch was already used: its nonce has been seen before.",
    )


def test_expired_login_state_is_refused(client, lms):
    _, redirect = lms.login(client)
    LoginState.objects.update(created_at=LoginState.objects.get().created_at.replace(year=2000))
    token = lms.sign(lms.claims(nonce=redirect["nonce"]))
    response = lms.launch(client, state=redirect["state"], id_token=token)
    assert response.status_code == 400
    assert (
        message(response)
        == "This launch's login has expired or is unknown; open the link from the LMS again."
    )


def test_launch_only_accepts_post(client, lms):
    assert client.get("/lti/launch/").status_code == 405


def test_unmapped_role_is_refused_with_403(client, lms):
    response = lms.login_and_launch(
        client, roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"]
    )
    assert response.status_code == 403
    assert message(response) == (
        "Your role in this LMS course has no counterpart in attnquiz "
        "(it knows instructors, teaching assistants and learners)."
    )


def test_audience_list_with_our_azp_is_accepted(client, lms):
    _, redirect = lms.login(client)
    token = lms.sign(
        lms.claims(nonce=redirect["nonce"], roles=[INSTRUCTOR], aud=[CLIENT_ID, "x"], azp=CLIENT_ID)
    )
    assert lms.launch(client, state=redirect["state"], id_token=token).status_code == 302


# --- Successful launches ---


def test_instructor_launch_creates_the_course_and_asks_which_assignment(client, lms):
    response = lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    link = ResourceLink.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/lti/links/{link.pk}/"

    context = LtiContext.objects.get()
    course = context.course
    assert (context.context_id, course.slug, course.title) == (
        "course-42",
        "ml-301",
        "Machine Learning 301",
    )
    user = LtiIdentity.objects.get(sub="prof-1").user
    assert (user.first_name, user.last_name, user.email) == (
        "Ada",
        "Lovelace",
        "prof-1@example.edu",
    )
    assert not user.has_usable_password()
    assert Enrolment.objects.get(course=course, user=user).role == "instructor"
    assert int(client.session["_auth_user_id"]) == user.pk
    assert (link.lineitem_url, link.ags_scopes, link.assignment) == (
        "http://127.0.0.1:9/api/lti/courses/42/line_items/7",
        AGS_SCOPES,
        None,
    )

    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"What should this LMS link open?" in page.content


def test_instructor_maps_the_link_and_students_land_on_the_assignment(client, lms):
    from django.test import Client

    lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    course = Course.objects.get()
    assignment = Assignment.objects.create(course=course, slug="week-3", title="Week 3")
    link = ResourceLink.objects.get()
    mapped = client.post(f"/lti/links/{link.pk}/", {"assignment": "week-3"})
    assert mapped.status_code == 302
    assert mapped["Location"] == "/courses/ml-301/assignments/week-3/"
    link.refresh_from_db()
    assert link.assignment == assignment

    student_browser = Client()
    response = lms.login_and_launch(student_browser, sub="student-1", roles=[LEARNER])
    assert response.status_code == 302
    assert response["Location"] == "/courses/ml-301/assignments/week-3/"
    student = LtiIdentity.objects.get(sub="student-1").user
    assert Enrolment.objects.get(course=course, user=student).role == "student"
    assert student_browser.get(response["Location"]).status_code == 200

    # A second launch by the same person reuses the user and enrolment.
    lms.login_and_launch(student_browser, sub="student-1", roles=[LEARNER])
    assert get_user_model().objects.filter(lti_identities__sub="student-1").count() == 1
    assert Enrolment.objects.filter(user=student).count() == 1


def test_instructor_creates_a_new_assignment_for_the_link(client, lms):
    lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    link = ResourceLink.objects.get()
    response = client.post(f"/lti/links/{link.pk}/", {"new_title": "Week 3: attention weights"})
    assert response.status_code == 302
    assert response["Location"] == "/teach/ml-301/a/week-3-attention-weights/"
    link.refresh_from_db()
    assert (link.assignment.slug, link.assignment.title) == (
        "week-3-attention-weights",
        "Week 3: attention weights",
    )


def test_link_map_refuses_empty_choices_and_strangers(client, lms):
    from django.test import Client

    lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    link = ResourceLink.objects.get()
    empty = client.post(f"/lti/links/{link.pk}/", {"new_title": "  "})
    assert (empty.status_code, empty.context["error"]) == (400, "Give the new assignment a title.")
    unknown = client.post(f"/lti/links/{link.pk}/", {"assignment": "nope"})
    assert (unknown.status_code, unknown.context["error"]) == (
        400,
        "Pick one of this course's assignments.",
    )

    Assignment.objects.create(course=link.context.course, slug="week-3", title="Week 3")
    client.post(f"/lti/links/{link.pk}/", {"assignment": "week-3"})
    student_browser = Client()
    assert (
        lms.login_and_launch(student_browser, sub="student-1", roles=[LEARNER]).status_code == 302
    )
    assert student_browser.get(f"/lti/links/{link.pk}/").status_code == 404
    assert client.get("/lti/links/999999/").status_code == 404


def test_custom_assignment_parameter_maps_the_link(client, lms):
    course = Course.objects.create(slug="ml", title="ML")
    lms.platform.contexts.create(context_id="course-42", course=course)
    Assignment.objects.create(course=course, slug="week-3", title="Week 3")
    response = lms.login_and_launch(
        client, sub="student-1", roles=[LEARNER], custom={"assignment": "week-3"}
    )
    assert response["Location"] == "/courses/ml/assignments/week-3/"
    assert ResourceLink.objects.get().assignment.slug == "week-3"


def test_custom_assignment_that_does_not_exist(client, lms):
    from django.test import Client

    course = Course.objects.create(slug="ml", title="ML")
    lms.platform.contexts.create(context_id="course-42", course=course)
    student = lms.login_and_launch(
        client, sub="student-1", roles=[LEARNER], custom={"assignment": "week-9"}
    )
    assert (student.status_code, message(student)) == (
        409,
        "This link asks for assignment 'week-9', which ML does not have. Tell your instructor.",
    )
    teacher_browser = Client()
    teacher = lms.login_and_launch(
        teacher_browser, sub="prof-1", roles=[INSTRUCTOR], custom={"assignment": "week-9"}
    )
    assert teacher.status_code == 302
    page = teacher_browser.get(teacher["Location"])
    assert (
        "This link asks for assignment &#x27;week-9&#x27;, which ML does not have. Pick or create"
        in page.content.decode()
    )


def test_student_before_the_instructor_gets_a_clear_page(client, lms):
    response = lms.login_and_launch(client, sub="student-1", roles=[LEARNER])
    assert (response.status_code, message(response)) == (
        409,
        (
            "This course is not set up in attnquiz yet. Ask your instructor to open this link "
            "from the LMS first, then try again."
        ),
    )
    assert Course.objects.count() == 0
    assert "_auth_user_id" not in client.session


def test_student_on_an_unmapped_link_gets_a_clear_page(client, lms):
    course = Course.objects.create(slug="ml", title="ML")
    lms.platform.contexts.create(context_id="course-42", course=course)
    response = lms.login_and_launch(client, sub="student-1", roles=[LEARNER])
    assert (response.status_code, message(response)) == (
        409,
        (
            "This link does not open an assignment yet. Ask your instructor to open it from "
            "the LMS and choose one, then try again."
        ),
    )


def test_keyset_url_is_fetched_for_an_unknown_key(client, lms, platform_private_key, monkeypatch):
    from .conftest import public_jwks

    lms.platform.jwks = {"keys": []}
    lms.platform.keyset_url = "https://lms.example.edu/api/lti/security/jwks"
    lms.platform.save()
    fetched = []

    class FakeResponse:
        status_code = 200

        def json(self):
            return public_jwks(platform_private_key)

    def fake_get(self, url, **kwargs):
        fetched.append(("GET", url))
        return FakeResponse()

    from lti.connector import TimeoutSession

    monkeypatch.setattr(TimeoutSession, "get", fake_get)
    response = lms.login_and_launch(client, roles=[INSTRUCTOR])
    assert response.status_code == 302
    assert fetched == [("GET", "https://lms.example.edu/api/lti/security/jwks")]
    lms.platform.refresh_from_db()
    assert lms.platform.jwks["keys"][0]["kid"] == "lms-key-2025"


def test_jwks_publishes_our_public_key_only(client, db):
    response = client.get("/lti/jwks/")
    assert response.status_code == 200
    (key,) = response.json()["keys"]
    assert (key["kty"], key["alg"], key["use"], key["e"]) == ("RSA", "RS256", "sig", "AQAB")
    assert "d" not in key and "p" not in key
    again = client.get("/lti/jwks/").json()
    assert again == response.json()


def test_a_launch_is_not_locked_out_by_sign_in_throttling(client, lms, settings):
    """Failed password sign-ins from the LMS's address must not block its launches."""
    settings.AXES_ENABLED = True
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        client.post("/login/", {"username": "guess", "password": "x"})
    assert client.post("/login/", {"username": "guess", "password": "x"}).status_code == 429
    response = lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    assert response.status_code == 302
    assert response["Location"] == f"/lti/links/{ResourceLink.objects.get().pk}/"
    assert LtiIdentity.objects.get(sub="prof-1").user.pk == int(client.session["_auth_user_id"])
