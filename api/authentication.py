"""``Authorization: Bearer aq_…``: personal API tokens for DRF."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from . import selectors, services


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Send the token as 'Authorization: Bearer <token>'.")
        try:
            secret = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("That is not an attnquiz API token.")
        token, problem = selectors.api_token_find(secret=secret)
        if token is None:
            raise exceptions.AuthenticationFailed(problem)
        services.api_token_touch(token=token)
        return token.user, token

    def authenticate_header(self, request):
        return f'{self.keyword} realm="api"'
