"""Register an LMS (an LTI 1.3 platform) and its deployments from the command line."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lti import services


class Command(BaseCommand):
    help = "Register (or update) an LTI 1.3 platform. Run again to add deployments."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--issuer", required=True, help="The platform's 'iss'.")
        parser.add_argument("--client-id", required=True)
        parser.add_argument("--login-url", required=True, help="OIDC authorisation endpoint.")
        parser.add_argument("--token-url", required=True, help="OAuth2 access token endpoint.")
        parser.add_argument("--deployment", action="append", default=[], help="Repeatable.")
        parser.add_argument("--jwks-file", help="A JSON file holding the platform's public keyset.")
        parser.add_argument(
            "--keyset-url", default="", help="Fetched when a launch uses an unknown key."
        )

    def handle(self, *args, **options):
        if not options["jwks_file"] and not options["keyset_url"]:
            raise CommandError(
                "Give --jwks-file or --keyset-url: launches are verified with the platform's keys."
            )
        jwks = None
        if options["jwks_file"]:
            try:
                jwks = json.loads(Path(options["jwks_file"]).read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"Could not read the keyset: {error}") from None
            if not isinstance(jwks, dict):
                raise CommandError('The keyset must be a JSON object {"keys": [...]}.')
        try:
            platform = services.platform_register(
                name=options["name"],
                issuer=options["issuer"],
                client_id=options["client_id"],
                auth_login_url=options["login_url"],
                auth_token_url=options["token_url"],
                deployment_ids=options["deployment"],
                jwks=jwks,
                keyset_url=options["keyset_url"],
            )
        except services.LtiRefused as refusal:
            raise CommandError(refusal.message) from None
        key = services.tool_key_ensure()
        deployments = (
            ", ".join(platform.deployments.values_list("deployment_id", flat=True)) or "none yet"
        )
        self.stdout.write(f"Registered {platform} with deployments: {deployments}.")
        self.stdout.write(
            f"attnquiz signs with key {key.kid}; see docs/lti.md for the URLs to give the LMS."
        )
