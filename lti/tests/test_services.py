"""Role mapping, registration and key handling."""

import json

import pytest
from django.core.management import CommandError, call_command

from lti import selectors, services
from lti.models import Platform, ToolKey

M = "http://purl.imsglobal.org/vocab/lis/v2/membership"
INSTITUTION = "http://purl.imsglobal.org/vocab/lis/v2/institution/person"


@pytest.mark.parametrize(
    "roles, expected",
    [
        ([f"{M}#Instructor"], "instructor"),
        ([f"{M}/Instructor#PrimaryInstructor"], "instructor"),
        ([f"{M}#Administrator"], "instructor"),
        ([f"{M}/Administrator#Developer"], "instructor"),
        ([f"{M}/Instructor#TeachingAssistant"], "ta"),
        ([f"{M}/Instructor#TeachingAssistant", f"{M}#Instructor"], "instructor"),
        ([f"{M}#Learner"], "student"),
        ([f"{M}/Learner#NonCreditLearner"], "student"),
        ([f"{M}#Learner", f"{M}/Instructor#TeachingAssistant"], "ta"),
        ([f"{INSTITUTION}#Student", f"{M}#Learner"], "student"),
        (["Instructor"], "instructor"),
        (["Learner"], "student"),
        ([f"{INSTITUTION}#Administrator"], None),  # an admin of the university, not of this course
        ([f"{INSTITUTION}#Instructor"], None),
        ([f"{M}#Mentor"], None),
        (["urn:lti:role:ims/lis/Instructor"], None),
        ([], None),
    ],
)
def test_role_mapping(roles, expected):
    assert services.role_from_lti_roles(roles) == expected


def test_key_rotation_keeps_the_old_key_published(db, capsys):
    call_command("lti_keys")
    first = ToolKey.objects.get()
    call_command("lti_keys", "--rotate")
    second = ToolKey.objects.exclude(pk=first.pk).get()
    assert selectors.tool_key_signing() == second
    assert [k["kid"] for k in selectors.tool_jwks()["keys"]] == [second.kid, first.kid]
    call_command("lti_keys", "--unpublish", first.kid)
    assert [k["kid"] for k in selectors.tool_jwks()["keys"]] == [second.kid]
    with pytest.raises(CommandError, match="No key with kid 'nope'."):
        call_command("lti_keys", "--unpublish", "nope")


def test_add_platform_command_is_idempotent_and_adds_deployments(db, tmp_path):
    keyset = tmp_path / "jwks.json"
    keyset.write_text(json.dumps({"keys": []}))
    arguments = [
        "--name",
        "Moodle",
        "--issuer",
        "https://moodle.example.edu",
        "--client-id",
        "abc",
        "--login-url",
        "https://moodle.example.edu/mod/lti/auth.php",
        "--token-url",
        "https://moodle.example.edu/mod/lti/token.php",
        "--jwks-file",
        str(keyset),
    ]
    call_command("lti_add_platform", *arguments, "--deployment", "1")
    call_command("lti_add_platform", *arguments, "--deployment", "2")
    platform = Platform.objects.get()
    assert sorted(platform.deployments.values_list("deployment_id", flat=True)) == ["1", "2"]
    assert platform.jwks == {"keys": []}
    assert ToolKey.objects.count() == 1


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "Give --jwks-file or --keyset-url: launches are verified with the platform's keys."),
        (["--jwks-file", "/nonexistent.json"], "Could not read the keyset: "),
    ],
)
def test_add_platform_command_refuses_without_usable_keys(db, extra, message):
    with pytest.raises(CommandError, match=message):
        call_command(
            "lti_add_platform",
            "--name",
            "X",
            "--issuer",
            "https://x",
            "--client-id",
            "c",
            "--login-url",
            "https://x/auth",
            "--token-url",
            "https://x/token",
            *extra,
        )
    assert Platform.objects.count() == 0


@pytest.mark.parametrize(
    "claims, expected",
    [
        ({"given_name": "Ada", "family_name": "Lovelace", "name": "Ada Lovelace", "email": "ada@x.edu"},
         {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@x.edu"}),
        # Only the full name (what attnquiz's dynamic registration asks for): split at the last space.
        ({"name": "Grace Brewster Hopper"}, {"first_name": "Grace Brewster", "last_name": "Hopper"}),
        ({"name": "Plato"}, {"first_name": "Plato", "last_name": ""}),
        ({"name": "  Ada \n Lovelace\x00 "}, {"first_name": "Ada", "last_name": "Lovelace"}),
        ({"given_name": "Ada"}, {"first_name": "Ada"}),
        # No name at all: the username the platform prefers, so nobody is shown nameless.
        ({"preferred_username": "alovelace", "email": "not an address"}, {"first_name": "alovelace"}),
        ({"name": "Ada Lovelace", "preferred_username": "alovelace"}, {"first_name": "Ada", "last_name": "Lovelace"}),
        ({"given_name": 7, "name": ["x"], "email": None}, {}),
        ({}, {}),
        # Invisible characters are dropped as from every other source of names (a
        # right-to-left override, a zero-width space, a Hangul filler, a variation selector);
        # a Persian name keeps the non-joiner it is spelled with.
        ({"given_name": "\u202eAda", "family_name": "Love\u200blace\u3164"},
         {"first_name": "Ada", "last_name": "Lovelace"}),
        ({"name": "Ada\ufe0f \u115fLovelace"}, {"first_name": "Ada", "last_name": "Lovelace"}),
        ({"given_name": "Ali", "family_name": "\u0639\u0644\u06cc\u200c\u067e\u0648\u0631"},
         {"first_name": "Ali", "last_name": "\u0639\u0644\u06cc\u200c\u067e\u0648\u0631"}),
    ],
)
def test_names_from_the_standard_claims(claims, expected):
    assert services.names_from_claims(claims) == expected


def test_names_are_updated_on_every_launch(db):
    platform = Platform.objects.create(issuer="https://lms.example", client_id="c1")
    user = services.lti_user_ensure(platform=platform, sub="u1", claims={"name": "Ada Byron"})
    assert (user.first_name, user.last_name, user.email) == ("Ada", "Byron", "")
    again = services.lti_user_ensure(
        platform=platform, sub="u1", claims={"given_name": "Ada", "family_name": "Lovelace", "email": "ada@x.edu"}
    )
    assert again.pk == user.pk
    again.refresh_from_db()
    assert (again.first_name, again.last_name, again.email) == ("Ada", "Lovelace", "ada@x.edu")
    # A launch that leaves the claims out keeps what is known.
    services.lti_user_ensure(platform=platform, sub="u1", claims={})
    again.refresh_from_db()
    assert (again.first_name, again.last_name) == ("Ada", "Lovelace")
