"""A signed launch whose identifiers or course names are not what LTI 1.3 says (a number
for a title, an id past 255 characters or holding a NUL) is a 400 with the reason, not a
500 from the database; nothing is stored."""

from __future__ import annotations

import pytest

from courses.models import Course
from lti import services
from lti.models import LtiContext, LtiIdentity, ResourceLink

from .conftest import INSTRUCTOR


def message(response) -> str:
    return response.context["message"]


REFUSED = {
    "a context id of 256 characters": (
        dict(context_id="c" * 256), "The launch's course context id is longer than 255 characters.",
    ),
    "a context id that is an object": (dict(context_id={"id": 1}), "The launch's course context id is not a text."),
    "a context id with a NUL": (
        dict(context_id="c\x00x"), "The launch's course context id contains a NUL character (U+0000).",
    ),
    "a resource link id of 256 characters": (
        dict(link_id="l" * 256), "The launch's resource link id is longer than 255 characters.",
    ),
    "a resource link id with a NUL": (
        dict(link_id="l\x00x"), "The launch's resource link id contains a NUL character (U+0000).",
    ),
    "a sub of 256 characters": (dict(sub="s" * 256), "The launch's user id (sub) is longer than 255 characters."),
    "a sub with a NUL": (dict(sub="s\x00x"), "The launch's user id (sub) contains a NUL character (U+0000)."),
    "a deployment id with a NUL": (
        {services.CLAIM_DEPLOYMENT_ID: "deployment-1\x00"}, "Deployment 'deployment-1\x00' is not registered for this LMS.",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_identifiers_that_cannot_be_stored_are_refused_with_the_reason(client, lms, case):
    claims, expected = REFUSED[case]
    response = lms.login_and_launch(client, roles=[INSTRUCTOR], **claims)
    assert (response.status_code, message(response)) == (400, expected)
    assert "_auth_user_id" not in client.session
    assert (LtiIdentity.objects.count(), Course.objects.count(), ResourceLink.objects.count()) == (0, 0, 0)


def test_identifiers_of_255_characters_and_numbers_are_taken(client, lms):
    response = lms.login_and_launch(client, roles=[INSTRUCTOR], sub="s" * 255, context_id=42, link_id="l" * 255)
    assert response.status_code == 302
    assert LtiIdentity.objects.get().sub == "s" * 255
    assert LtiContext.objects.get().context_id == "42"
    assert ResourceLink.objects.get().resource_link_id == "l" * 255


@pytest.mark.parametrize("title, label", [(5, 7), (["Week 1"], {"x": 1}), (None, 3)])
def test_a_course_title_or_label_that_is_not_text_is_left_out(client, lms, title, label):
    context = {"id": "course-42", "title": title, "label": label}
    response = lms.login_and_launch(client, roles=[INSTRUCTOR], **{services.CLAIM_CONTEXT: context})
    assert response.status_code == 302
    course = LtiContext.objects.get().course
    assert (course.title, course.slug) == ("LMS course", "lms-course")


def test_a_text_label_names_the_course_when_the_title_is_not_text(client, lms):
    context = {"id": "course-42", "title": 5, "label": "ML-301"}
    response = lms.login_and_launch(client, roles=[INSTRUCTOR], **{services.CLAIM_CONTEXT: context})
    assert response.status_code == 302
    course = LtiContext.objects.get().course
    assert (course.title, course.slug) == ("ML-301", "ml-301")


def test_a_roster_member_whose_id_cannot_be_stored_is_skipped_not_cut_short(client, lms):
    from lti.roster import RosterSyncResult, roster_apply

    assert lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR]).status_code == 302
    context = LtiContext.objects.get()
    learner = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
    members = [
        {"user_id": "u" * 256, "roles": [learner], "given_name": "Long"},
        {"user_id": "u" * 255 + "x", "roles": [learner], "given_name": "Longer"},
        {"user_id": "n\x00ul", "roles": [learner], "given_name": "Nul"},
        {"user_id": "u" * 255, "roles": [learner], "given_name": "Fits"},
    ]
    result = RosterSyncResult()
    roster_apply(context=context, members=members, result=result)
    assert (result.members, result.skipped, result.added) == (4, 3, 1)
    assert sorted(LtiIdentity.objects.values_list("sub", flat=True)) == ["prof-1", "u" * 255]
    assert LtiIdentity.objects.get(sub="u" * 255).user.first_name == "Fits"


@pytest.mark.parametrize("roles", [None, "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor", {"role": "Instructor"}])
def test_a_launch_without_a_roles_list_is_refused(client, lms, roles):
    _, redirect = lms.login(client)
    claims = lms.claims(nonce=redirect["nonce"])
    claims.pop(services.CLAIM_ROLES)
    if roles is not None:
        claims[services.CLAIM_ROLES] = roles
    response = lms.launch(client, state=redirect["state"], id_token=lms.sign(claims))
    assert (response.status_code, message(response)) == (400, "The launch has no roles claim.")
    assert LtiIdentity.objects.count() == 0


def test_a_roles_list_of_no_text_maps_to_no_role(client, lms):
    response = lms.login_and_launch(client, roles=[1, None, {"role": "Instructor"}])
    assert (response.status_code, message(response)) == (
        403, "Your role in this LMS course has no counterpart in attnquiz "
        "(it knows instructors, teaching assistants and learners).",
    )
    assert "_auth_user_id" not in client.session


def test_an_unsigned_issuer_with_a_nul_is_refused_before_any_query(client, lms):
    """The issuer is read before the signature is checked: anyone who starts a login can send one."""
    import base64

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    _, redirect = lms.login(client)
    token = ".".join([part(b'{"alg":"RS256"}'), part(b'{"iss":"https://lms.example.edu\\u0000"}'), part(b"sig")])
    response = lms.launch(client, state=redirect["state"], id_token=token)
    assert (response.status_code, message(response)) == (
        400, "The id_token's issuer contains a NUL character (U+0000).",
    )
