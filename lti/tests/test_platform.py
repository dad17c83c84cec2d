"""attnquiz against an independent platform (``lti1p3platform``, see ``lms_platform.py``).

The test client plays the browser; the platform is a real HTTP server on 127.0.0.1, and
every service call attnquiz makes (keys, tokens, line items, scores, roster, dynamic
registration) goes to it over HTTP: OIDC login → deep linking → launch as learner and
instructor → score passback into the platform's line item → roster sync.
"""

from __future__ import annotations

import re
import urllib.parse

import pytest
import requests

from courses.models import Assignment, Enrolment
from lti.models import LtiContext, Passback, Platform, ResourceLink
from lti.selectors import tool_jwks
from lti.services import tool_key_ensure

from .conftest import correct_answer
from .lms_platform import INSTRUCTOR, LEARNER, LmsPlatform, form_fields

EXERCISE = "attention-weights-one-query"


@pytest.fixture
def testlms(demo):
    platform = LmsPlatform(tool_url="http://testserver")
    platform.add_user("prof", given="Grace", family="Hopper", roles=[INSTRUCTOR])
    for key, given in (("ada", "Ada"), ("bob", "Bob"), ("cyd", "Cyd")):
        platform.add_user(key, given=given, family="Student", roles=[LEARNER])
    platform.add_context(
        "ml-301", title="Machine Learning 301", label="ML-301",
        members=["prof", "ada", "bob", "cyd"],
    )
    platform.register_in_attnquiz()
    tool_key_ensure()
    platform.trust_tool_keys(tool_jwks())
    yield platform
    platform.stop()


def launch(client, platform: LmsPlatform, *, user: str, hint: str):
    """Browser round trip: LMS → /lti/login/ → the LMS's /auth (over HTTP) → /lti/launch/."""
    login = urllib.parse.urlsplit(platform.login_url(user=user, hint=hint))
    response = client.get(login.path + "?" + login.query)
    assert response.status_code == 302, response.content
    authorize = response["Location"]
    assert authorize.startswith(platform.url + "/auth?")
    page = requests.get(authorize, timeout=10)
    assert page.status_code == 200, page.text
    action = re.search(r'action="([^"]+)"', page.text).group(1)
    assert action == "http://testserver/lti/launch/"
    return client.post("/lti/launch/", form_fields(page.text))


def deep_link(client, platform, django_capture_on_commit_callbacks, *, post_back=True, **choice):
    with django_capture_on_commit_callbacks(execute=True):  # the roster sync after commit
        response = launch(client, platform, user="prof", hint="deeplink:ml-301")
    assert response.status_code == 302
    picker = response["Location"]
    assert re.fullmatch(r"/lti/deep-link/[\w-]+/", picker)
    assert client.get(picker).status_code == 200
    answer = client.post(picker, choice)
    assert answer.status_code == 200, answer.content
    if post_back:  # what the auto-submitting form does in a browser
        back = requests.post(
            platform.url + "/deep_link_return", data=form_fields(answer.content.decode()),
            timeout=10,
        )
        assert back.status_code == 200, back.text
    return answer


def test_deep_linking_launches_and_passback_through_the_platform(
    client, testlms, django_capture_on_commit_callbacks
):
    answer = deep_link(
        client, testlms, django_capture_on_commit_callbacks, post_back=False,
        pick="exercise", exercise=EXERCISE,
    )
    page = answer.content.decode()
    assert f'action="{testlms.url}/deep_link_return"' in page
    assert "<script" not in page.split("</head>")[1]  # the form is posted by a static file
    assert "/static/lti/autosubmit.js" in page
    policy = answer["Content-Security-Policy"]
    assert re.search(r"form-action 'self' " + re.escape(testlms.url) + r"(;|$)", policy)
    assert "script-src 'self'" in policy

    # The platform verifies the response with attnquiz's published key, adds the link.
    back = requests.post(testlms.url + "/deep_link_return", data=form_fields(page), timeout=10)
    assert back.status_code == 200, back.text
    assignment = Assignment.objects.get(title="Attention weights and context vector for one query")
    (item,) = testlms.deep_link_items
    assert item == {
        "type": "ltiResourceLink",
        "title": assignment.title,
        "url": "http://testserver/lti/launch/",
        "custom": {"assignment": assignment.slug},
        "lineItem": {
            "scoreMaximum": 1.0,
            "label": assignment.title,
            "resourceId": f"attnquiz-assignment-{assignment.pk}",
            "tag": "attnquiz",
        },
    }
    link = testlms.links["dl-link-1"]
    assert testlms.lineitems["1"]["scoreMaximum"] == 1.0

    # The instructor's launch synced the roster: NRPS pages of two, rel="next" followed.
    course = LtiContext.objects.get(context_id="ml-301").course
    roster = {
        e.user.email: (e.role, e.status, e.source)
        for e in Enrolment.objects.filter(course=course).select_related("user")
    }
    assert roster == {
        "prof@testlms.example": ("instructor", "active", "lms"),
        "ada@testlms.example": ("student", "active", "lms"),
        "bob@testlms.example": ("student", "active", "lms"),
        "cyd@testlms.example": ("student", "active", "lms"),
    }
    memberships = [p for m, p in testlms.requests if p.endswith("/memberships")]
    assert len(memberships) == 2

    # A learner launches the new link and lands on the assignment.
    from django.test import Client

    learner = Client()
    response = launch(learner, testlms, user="ada", hint=f"link:{link.resource_link_id}")
    assert response.status_code == 302
    assert response["Location"] == f"/courses/{course.slug}/assignments/{assignment.slug}/"
    resource_link = ResourceLink.objects.get(resource_link_id="dl-link-1")
    assert resource_link.lineitem_url == link.lineitem_id
    assert resource_link.assignment == assignment

    # Their score reaches the platform's line item.
    from exercises.services import variant_get_or_create_for_item
    from grading import services as grading_services

    ada = Enrolment.objects.get(course=course, user__email="ada@testlms.example").user
    variant = variant_get_or_create_for_item(item=assignment.items.get(), student=ada)
    with django_capture_on_commit_callbacks(execute=True):
        grading_services.submission_create(
            variant=variant, student=ada, part="weights",
            raw_answer=correct_answer(variant, "weights"),
        )
    (score,) = testlms.scores_for(link.lineitem_id)
    assert {k: score[k] for k in ("userId", "scoreGiven", "scoreMaximum", "gradingProgress",
                                  "activityProgress")} == {
        "userId": "user-ada",
        "scoreGiven": 0.5,
        "scoreMaximum": 1.0,
        "gradingProgress": "FullyGraded",
        "activityProgress": "InProgress",
    }
    assert Passback.objects.get().status == "sent"

    # The instructor's launch of the same link opens the assignment too.
    response = launch(client, testlms, user="prof", hint=f"link:{link.resource_link_id}")
    assert response["Location"] == f"/courses/{course.slug}/assignments/{assignment.slug}/"


def test_roster_sync_on_demand_drops_who_left_and_keeps_their_work(
    client, testlms, django_capture_on_commit_callbacks
):
    deep_link(client, testlms, django_capture_on_commit_callbacks, pick="exercise",
              exercise=EXERCISE)
    course = LtiContext.objects.get(context_id="ml-301").course
    testlms.contexts["ml-301"]["members"]["cyd"] = "Inactive"
    del testlms.contexts["ml-301"]["members"]["bob"]
    testlms.add_user("dee", given="Dee", family="New", roles=[LEARNER])
    testlms.contexts["ml-301"]["members"]["dee"] = "Active"
    page = client.get(f"/lti/courses/{course.slug}/")
    assert page.status_code == 200
    context = LtiContext.objects.get(context_id="ml-301")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/lti/courses/{course.slug}/", {"action": "sync", "context": context.pk}
        )
    assert response.status_code == 302
    statuses = dict(
        Enrolment.objects.filter(course=course).values_list("user__email", "status")
    )
    assert statuses == {
        "prof@testlms.example": "active",
        "ada@testlms.example": "active",
        "bob@testlms.example": "dropped",
        "cyd@testlms.example": "dropped",
        "dee@testlms.example": "active",
    }
    context.refresh_from_db()
    assert context.roster_sync_error == "" and context.roster_synced_at is not None


def test_a_copied_lms_course_maps_to_an_existing_course_and_shares_the_assignment(
    client, testlms, django_capture_on_commit_callbacks
):
    deep_link(client, testlms, django_capture_on_commit_callbacks, pick="exercise",
              exercise=EXERCISE)
    course = LtiContext.objects.get(context_id="ml-301").course
    assignment = course.assignments.get()
    # Next term the LMS copies the course: new context id, the link copied with its custom
    # parameter and a line item of its own.
    testlms.add_context("ml-301-spring", title="Machine Learning 301 (Spring)",
                        label="ML-301-S", members=["prof", "ada"])
    copy = testlms.add_link("copied-link", context_id="ml-301-spring", title="Week 1",
                            custom={"assignment": assignment.slug}, score_maximum=1.0)
    response = launch(client, testlms, user="prof", hint="link:copied-link")
    assert response.status_code == 302
    choice = response["Location"]
    assert choice.startswith("/lti/choose-course/")
    page = client.get(choice).content.decode()
    assert "Machine Learning 301 (Spring)" in page and f'value="{course.slug}"' in page
    response = client.post(choice, {"course": course.slug})
    assert response.status_code == 302
    assert response["Location"] == f"/courses/{course.slug}/assignments/{assignment.slug}/"
    contexts = dict(LtiContext.objects.values_list("context_id", "course__slug"))
    assert contexts == {"ml-301": course.slug, "ml-301-spring": course.slug}

    # A score of a student in both LMS courses goes to both line items.
    from exercises.services import variant_get_or_create_for_item
    from grading import services as grading_services

    first = testlms.links["dl-link-1"]
    from django.test import Client

    launch(Client(), testlms, user="ada", hint="link:dl-link-1")
    ada = Enrolment.objects.get(course=course, user__email="ada@testlms.example").user
    variant = variant_get_or_create_for_item(item=assignment.items.get(), student=ada)
    with django_capture_on_commit_callbacks(execute=True):
        grading_services.submission_create(
            variant=variant, student=ada, part="weights",
            raw_answer=correct_answer(variant, "weights"),
        )
    assert [s["scoreGiven"] for s in testlms.scores_for(first.lineitem_id)] == [0.5]
    assert [s["scoreGiven"] for s in testlms.scores_for(copy.lineitem_id)] == [0.5]
    assert sorted(Passback.objects.values_list("link__resource_link_id", "status")) == [
        ("copied-link", "sent"),
        ("dl-link-1", "sent"),
    ]


def test_a_new_lms_course_can_become_a_new_course_by_choice(
    client, testlms, django_capture_on_commit_callbacks
):
    deep_link(client, testlms, django_capture_on_commit_callbacks, pick="exercise",
              exercise=EXERCISE)
    testlms.add_context("stats-200", title="Statistics 200", label="STAT-200", members=["prof"])
    testlms.add_link("stats-link", context_id="stats-200", title="Intro")
    response = launch(client, testlms, user="prof", hint="link:stats-link")
    response = client.post(response["Location"], {"course": "new"})
    assert response.status_code == 302
    context = LtiContext.objects.get(context_id="stats-200")
    assert (context.course.title, context.course.slug) == ("Statistics 200", "stat-200")
    assert response["Location"] == f"/lti/links/{ResourceLink.objects.get(resource_link_id='stats-link').pk}/"


def test_deep_linking_creates_an_assignment_from_the_bank(
    client, testlms, django_capture_on_commit_callbacks
):
    answer = deep_link(
        client, testlms, django_capture_on_commit_callbacks,
        pick="new", title="Scaling week", exercises=[EXERCISE, "score-variance"],
    )
    assignment = Assignment.objects.get(title="Scaling week")
    assert list(
        assignment.items.order_by("position").values_list(
            "exercise_version__exercise__slug", flat=True
        )
    ) == [EXERCISE, "score-variance"]
    assert answer.context["assignment"] == assignment
    assert testlms.deep_link_items[0]["lineItem"]["scoreMaximum"] == 2.0


@pytest.mark.parametrize(
    "choice, message",
    [
        ({"pick": "new", "title": "Empty", "exercises": []}, "Pick at least one exercise."),
        ({"pick": "exercise", "exercise": "no-such"}, "No published exercise is called 'no-such'."),
        ({"pick": "assignment", "assignment": "nope"}, "Pick one of this course's assignments."),
        ({"pick": "other"}, "Pick an assignment, an exercise or a new assignment."),
    ],
)
def test_bad_picks_are_refused_with_a_reason(
    client, testlms, django_capture_on_commit_callbacks, choice, message
):
    with django_capture_on_commit_callbacks(execute=True):
        response = launch(client, testlms, user="prof", hint="deeplink:ml-301")
    answer = client.post(response["Location"], choice)
    assert answer.status_code == 400
    assert answer.context["error"] == message


def test_a_learner_cannot_deep_link(client, testlms):
    response = launch(client, testlms, user="ada", hint="deeplink:ml-301")
    assert response.status_code == 403
    assert response.context["message"] == "Only the course's instructors can add attnquiz content."


def test_dynamic_registration_with_the_platform(client, db):
    from lti import registration

    platform = LmsPlatform(tool_url="http://testserver")
    try:
        token = registration.registration_token_create(note="test")
        query = {
            "t": token,
            "openid_configuration": platform.url + "/.well-known/openid-configuration",
            "registration_token": platform.registration_token,
        }
        page = client.get("/lti/register/", query)
        assert page.status_code == 200
        done = client.post("/lti/register/", query)
        assert done.status_code == 200, done.content
        assert "/static/lti/registration_done.js" in done.content.decode()
        stored = Platform.objects.get()
        assert (stored.issuer, stored.client_id, stored.auth_login_url, stored.auth_token_url,
                stored.keyset_url) == (
            platform.issuer, platform.client_id, platform.url + "/auth",
            platform.url + "/token", platform.url + "/jwks",
        )
        assert list(stored.deployments.values_list("deployment_id", flat=True)) == [
            platform.deployment_id
        ]
        assert stored.jwks == platform.conf.get_jwks()
        (sent,) = platform.registrations
        tool = sent["https://purl.imsglobal.org/spec/lti-tool-configuration"]
        assert (sent["initiate_login_uri"], sent["jwks_uri"], sent["redirect_uris"]) == (
            "http://testserver/lti/login/", "http://testserver/lti/jwks/",
            ["http://testserver/lti/launch/"],
        )
        assert sent["token_endpoint_auth_method"] == "private_key_jwt"
        assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in sent["scope"].split()
        assert tool["domain"] == "testserver"
        assert tool["messages"][0]["type"] == "LtiDeepLinkingRequest"
    finally:
        platform.stop()


@pytest.mark.parametrize(
    "token, status, message",
    [
        ("forged", 403, "This is not a registration link handed out by attnquiz's admin "
                        "(run `manage.py lti_registration_url`)."),
        (None, 400, "The LMS sent no openid_configuration URL; start the registration from the LMS."),
    ],
)
def test_dynamic_registration_needs_a_registration_link(client, db, token, status, message):
    from lti import registration

    query = {"t": token or registration.registration_token_create()}
    if token:
        query["openid_configuration"] = "https://lms.example/.well-known/openid-configuration"
    response = client.get("/lti/register/", query)
    assert response.status_code == status
    assert response.context["message"] == message


def test_dynamic_registration_refuses_a_configuration_from_another_issuer(client, db):
    from lti import registration

    platform = LmsPlatform(tool_url="http://testserver")
    platform.issuer = "https://elsewhere.example"
    try:
        response = client.post("/lti/register/", {
            "t": registration.registration_token_create(),
            "openid_configuration": platform.url + "/.well-known/openid-configuration",
            "registration_token": platform.registration_token,
        })
        assert response.status_code == 502
        assert "names issuer 'https://elsewhere.example'" in response.context["message"]
        assert Platform.objects.count() == 0 and platform.registrations == []
    finally:
        platform.stop()


def test_a_registration_link_registers_one_platform(client, db):
    """A link someone else saw (a forwarded e-mail, a browser history) adds no second platform;
    a registration the LMS refused leaves the link usable."""
    from lti import registration

    token = registration.registration_token_create(note="once")
    refusing = LmsPlatform(tool_url="http://testserver")
    refusing.issuer = "https://elsewhere.example"
    try:
        refused = client.post("/lti/register/", {
            "t": token, "openid_configuration": refusing.url + "/.well-known/openid-configuration",
            "registration_token": refusing.registration_token,
        })
        assert refused.status_code == 502
    finally:
        refusing.stop()
    platform = LmsPlatform(tool_url="http://testserver")
    try:
        query = {
            "t": token, "openid_configuration": platform.url + "/.well-known/openid-configuration",
            "registration_token": platform.registration_token,
        }
        assert client.post("/lti/register/", query).status_code == 200
        for again in (client.get("/lti/register/", query), client.post("/lti/register/", query)):
            assert again.status_code == 403
            assert again.context["message"] == (
                "This registration link has been used already; ask the attnquiz admin for a new one."
            )
        assert Platform.objects.count() == 1 and len(platform.registrations) == 1
    finally:
        platform.stop()
