"""Sign in with a username or an e-mail address.

Django's ModelBackend, looking the person up by ``user_by_identifier``; the form field is
still called ``username``, so django-axes (listed before this backend) throttles on what
was typed, whichever of the two it is."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError

from attnquiz.prepared_reads import PreparedRead

from .selectors import user_by_identifier

# Every signed-in request reads its user: compiled once (``PreparedRead``).
_USER_BY_ID = PreparedRead(lambda *, user_id: get_user_model()._default_manager.filter(pk=user_id)[:1], user_id=int)


class UsernameOrEmailBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        User = get_user_model()
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        user = user_by_identifier(identifier=username)
        if user is None:
            # Hash anyway, so a missing account takes as long as a wrong password.
            User().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None

    def get_user(self, user_id):
        """ModelBackend's: the active user of the session's id, None for any other."""
        try:
            user_id = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        if not isinstance(user_id, int):
            return None
        user = _USER_BY_ID.first(user_id=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
