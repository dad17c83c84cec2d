"""A fake LMS for the LTI tests: its own RSA key, a registration, and signed id_tokens."""

from __future__ import annotations

import time
import urllib.parse
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from lti import services
from lti.models import Platform

ISSUER = "https://lms.example.edu"
CLIENT_ID = "attnquiz-client-7"
DEPLOYMENT_ID = "deployment-1"
PLATFORM_KID = "lms-key-2025"
LAUNCH_URL = "http://testserver/lti/launch/"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
]


@pytest.fixture(scope="session")
def platform_private_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="session")
def other_private_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class FakePlatform:
    """Plays the LMS: starts logins, answers them with signed id_tokens."""

    def __init__(self, platform: Platform, private_key):
        self.platform = platform
        self.private_key = private_key

    def login(self, client, **params):
        """Third-party login initiation; returns (response, query of the redirect)."""
        query = {
            "iss": ISSUER,
            "login_hint": "opaque-login-hint",
            "target_link_uri": LAUNCH_URL,
            "lti_message_hint": "opaque-message-hint",
            "client_id": CLIENT_ID,
            "lti_deployment_id": DEPLOYMENT_ID,
            **params,
        }
        query = {k: v for k, v in query.items() if v is not None}
        response = client.post("/lti/login/", query)
        redirect = {}
        if response.status_code == 302:
            redirect = dict(
                urllib.parse.parse_qsl(urllib.parse.urlsplit(response["Location"]).query)
            )
        return response, redirect

    def claims(
        self,
        *,
        nonce: str,
        sub="lms-user-1",
        roles=(LEARNER,),
        context_id="course-42",
        link_id="link-9",
        custom=None,
        **overrides,
    ) -> dict:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": CLIENT_ID,
            "sub": sub,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "given_name": "Ada",
            "family_name": "Lovelace",
            "email": f"{sub}@example.edu",
            services.CLAIM_MESSAGE_TYPE: "LtiResourceLinkRequest",
            services.CLAIM_VERSION: "1.3.0",
            services.CLAIM_DEPLOYMENT_ID: DEPLOYMENT_ID,
            "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": LAUNCH_URL,
            services.CLAIM_RESOURCE_LINK: {"id": link_id, "title": "Week 3: attention weights"},
            services.CLAIM_CONTEXT: {
                "id": context_id,
                "label": "ML-301",
                "title": "Machine Learning 301",
            },
            services.CLAIM_ROLES: list(roles),
            services.CLAIM_AGS_ENDPOINT: {
                "scope": AGS_SCOPES,
                "lineitems": "http://127.0.0.1:9/api/lti/courses/42/line_items",
                "lineitem": "http://127.0.0.1:9/api/lti/courses/42/line_items/7",
            },
        }
        if custom is not None:
            claims[services.CLAIM_CUSTOM] = custom
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def sign(self, claims: dict, *, key=None, kid=PLATFORM_KID, algorithm="RS256") -> str:
        key = key if key is not None else self.private_key
        return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": kid})

    def launch(self, client, *, state: str, id_token: str):
        return client.post("/lti/launch/", {"state": state, "id_token": id_token})

    def login_and_launch(self, client, **claim_args):
        """The whole round trip; returns the launch response."""
        _, redirect = self.login(client)
        token = self.sign(self.claims(nonce=redirect["nonce"], **claim_args))
        return self.launch(client, state=redirect["state"], id_token=token)


def public_jwks(private_key, kid=PLATFORM_KID) -> dict:
    jwk = RSAAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
    return {"keys": [{**jwk, "kid": kid, "alg": "RS256", "use": "sig"}]}


@pytest.fixture
def lms(db, platform_private_key):
    platform = services.platform_register(
        name="Example University LMS",
        issuer=ISSUER,
        client_id=CLIENT_ID,
        auth_login_url="https://lms.example.edu/api/lti/authorize_redirect",
        auth_token_url="https://lms.example.edu/login/oauth2/token",
        deployment_ids=[DEPLOYMENT_ID],
        jwks=public_jwks(platform_private_key),
    )
    return FakePlatform(platform, platform_private_key)


def unique() -> str:
    return uuid.uuid4().hex


WORKED_EXAMPLE = "attention-weights-one-query"
STUDENT_SUB = "lms-student-17"


@pytest.fixture
def linked(demo, lms):
    """An LMS-linked assignment holding the worked example (4 points), and one student.

    The link has no line item yet, so nothing is passed back until a test sets one.
    """
    from types import SimpleNamespace

    from django.contrib.auth import get_user_model

    from courses.models import Assignment, AssignmentItem, Course
    from courses.services import enrolment_ensure
    from exercises.services import variant_get_or_create_for_item
    from lti.models import LtiIdentity, ResourceLink

    version = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    ).exercise_version
    course = Course.objects.create(slug="ml-301", title="Machine Learning 301")
    context = lms.platform.contexts.create(context_id="course-42", course=course)
    assignment = Assignment.objects.create(course=course, slug="week-3", title="Week 3")
    item = AssignmentItem.objects.create(assignment=assignment, exercise_version=version, points=4)
    student = get_user_model().objects.create(username="lti-student")
    enrolment_ensure(course=course, user=student, role="student")
    identity = LtiIdentity.objects.create(platform=lms.platform, sub=STUDENT_SUB, user=student)
    link = ResourceLink.objects.create(
        platform=lms.platform,
        resource_link_id="link-9",
        context=context,
        assignment=assignment,
        ags_scopes=AGS_SCOPES,
    )
    variant = variant_get_or_create_for_item(item=item, student=student)
    return SimpleNamespace(
        course=course,
        assignment=assignment,
        item=item,
        student=student,
        identity=identity,
        link=link,
        variant=variant,
        platform=lms.platform,
    )


def correct_answer(variant, part: str) -> str:
    import numpy as np

    from exercises import engine

    spec = engine.spec_from_json(variant.exercise_version.spec)
    row = np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float).ravel()
    return "[" + ", ".join(f"{value:.4f}" for value in row) + "]"


@pytest.fixture
def answer(django_capture_on_commit_callbacks):
    """Submit an answer and run what follows the commit (inline grading, then passback)."""
    from grading import services as grading_services

    def submit(linked, part: str, raw_answer: str | None = None):
        raw = raw_answer if raw_answer is not None else correct_answer(linked.variant, part)
        with django_capture_on_commit_callbacks(execute=True):
            return grading_services.submission_create(
                variant=linked.variant, student=linked.student, part=part, raw_answer=raw
            )

    return submit
