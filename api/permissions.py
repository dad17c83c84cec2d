"""What a token's scope allows: a read token may only read."""

from rest_framework import permissions

from .models import ApiToken


class TokenScopeAllows(permissions.BasePermission):
    message = "This token may only read; create a read and write token to change anything."

    def has_permission(self, request, view):
        if request.method in permissions.SAFE_METHODS or getattr(view, "read_only_action", False):
            return True
        token = request.auth
        return not isinstance(token, ApiToken) or token.can_write
