"""Sign in with a username or an e-mail address.

Django's ModelBackend, looking the person up by ``user_by_identifier``; the form field is
still called ``username``, so django-axes (listed before this backend) throttles on what
was typed, whichever of the two it is."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from .selectors import user_by_identifier


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
